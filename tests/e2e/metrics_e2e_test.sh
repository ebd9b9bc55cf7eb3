#!/usr/bin/env bash
# The daemon's real /metrics over HTTP: promtool lint, the same numbers as
# --once on the same capture, and the degraded live mode of a host without
# amdkfd (self-metrics only) still serving lint-clean metrics.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
CAP=$SRC/examples/default.gpuqcap

if ! command -v promtool > /dev/null; then
  echo "promtool missing: install Debian's prometheus package"
  exit 1
fi


# start_daemon PORT ARGS...: starts the agent, waits for /metrics.
start_daemon() {
  local port=$1
  shift
  start_bg "$AGENT" --web.listen-address "127.0.0.1:$port" "$@" > /dev/null 2>&1
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/metrics" > /dev/null && return 0
    sleep 0.1
  done
  return 1
}

# Wait until the replay finished: events_total stops moving (78 records).
scrape() { curl -sf "http://127.0.0.1:$1/metrics"; }

port=$(free_port)
if start_daemon "$port" --replay "$CAP"; then pass "daemon serves /metrics on a replay"; else fail "daemon did not serve /metrics"; fi
for _ in $(seq 50); do
  scrape "$port" | grep -q '^gpuq_events_total{type="queue_create"} 53$' && break
  sleep 0.1
done
body=$(scrape "$port")
lint=$(printf '%s\n' "$body" | promtool check metrics 2>&1); rc=$?
if [ $rc = 0 ]; then pass "promtool check metrics: replay daemon"; else fail "promtool check metrics: replay daemon (rc $rc)" "$lint"; fi

# The same numbers through /metrics and --once: both render Collect().
run "$AGENT" --once --replay "$CAP" --output prometheus
gpuq_only() { grep '^gpuq_' | sort; }
if diff <(printf '%s\n' "$body" | gpuq_only) <(printf '%s\n' "$OUT" | gpuq_only) > "$TMP/e2e.diff"; then
  pass "/metrics and --once serve the same gpuq series"
else
  fail "/metrics and --once differ" "$(head -20 "$TMP/e2e.diff")"
fi
if printf '%s\n' "$body" | grep -q '^exposer_'; then pass "prometheus-cpp's own exposer metrics are served"; else fail "no exposer_ metrics"; fi

# Live mode on a host without amdkfd: one clear warning, self-metrics served.
if [ -e /sys/class/kfd/kfd ]; then
  skip "degraded live daemon: this machine has amdkfd"
else
  port=$(free_port)
  log=$TMP/live.log
  start_bg "$AGENT" --web.listen-address "127.0.0.1:$port" > /dev/null 2> "$log"
  for _ in $(seq 100); do scrape "$port" > /dev/null && break; sleep 0.1; done
  body=$(scrape "$port")
  if [ -n "$body" ]; then pass "live daemon without amdkfd keeps serving"; else fail "live daemon without amdkfd serves nothing" "$(cat "$log")"; fi
  if grep -q "amdkfd is not present.*self-metrics only" "$log"; then pass "live daemon says why it is degraded"; else fail "no degradation warning" "$(cat "$log")"; fi
  lint=$(printf '%s\n' "$body" | promtool check metrics 2>&1); rc=$?
  if [ $rc = 0 ]; then pass "promtool check metrics: degraded live daemon"; else fail "promtool: degraded live daemon (rc $rc)" "$lint"; fi
  for probe in queue_create create_ioctl queue_destroy process_exit; do
    if printf '%s\n' "$body" | grep -q "^gpuq_probe_attached{probe=\"$probe\",mode=\"none\",tier=\"none\"} 0$"; then
      pass "probe $probe reported as not attached"
    else
      fail "probe $probe status missing"
    fi
  done
fi
summary

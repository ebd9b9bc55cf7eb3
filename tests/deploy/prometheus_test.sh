#!/usr/bin/env bash
# Real Prometheus (Debian's package, on the host) scrapes real agents, and
# every query of every panel of dashboards/gpuq.json, with its variables set
# to match-all (.*), returns at least one series. Three agents are scraped:
#   replay  - the bundled capture (queue inventory, lifecycle, GPUs);
#   pair    - the users' experiment (gpuq-gen-capture --scenario
#             pair-oversubscribed, GPUQ_GEN_CAPTURE): a high-priority and a
#             CU-masked queue, which the bundled capture has not;
#   fixture - live mode on tests/fixtures/root (sysfs inventory): the only
#             source of gpuq_probe_attached series and the reconciliation
#             families, which a replay does not export.
# Also: honor_labels keeps the agent's own namespace/pod/container labels
# (what deploy/kubernetes/prometheus-operator/servicemonitor.yaml relies on).
# Usage: prometheus_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
use_background_cleanup

missing=$(missing_of prometheus curl)
have_pyyaml || missing="$missing python3-yaml"
if [ -n "$missing" ]; then
  skip "real Prometheus scrape of the dashboard queries: missing $missing (Debian: prometheus curl python3-yaml)"
  summary
  exit
fi

start_agent() { # PORT ARGS...
  local port=$1
  shift
  start_bg "$AGENT" --web.listen-address "127.0.0.1:$port" "$@" > "$TMP/agent-$port.log" 2>&1
  wait_http "http://127.0.0.1:$port/metrics" 100
}
replay_port=$(free_port)
if start_agent "$replay_port" --replay "$SRC/examples/default.gpuqcap"; then
  pass "replay agent serves /metrics"
else
  fail "replay agent did not start" "$(cat "$TMP"/agent-*.log)"
fi
pair_port=$(free_port)
if [ ! -x "${GPUQ_GEN_CAPTURE:-}" ]; then
  fail "GPUQ_GEN_CAPTURE (gpuq-gen-capture) not given: '${GPUQ_GEN_CAPTURE:-}'"
elif ! "$GPUQ_GEN_CAPTURE" --scenario pair-oversubscribed -o "$TMP/pair.gpuqcap" > "$TMP/gen.log" 2>&1; then
  fail "gpuq-gen-capture --scenario pair-oversubscribed" "$(cat "$TMP/gen.log")"
elif start_agent "$pair_port" --replay "$TMP/pair.gpuqcap"; then
  pass "pair replay agent serves /metrics"
else
  fail "pair replay agent did not start" "$(cat "$TMP"/agent-*.log)"
fi
fixture_port=$(free_port)
if start_agent "$fixture_port" --host-root "$SRC/tests/fixtures/root" --reconcile-interval 1s; then
  pass "fixture-host live agent serves /metrics"
else
  fail "fixture-host live agent did not start" "$(cat "$TMP"/agent-*.log)"
fi

prom_port=$(free_port)
cat > "$TMP/prometheus.yml" << YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpuq
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$replay_port']
        labels: {agent: replay}
      - targets: ['127.0.0.1:$pair_port']
        labels: {agent: pair}
      - targets: ['127.0.0.1:$fixture_port']
        labels: {agent: fixture}
  # What the operator does to a pod target: namespace/pod/container of the
  # agent's own pod as target labels. honor_labels must keep the workload's.
  - job_name: gpuq-k8s-labels
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$replay_port']
        labels: {namespace: gpuq-system, pod: gpuq-agent-x1, container: gpuq-agent}
YAML
run promtool check config "$TMP/prometheus.yml"
expect_rc "promtool check config: the test's scrape config" 0
start=$(date +%s.%N)
start_bg prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
  --web.listen-address="127.0.0.1:$prom_port" > "$TMP/prometheus.log" 2>&1
if wait_http "http://127.0.0.1:$prom_port/-/ready" 100; then pass "prometheus is ready"; else fail "prometheus not ready" "$(tail -5 "$TMP/prometheus.log")"; fi

# query EXPR: prints the number of series in the result (-1 on error).
query() {
  curl -s -G --data-urlencode "query=$1" "http://127.0.0.1:$prom_port/api/v1/query" |
    "$PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print(len(d["data"]["result"]) if d.get("status") == "success" else -1)
except Exception:
    print(-1)'
}
# Rates need two samples of every target in the window: wait for the third
# scrape of all three agents.
ok=0
for _ in $(seq 200); do
  [ "$(query 'count_over_time(gpuq_build_info{job="gpuq"}[1m]) >= 3')" = 3 ] && ok=1 && break
  sleep 0.1
done
if [ $ok = 1 ]; then
  pass "the three agents scraped 3 times ($(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s after start)"
else
  fail "agents not scraped 3 times within 20 s" "$(curl -s "http://127.0.0.1:$prom_port/api/v1/targets")"
fi

n_queries=0
while IFS=$'\t' read -r what expr; do
  n=$(query "$expr")
  n_queries=$((n_queries + 1))
  if [ "$n" -ge 1 ] 2> /dev/null; then
    pass "$what: $n series"
  else
    fail "$what: no series (n=$n)" "$expr"
  fi
done < <("$PY" "$SRC/tests/deploy/deploy_checks.py" queries "$SRC/dashboards/gpuq.json")
if [ "$n_queries" -ge 20 ]; then pass "$n_queries dashboard queries checked"; else fail "only $n_queries dashboard queries found"; fi
# The README's first five metrics: every PromQL expression it shows answers.
n_readme=0
while IFS= read -r expr; do
  n=$(query "$expr")
  n_readme=$((n_readme + 1))
  if [ "$n" -ge 1 ] 2> /dev/null; then pass "README query $expr: $n series"; else fail "README query answers nothing (n=$n)" "$expr"; fi
done < <(awk '/^## The first five metrics/ { on = 1; next } /^## / { on = 0 } on && /^\| / && !/^\| question/' "$SRC/README.md" |
  awk -F'|' '{ print $3 }' | grep -o '`[^`]*`' | tr -d '`')
if [ "$n_readme" -ge 7 ]; then pass "$n_readme README queries checked"; else fail "only $n_readme README queries found"; fi

# honor_labels: the agent's namespace/pod/container win over the target's.
n=$(query 'gpuq_queues{job="gpuq-k8s-labels",namespace="gpuq-system"}')
total=$(query 'gpuq_queues{job="gpuq-k8s-labels"}')
if [ "$n" = 0 ] && [ "$total" -ge 1 ] 2> /dev/null; then
  pass "honor_labels: no queue series takes the agent pod's namespace ($total series kept theirs)"
else
  fail "honor_labels: $n of $total queue series carry the agent pod's namespace"
fi
summary

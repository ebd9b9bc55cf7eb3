#!/usr/bin/env bash
# The submission flags (--sample-interval, --doorbells, --hsa-runtime) on the
# real binary: bad values get one line and exit 2; good ones reach the
# daemon and --once (the doorbell probes show in gpuq_probe_attached whether
# or not they can attach here). Numbers are checked in-process by
# tests/unit/sampler_pipeline_test.cc: without KFD no live queue exists.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
CAP=$SRC/examples/default.gpuqcap
FIXTURE=$SRC/tests/fixtures/root
use_background_cleanup

# one_line NAME: the last run printed exactly one line on stderr.
one_line() {
  local n
  n=$(printf '%s\n' "$ERR" | grep -c 'gpuq-agent:')
  if [ "$n" = 1 ]; then pass "$1: one error line"; else fail "$1: $n error lines" "$ERR"; fi
}

# --- bad values ---------------------------------------------------------------
run "$AGENT" --once --replay "$CAP" --sample-interval soon
expect_rc "--sample-interval soon" 2
expect_err "bad --sample-interval is explained" "sample-interval.*not a duration"
one_line "--sample-interval soon"
run "$AGENT" --once --replay "$CAP" --sample-interval 5ms
expect_rc "--sample-interval below 10ms" 2
expect_err "too short --sample-interval is explained" "0 \(off\) or at least 10ms"
one_line "--sample-interval 5ms"
run "$AGENT" --once --replay "$CAP" --sample-interval -1s
expect_rc "negative --sample-interval" 2
run "$AGENT" --doorbells=maybe
expect_rc "--doorbells=maybe" 2
expect_err "bad --doorbells names the choices" "doorbells.*off,uprobe"
run "$AGENT" --doorbells=uprobe --hsa-runtime "$TMP/missing.so"
expect_rc "--hsa-runtime of a missing file" 1
expect_err "missing --hsa-runtime is named" "missing.so"
one_line "--hsa-runtime missing"
: > "$TMP/libhsa-runtime64.so.1"
run "$AGENT" --hsa-runtime "$TMP/libhsa-runtime64.so.1"
expect_rc "--hsa-runtime without --doorbells=uprobe" 2
expect_err "--hsa-runtime says what it needs" "needs --doorbells=uprobe"
run "$AGENT" --once --replay "$CAP" --doorbells=uprobe
expect_rc "--doorbells=uprobe with --replay" 2
expect_err "--doorbells=uprobe with --replay is explained" "does not apply to --replay"
one_line "--doorbells=uprobe --replay"

# --- good values ----------------------------------------------------------------
run "$AGENT" --help
expect_out "--help lists --sample-interval" "--sample-interval"
expect_out "--help lists --doorbells" "--doorbells"
expect_out "--help lists --hsa-runtime" "--hsa-runtime"
run "$AGENT" --once --replay "$CAP" --sample-interval 0 --output prometheus
expect_rc "--sample-interval 0 (off)" 0
run "$AGENT" --once --replay "$CAP" --sample-interval 250ms --doorbells=off
expect_rc "--sample-interval with a replay is accepted (a capture replays its samples)" 0

# Live --once on the fixture host (KFD sysfs only, no hook attaches here,
# and its sysfs has no uprobe event source): the doorbell poller is opened
# and reported as not attached, and the fixture's queues, found in sysfs,
# are the ones the sampler cannot read (no ring addresses).
run "$AGENT" --once --host-root "$FIXTURE" --interval 300ms --sample-interval 100ms \
  --doorbells=uprobe --output prometheus
expect_rc "live --once with sampling and doorbells" 0
expect_out "--once reports the doorbell probe, not attached" '^gpuq_probe_attached\{probe="doorbell_store_screlease",mode="none",tier="none"\} 0$'
expect_out "--once exports the sample outcomes" '^gpuq_queue_samples_total\{result="unreadable"\} 0$'
expect_out "--once says the fixture's compute queues are sysfs_only" '^gpuq_unsampled_queues\{container="3f6a9e2b1c8d",pod="",namespace="",gpu_id="45412",reason="sysfs_only"\} 1$'

# The daemon, live on the same fixture host, sampling every 100ms.
port=$(free_port)
start_bg "$AGENT" --host-root "$FIXTURE" --web.listen-address "127.0.0.1:$port" \
  --sample-interval 100ms --doorbells=uprobe > "$TMP/out" 2> "$TMP/err"
BG=$BG_PID
if wait_http "http://127.0.0.1:$port/metrics" 100; then
  sleep 0.5  # a few sampling rounds
  body=$(curl -sf "http://127.0.0.1:$port/metrics")
  if printf '%s\n' "$body" | grep -qE '^gpuq_probe_attached\{probe="doorbell_store_relaxed",mode="none",tier="none"\} 0$'; then
    pass "daemon reports the doorbell probes"
  else
    fail "daemon lacks the doorbell probes" "$(cat "$TMP/err")"
  fi
  if printf '%s\n' "$body" | grep -qE '^gpuq_sampled_queues 0$'; then
    pass "daemon exports gpuq_sampled_queues"
  else
    fail "daemon lacks gpuq_sampled_queues"
  fi
  stop_bg "$BG"
  rc=$STOP_RC
  if [ "$rc" = 0 ]; then pass "daemon with the sampler thread exits 0 on SIGTERM"; else fail "daemon exit $rc on SIGTERM" "$(cat "$TMP/err")"; fi
else
  fail "daemon with --sample-interval did not serve /metrics" "$(cat "$TMP/err")"
fi
summary

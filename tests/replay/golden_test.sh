#!/usr/bin/env bash
# Tier 2, replay goldens: the bundled capture through the whole pipeline
# (replay source, attribution from the capture's cgroup paths, model,
# collector, renderers) must print exactly the reviewed golden output.
# GPUQ_UPDATE_GOLDEN=1 rewrites the goldens; review the diff before committing.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
GOLDEN=$SRC/tests/replay/golden

# build_info carries the commit: mask it so goldens survive new commits.
mask() { sed -E 's/(git_commit"?[=:] ?")[^"]*"/\1-"/'; }

for fmt in table json prometheus; do
  run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output "$fmt"
  expect_rc "--once --output $fmt" 0
  got=$(printf '%s\n' "$OUT" | mask)
  if [ "${GPUQ_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$got" > "$GOLDEN/default.$fmt"
  fi
  if diff -u "$GOLDEN/default.$fmt" <(printf '%s\n' "$got") > /tmp/gpuq-golden.diff; then
    pass "default capture, $fmt output matches golden"
  else
    fail "default capture, $fmt output differs from golden" "$(head -40 /tmp/gpuq-golden.diff)"
  fi
done

# The golden is reviewed by hand against examples/README.md; these lines pin
# the hand-computed end state independently of the golden file.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus
sum() { printf '%s\n' "$OUT" | grep -E "^$1" | awk '{s += $NF} END {print s + 0}'; }
check_sum() {
  local got
  got=$(sum "$1")
  if [ "$got" = "$2" ]; then pass "sum of $1 = $2"; else fail "sum of $1 = $got, want $2"; fi
}
check_sum 'gpuq_queues\{' 41
check_sum 'gpuq_queues\{.*queue_type="compute"' 25
check_sum 'gpuq_queues\{.*queue_type="sdma"' 16
check_sum 'gpuq_queue_creates_total\{' 52
check_sum 'gpuq_queue_destroys_total\{.*reason="ioctl"' 9
check_sum 'gpuq_queue_destroys_total\{.*reason="process_exit"' 3
check_sum 'gpuq_processes\{' 9
check_sum 'gpuq_process_exits_total\{' 1
check_sum 'gpuq_queue_create_failures_total\{.*error="ENOMEM"' 1
check_sum 'gpuq_gpu_info\{' 8
check_sum 'gpuq_events_total\{' 80
check_sum 'gpuq_events_dropped_total\{' 0
check_sum 'gpuq_queues\{container="",' 1
check_sum 'gpuq_queues\{container="vllm",' 40
check_sum 'gpuq_queues\{container="trainer",pod="trainer-0",namespace="ml-train",' 0
check_sum 'gpuq_queue_destroys_total\{container="trainer",pod="trainer-0",namespace="ml-train",.*reason="process_exit"' 3
check_sum 'gpuq_container_info\{container="vllm",pod="",namespace="",container_id="0124dd351391[0-9a-f]{52}",name="vllm",runtime="docker",pod_uid=""\}' 1
check_sum 'gpuq_container_info\{container="trainer",pod="trainer-0",namespace="ml-train",container_id="f14ff07ef228[0-9a-f]{52}",name="",runtime="containerd",pod_uid="db3c3553-1e98-4725-809e-8f0d53d633e3"\}' 1

# An allowlisted runtime label becomes label_<name> on per-container series.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus --labels.runtime-allowlist com.example.team
check_sum 'gpuq_queues\{container="vllm",pod="",namespace="",label_com_example_team="inference",' 40
check_sum 'gpuq_queues\{container="",pod="",namespace="",label_com_example_team="",' 1
# --labels.pid-comm splits series per process, keeping the totals.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus --labels.pid-comm
check_sum 'gpuq_queues\{container="vllm",.*pid="31200",comm="pt_main_thread"\}' 5
check_sum 'gpuq_queues\{' 41
# The per-container cap: one container keeps its series, the other folds.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus --max-containers 1
check_sum 'gpuq_queues\{container="vllm",' 40
check_sum 'gpuq_queues\{container="_other",' 0
check_sum 'gpuq_queue_creates_total\{container="_other",' 3
check_sum 'gpuq_containers_folded' 1

# Record then replay: a capture written by `record --replay` replays to the
# same snapshot (the writer and reader agree, metadata records included).
tmp=$(mktemp -d)
run "$AGENT" record --replay "$SRC/examples/default.gpuqcap" -o "$tmp/again.gpuqcap"
expect_rc "record --replay writes a capture" 0
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus
first=$OUT
run "$AGENT" --once --replay "$tmp/again.gpuqcap" --output prometheus
if [ "$first" = "$OUT" ]; then pass "re-recorded capture replays identically"; else fail "re-recorded capture replays differently" "$(diff <(echo "$first") <(echo "$OUT") | head -20)"; fi
rm -rf "$tmp"
summary

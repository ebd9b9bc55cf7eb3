#!/usr/bin/env bash
# Replay goldens: the bundled capture through the whole pipeline
# (replay source, attribution from the capture's cgroup paths, model,
# collector, renderers) must print exactly the reviewed golden output.
# GPUQ_UPDATE_GOLDEN=1 rewrites the goldens; review the diff before committing.
set -u
AGENT=$1 SRC=$2 GEN=$3
. "$SRC/tests/lib/assert.sh"
GOLDEN=$SRC/tests/replay/golden

# build_info carries the commit: mask it so goldens survive new commits.
mask() { sed -E 's/(git_commit"?[=:] ?")[^"]*"/\1-"/'; }

# table: the default, 120 columns; wide: every column.
for fmt in table wide json prometheus; do
  run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output "$fmt"
  expect_rc "--once --output $fmt" 0
  got=$(printf '%s\n' "$OUT" | mask)
  if [ "${GPUQ_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$got" > "$GOLDEN/default.$fmt"
  fi
  # The diff in a variable: a fixed /tmp path clashed between runs.
  if differs=$(diff -u "$GOLDEN/default.$fmt" <(printf '%s\n' "$got")); then
    pass "default capture, $fmt output matches golden"
  else
    fail "default capture, $fmt output differs from golden" "$(printf '%s\n' "$differs" | head -40)"
  fi
done

# The golden is reviewed by hand against examples/README.md; these lines pin
# the hand-computed end state independently of the golden file.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus
# check_sum REGEX WANT: the samples matching REGEX exist and sum to WANT.
check_sum() {
  local got
  got=$(series_sum "$1" "$OUT")
  if [ "$got" = "$2" ]; then pass "sum of $1 = $2"; else fail "sum of $1 = $got, want $2"; fi
}
# check_absent REGEX: no sample matches REGEX.
check_absent() {
  if printf '%s\n' "$OUT" | grep -qE "^$1"; then
    fail "$1 exported" "$(printf '%s\n' "$OUT" | grep -E "^$1" | head -5)"
  else
    pass "no series $1"
  fi
}
check_sum 'gpuq_queues\{' 43
check_sum 'gpuq_queues\{.*queue_type="compute"' 27
check_sum 'gpuq_queues\{.*queue_type="sdma"' 16
check_sum 'gpuq_queue_creates_total\{' 54
check_sum 'gpuq_queue_destroys_total\{.*reason="ioctl"' 9
check_sum 'gpuq_queue_destroys_total\{.*reason="process_exit"' 3
check_sum 'gpuq_processes\{' 10
check_sum 'gpuq_process_exits_total\{' 1
check_sum 'gpuq_queue_create_failures_total\{.*error="ENOMEM"' 1
check_sum 'gpuq_gpu_info\{' 9
check_sum 'gpuq_events_total\{' 206
check_sum 'gpuq_events_dropped_total\{' 0
check_sum 'gpuq_queues\{container="",' 3
check_sum 'gpuq_queues\{container="vllm",' 40
check_sum 'gpuq_queues\{container="trainer",pod="trainer-0",namespace="ml-train",' 0
check_sum 'gpuq_queue_destroys_total\{container="trainer",pod="trainer-0",namespace="ml-train",.*reason="process_exit"' 3
check_sum 'gpuq_container_info\{container="vllm",pod="",namespace="",container_id="0124dd351391[0-9a-f]{52}",name="vllm",runtime="docker",pod_uid=""\}' 1
check_sum 'gpuq_container_info\{container="trainer",pod="trainer-0",namespace="ml-train",container_id="f14ff07ef228[0-9a-f]{52}",name="",runtime="containerd",pod_uid="db3c3553-1e98-4725-809e-8f0d53d633e3"\}' 1
# Submissions, doorbells, preemption and evictions (examples/README.md, the
# section of that name): sampled write indexes, doorbell counts, runlist
# operations and evictions of the bundled capture.
check_sum 'gpuq_submissions_total\{' 369690
check_sum 'gpuq_submissions_total\{container="vllm",' 368000
check_sum 'gpuq_submissions_total\{container="vllm",pod="",namespace="",gpu_id="64512",' 46000
check_sum 'gpuq_submissions_total\{container="trainer",' 1300
check_sum 'gpuq_submissions_total\{container="",' 390
check_sum 'gpuq_queue_pending_packets\{' 29
check_sum 'gpuq_queue_pending_packets\{container="vllm",' 24
check_sum 'gpuq_sampled_queues ' 26
check_sum 'gpuq_queue_samples_total\{result="ok"\}' 88
check_sum 'gpuq_queue_samples_total\{result="unreadable"\}' 2
check_sum 'gpuq_doorbells_total\{' 2570
check_sum 'gpuq_doorbells_total\{container="",pod="",namespace="",gpu_id="unknown"\}' 70
check_sum 'gpuq_doorbell_packets_total\{.*packet_type="kernel_dispatch"' 2510
check_sum 'gpuq_doorbell_packets_total\{.*packet_type="barrier"' 48
check_sum 'gpuq_runlist_unmaps_total\{' 6
check_sum 'gpuq_runlist_unmaps_total\{gpu_id="47101",scheduler="mes",filter="queue"\}' 1
check_sum 'gpuq_runlist_unmap_duration_seconds_count\{' 6
check_sum 'gpuq_runlist_unmap_duration_seconds_sum\{' 9.00314
check_sum 'gpuq_runlist_map_duration_seconds_count\{' 6
check_sum 'gpuq_runlist_unmap_duration_seconds_bucket\{gpu_id="64512",scheduler="hws",le="9"\}' 1
check_sum 'gpuq_runlist_unmap_duration_seconds_bucket\{gpu_id="64512",scheduler="hws",le="10"\}' 2
check_sum 'gpuq_runlist_failures_total\{gpu_id="64512",scheduler="hws",op="unmap",error="ETIME"\}' 1
check_sum 'gpuq_runlist_operations_total\{' 10
check_sum 'gpuq_runlist_operations_total\{container="trainer",' 6
check_absent 'gpuq_runlist_operations_total\{.*cause="unknown"'
check_sum 'gpuq_evictions_total\{' 3
check_sum 'gpuq_evictions_total\{container="trainer",.*trigger="ttm"\}' 1
check_sum 'gpuq_eviction_restores_total\{' 3
check_sum 'gpuq_eviction_duration_seconds_sum\{' 2.49
check_sum 'gpuq_evicted_processes\{' 0
check_sum 'gpuq_cgroups_unresolved_total' 0
# The host's PM4 compute queue: live, CU-restricted, not sampled.
check_sum 'gpuq_queues_cu_masked\{container="",pod="",namespace="",gpu_id="23710",cu_mask="restricted"\}' 1
check_sum 'gpuq_unsampled_queues\{container="",pod="",namespace="",gpu_id="23710",reason="not_rocr"\}' 1
check_sum 'gpuq_unsampled_queues\{' 1

# An allowlisted runtime label becomes label_<name> on per-container series.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus --labels.runtime-allowlist com.example.team
check_sum 'gpuq_queues\{container="vllm",pod="",namespace="",label_com_example_team="inference",' 40
check_sum 'gpuq_queues\{container="",pod="",namespace="",label_com_example_team="",' 3
# --labels.pid-comm splits series per process, keeping the totals.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus --labels.pid-comm
check_sum 'gpuq_queues\{container="vllm",.*pid="31200",comm="pt_main_thread"\}' 5
check_sum 'gpuq_queues\{' 43
# The per-container cap: one container keeps its series, the other folds.
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus --max-containers 1
check_sum 'gpuq_queues\{container="vllm",' 40
check_sum 'gpuq_queues\{container="_other",' 0
check_sum 'gpuq_queue_creates_total\{container="_other",' 3
check_sum 'gpuq_containers_folded' 1

# Record then replay: a capture written by `record --replay` replays to the
# same snapshot (the writer and reader agree, metadata records included),
# but for the one record `record` adds last: what its source lost (none).
tmp=$(mktemp -d)
run "$AGENT" record --replay "$SRC/examples/default.gpuqcap" -o "$tmp/again.gpuqcap"
expect_rc "record --replay writes a capture" 0
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus
first=$(grep -v '^gpuq_events_total{type="source_drops"}' <<< "$OUT")
run "$AGENT" --once --replay "$tmp/again.gpuqcap" --output prometheus
check_sum 'gpuq_events_total\{type="source_drops"\}' 1
OUT=$(grep -v '^gpuq_events_total{type="source_drops"}' <<< "$OUT")
if [ "$first" = "$OUT" ]; then pass "re-recorded capture replays identically"; else fail "re-recorded capture replays differently" "$(diff <(echo "$first") <(echo "$OUT") | head -20)"; fi

# A partitioned node (examples/README.md, "Report scenarios": cpx): 8 MI300X
# in CPX, 64 KFD nodes. Every partition is a GPU of its own, each joined to
# its physical GPU, and the physical GPUs' sums are the hand-worked ones.
run "$GEN" --scenario cpx -o "$tmp/cpx.gpuqcap"
expect_rc "generate the cpx scenario" 0
run "$AGENT" --once --replay "$tmp/cpx.gpuqcap"
expect_rc "--once of the cpx scenario" 0
got=$OUT
if [ "${GPUQ_UPDATE_GOLDEN:-0}" = 1 ]; then printf '%s\n' "$got" > "$GOLDEN/cpx.table"; fi
if differs=$(diff -u "$GOLDEN/cpx.table" <(printf '%s\n' "$got")); then
  pass "cpx scenario, table output matches golden"
else
  fail "cpx scenario, table output differs from golden" "$(printf '%s\n' "$differs" | head -40)"
fi
# physical_row INDEX WANT: the PHYSICAL GPUS row of that index (its
# figures from PCI on, single-spaced).
physical_row() {
  local row
  row=$(printf '%s\n' "$got" | sed -n '/^PHYSICAL GPUS/,/^$/p' | awk -v i="$1" '$1 == i { $1 = ""; sub(/^ /, ""); print }')
  if [ "$row" = "$2" ]; then pass "physical GPU $1: $2"; else fail "physical GPU $1: '$row', want '$2'"; fi
}
# PCI PARTITIONS COMPUTE SDMA OTHER PROCS SUBMIT/S PENDING PREEMPTED EVICTIONS:
# a vLLM worker per partition of GPUs 0 and 1 (a compute queue at 100/s with
# 1 pending, an SDMA queue); one batch process on 4 partitions of GPU 2
# (50/s each), counted once.
physical_row 0 "0000:05:00 8 8 8 0 8 800.0 8 0/0 0"
physical_row 1 "0000:15:00 8 8 8 0 8 800.0 8 0/0 0"
physical_row 2 "0000:65:00 8 4 0 0 1 200.0 0 0/0 0"
physical_row 7 "0000:f5:00 8 0 0 0 0 - 0 0/0 0"
run "$AGENT" --once --replay "$tmp/cpx.gpuqcap" --output prometheus
check_sum 'gpuq_gpu_info\{' 64
check_sum 'gpuq_gpu_info\{.*gpu_partition_id="7",gpu_physical_index="2",gpu_physical_pci="0000:65:00",' 1
check_sum 'gpuq_gpu_info\{.*gpu_physical_index="0",' 8
check_sum 'gpuq_queues\{' 36
rm -rf "$tmp"
summary

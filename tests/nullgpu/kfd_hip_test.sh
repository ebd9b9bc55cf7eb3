#!/usr/bin/env bash
# Debian's HIP 6.4.3 (sid) and 7.2.4 (experimental) running on the null GPU
# at the KFD interface (kfd_nullgpu.c), in the HIP flavour of each root of
# rocm_stacks.sh (`rocm_root STACK hip`: ROCr, HIP and the root's own hipcc;
# chrooted in a private mount namespace with /proc, /sys and /dev, as a
# container with its own ROCm). hip_client.cc is compiled in each root with
# its hipcc --offload-arch=gfx90a. In each:
#   - real clients: `infer 2 2 5` (inference-like over 2 GPUs: H2D copy, 3
#     kernels, D2H copy, an event; the data round-trips: HIP's staging copies
#     by ROCclr's copyBuffer kernel, performed by the null CP) and the
#     shared-GPU pair (`latency 0 100 300` beside `batch 0 300`); exit 0, the
#     null CP's dispatches on the client queues >= the launches; the latency
#     stream's queue at high KFD priority (11 here), the batch stream's
#     given a CU mask (6.4 only: see the pair below);
#   - hipGraph: `graph 300 2 10` (10 eager launches, a 300-node graph
#     launched twice): the null CP consumed 610 kernel dispatches, none
#     pending; with gpuq-agent --doorbells=uprobe --hsa-runtime <the root's
#     ROCr>, gpuq_doorbell_packets_total by type = the truth (HIP 7 rings
#     once per batch of graph packets, so this is the exact-per-ring count);
#   - the queue table: `queues S` for S = 1, 2, 4, 8 under the default and
#     GPU_MAX_HW_QUEUES=1/2/4/8 on 2 null GPUs, counted from the truth's
#     queues (every AMDKFD_IOC_CREATE_QUEUE ROCr made), checked as
#     queue_count_test.sh checks 5.2.3 (every GPU the same, never fewer with
#     more streams, within GPU_MAX_HW_QUEUES + 1, copies round-trip), written
#     to OUT, and compared with docs/user-guide.md's table ("How many hardware queues
#     does a HIP process create?", the rows of each measured version): a
#     difference fails.
# Usage: kfd_hip_test.sh SRC AGENT KFDNULL_LIB OUT
set -u
SRC=$1 AGENT=$2 LIB=$3 OUT=${4:-/dev/null}
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/doorbell_agent.sh"
use_background_cleanup
. "$SRC/tests/nullgpu/rocm_stacks.sh"
. "$SRC/tests/nullgpu/nullgpu_env.sh" # kfdnull_require, truth_queues, sum
kfdnull_require "HIP 6.4/7.2" "$LIB"

# per_gpu FILE OWNER: "n" if both nodes have n such queues, else "n1/n2"
per_gpu() {
  local c
  c=$(for n in 1 2; do truth_queues "$1" "owner=$2" | grep -c " node=$n "; done | sort -u | tr '\n' '/')
  echo "${c%/}"
}
STREAMS="1 2 4 8"
CONFIGS=("default" "GPU_MAX_HW_QUEUES=1" "GPU_MAX_HW_QUEUES=2" "GPU_MAX_HW_QUEUES=4" "GPU_MAX_HW_QUEUES=8")
TABLE_HEAD="| HIP | configuration | 1 stream | 2 streams | 4 streams | 8 streams |
|---|---|---|---|---|---|"
rows="" measured=()
STACKS=0
for stack in 6.4 7.2; do
  t0=$(date +%s)
  if ! rocm_root "$stack" hip; then
    skip "HIP $stack: $ROCM_WHY"
    continue
  fi
  STACKS=$((STACKS + 1))
  R=$ROCM_ROOT V=${ROCM_HIP_VERSION%%[-+]*}
  pass "HIP $stack: Debian's libamdhip64 $ROCM_HIP_VERSION with ROCr $ROCM_VERSION in $R ($(($(date +%s) - t0)) s to get it)"
  kfdnull_workdir "$R" kfdhip "$LIB" "$SRC/tests/nullgpu/hip_client.cc"
  if ! root_hipcc "$R" hip_client "$TMP/hipcc-$stack.log" "$D/hip_client.cc"; then
    fail "HIP $stack: hip_client does not build with the root's hipcc" "$(head -20 "$TMP/hipcc-$stack.log")"
    continue
  fi
  pass "HIP $stack: hip_client built in the root with its hipcc --offload-arch=gfx90a"
  PRE=(env "LD_PRELOAD=$D/libgpuq_kfdnull.so" "HOME=$D")
  # hc NAME ENV... -- ARGS...: hip_client ARGS on the null GPU(s), its truth
  # as $TMP/NAME.truth and its output as $TMP/NAME.out; RUN_RC its status.
  hc() {
    local name=$1 envs=() f
    shift
    while [ "$1" != -- ]; do envs+=("$1") && shift; done
    shift
    rm -f "$R$D/$name".*
    run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_TRUTH="$D/$name.%p" "${envs[@]}" \
      "$D/hip_client" "$@" > "$TMP/$name.out" 2>&1
    f=$(truth_of "$R$D" "$name")
    rm -f "$TMP/$name.truth"
    [ -z "$f" ] || cp "$f" "$TMP/$name.truth"
  }

  # Real clients: inference-like over 2 GPUs, then the shared-GPU pair.
  hc infer-$stack GPUQ_NULLGPU_GPUS=2 -- infer 2 2 5
  t=$TMP/infer-$stack.truth
  if [ "$RUN_RC" = 0 ] && grep -q '^hip_client infer .*ok' "$TMP/infer-$stack.out" && [ -f "$t" ]; then
    d=$(sum "$t" owner=client dispatches) c=$(sum "$t" owner=client rocclr_blits)
    # 2 GPUs x 2 streams x 5 iterations x 3 kernels; 2 staging copies each
    [ "$d" -ge 60 ] && [ "$c" -ge 40 ] && [ "$(sum "$t" owner=client pending)" = 0 ] &&
      pass "HIP $stack: infer 2 2 5 (2 GPUs x 2 streams, H2D, 3 kernels, D2H, event): data round-trips, $d dispatches ($c of them ROCclr's copyBuffer, performed), none pending" ||
      fail "HIP $stack: infer: dispatches $d (want >= 60), copies $c (want >= 40)" "$(cat "$t")"
  else
    fail "HIP $stack: infer 2 2 5: exit $RUN_RC" "$(tail -20 "$TMP/infer-$stack.out")"
  fi
  rm -f "$R$D"/pair-*
  start_bg "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_TRUTH="$D/pair-lat.%p" \
    "$D/hip_client" latency 0 100 300 high > "$TMP/lat-$stack.out" 2>&1
  lat=$BG_PID
  # The batch on a CU-masked stream (0x0000ffff: CUs 0-15), but not under
  # HIP 7.2: there it aborted at exit ("double free or corruption") in 2 of
  # 24 runs side by side on this null GPU (not understood yet),
  # so 7.2's CU mask is shown only by the runs of the note below.
  cu_mask=0x0000ffff
  [ "$stack" = 7.2 ] && cu_mask=""
  # shellcheck disable=SC2086 # an empty mask is no argument
  hc pair-batch-$stack -- batch 0 300 $cu_mask
  brc=$RUN_RC
  stop_bg_wait "$lat"
  lt=$(truth_of "$R$D" pair-lat)
  if [ "$brc" = 0 ] && [ "$STOP_RC" = 0 ] && grep -q 'ok' "$TMP/lat-$stack.out" &&
    grep -q 'ok' "$TMP/pair-batch-$stack.out" && [ -n "$lt" ] && [ -f "$TMP/pair-batch-$stack.truth" ]; then
    pass "HIP $stack: the shared-GPU pair (latency at 100 Hz beside batch, 0.3 s): both exit 0, $(sum "$lt" owner=client dispatches) and $(sum "$TMP/pair-batch-$stack.truth" owner=client dispatches) dispatches, none pending"
  else
    fail "HIP $stack: shared-GPU pair: batch exit $brc, latency exit $STOP_RC" "$(tail -5 "$TMP/lat-$stack.out" "$TMP/pair-batch-$stack.out")"
  fi
  # The users' experiment through this ROCr: the latency stream's queue at
  # amdkfd's high pipe priority (KFD queue priority 11-15: HIP's greatest
  # stream priority; ROCr 6.4/7.2 ask for 11 where 5.2.3 asked for 15), the
  # batch stream's queue given one AMDKFD_IOC_SET_CU_MASK
  # (hipExtStreamCreateWithCUMask).
  if [ -n "$lt" ] && [ -f "$TMP/pair-batch-$stack.truth" ]; then
    pr=$(truth_queues "$lt" owner=client | awk '/ dispatches=[1-9]/' | tr ' ' '\n' | sed -n 's/^priority=//p' | sort -u | tr '\n' ' ')
    cm=$(truth_queues "$TMP/pair-batch-$stack.truth" owner=client | awk '/ dispatches=[1-9]/' | tr ' ' '\n' | sed -n 's/^cu_masks=//p' | sort -u | tr '\n' ' ')
    if [ "$pr" != "11 " ] && [ "$pr" != "15 " ]; then
      fail "HIP $stack: the latency stream's dispatching queues at KFD priorities '$pr' (want one of 11-15)" "$(cat "$lt")"
    elif [ -z "$cu_mask" ]; then
      pass "HIP $stack: the latency stream's queue at KFD priority ${pr% } (high)"
      skip "HIP $stack: the batch on a CU-masked stream: not run under HIP 7.2 (aborted at exit in 2 of 24 runs here, see above)"
    elif [ "$cm" = "1 " ]; then
      pass "HIP $stack: the latency stream's queue at KFD priority ${pr% } (high), the batch stream's queue given one CU mask"
    else
      fail "HIP $stack: the batch stream's dispatching queues got CU masks '$cm' (want 1)" "$(cat "$TMP/pair-batch-$stack.truth")"
    fi
  fi

  # hipGraph, with the agent's doorbell uprobes on this root's ROCr.
  agent=0
  if [ -x "$AGENT" ]; then
    lib=$(readlink -f "$R/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")
    start_doorbell_agent "$lib" "by symbol to ROCr $ROCM_VERSION (HIP $stack root)"
    agent=1
  else
    skip "HIP $stack: gpuq-agent not built (no doorbell check)"
  fi
  hc graph-$stack -- graph 300 2 10
  t=$TMP/graph-$stack.truth
  if [ "$RUN_RC" = 0 ] && grep -q '^hip_client graph .*kernels=610 ok' "$TMP/graph-$stack.out" && [ -f "$t" ]; then
    d=$(sum "$t" owner=client dispatches)
    [ "$d" = 610 ] && [ "$(sum "$t" owner=client pending)" = 0 ] &&
      pass "HIP $stack: graph 300 2 10 (10 eager, a 300-node graph launched twice): the null CP consumed 610 kernel dispatches + $(sum "$t" owner=client barriers) barriers + $(sum "$t" owner=client vendor) vendor, none pending" ||
      fail "HIP $stack: graph: $d dispatches, want 610" "$(cat "$t")"
  else
    fail "HIP $stack: graph 300 2 10: exit $RUN_RC" "$(tail -20 "$TMP/graph-$stack.out")"
  fi
  if [ "$agent" = 1 ]; then
    check_doorbell_packets "HIP $stack" "$t"
    stop_bg "$AGENT_PID"
    [ "$STOP_RC" = 0 ] || fail "HIP $stack: the agent exited $STOP_RC" "$(cat "$TMP/agent.log")"
  fi

  # The queue table.
  for cfg in "${CONFIGS[@]}"; do
    row="| $V | \`$cfg\` |"
    prev=0
    for s in $STREAMS; do
      envs=(GPUQ_NULLGPU_GPUS=2)
      [ "$cfg" = default ] || envs+=("$cfg")
      hc q "${envs[@]}" -- queues "$s"
      f=$TMP/q.truth
      if [ "$RUN_RC" != 0 ] || [ ! -f "$f" ] || ! grep -q '^hip_client queues devices=2 .*ok' "$TMP/q.out"; then
        fail "HIP $stack, $cfg, $s streams: exit $RUN_RC" "$(tail -5 "$TMP/q.out")"
        row="$row failed |"
        continue
      fi
      hip=$(per_gpu "$f" client) internal=$(per_gpu "$f" rocr_internal)
      sdma=$(sed -n 's/.*sdma_refused=\([0-9]*\).*/\1/p' "$f")
      ok=1
      case $hip$internal in */*) ok=0 ;; esac
      [ "$hip" -ge "$prev" ] 2> /dev/null || ok=0
      max=$(sed -n 's/.*GPU_MAX_HW_QUEUES=\([0-9]*\).*/\1/p' <<< "$cfg")
      [ -z "$max" ] || [ "$hip" -le $((max + 1)) ] || ok=0
      [ "$ok" = 1 ] && pass "HIP $stack, $cfg, $s streams: $hip HIP + $internal ROCr-internal compute queues per GPU, copies round-trip" ||
        fail "HIP $stack, $cfg, $s streams: HIP $hip, internal $internal (previous HIP count $prev)" "$(cat "$f")"
      prev=${hip%%/*}
      cell="$hip + $internal"
      [ "${sdma:-0}" -gt 0 ] && cell="$cell + $((sdma / 2)) SDMA"
      row="$row $cell |"
    done
    rows="$rows$row
"
  done
  measured+=("$V")
done
if [ "$STACKS" = 0 ]; then
  summary
  exit 77
fi
table="$TABLE_HEAD
${rows%
}"
printf '%s\n' "$table" | tee "$OUT"
# docs/user-guide.md's rows of the versions measured here must be these.
readme=$(grep -F -x -A 100 -- "$(head -1 <<< "$TABLE_HEAD")" "$SRC/docs/user-guide.md" | sed '/^$/q' | sed '/^$/d')
for v in "${measured[@]}"; do
  want=$(grep -F "| $v |" <<< "$table") have=$(grep -F "| $v |" <<< "$readme")
  [ "$want" = "$have" ] && pass "docs/user-guide.md's queue table rows for HIP $v = the measurement" ||
    fail "docs/user-guide.md's queue table rows for HIP $v differ from the measurement (regenerate: $OUT)" "$(diff <(echo "$have") <(echo "$want"))"
done
summary

#!/usr/bin/env bash
# Real HIP programs (Debian's HIP 5.2.3 on ROCr 5.2.3, compiled here with
# hipcc --offload-arch=gfx90a) on the null GPU, checked against the null
# thunk's ground truth:
#   - inference-like: 2 streams on each of 8 gfx90a, H2D copy, 3 kernels,
#     D2H copy and an event per iteration; the copies round-trip (ROCr's blit
#     kernels run on the null CP) and every launch is one kernel-dispatch
#     packet on a HIP queue, every queue drained at exit;
#   - the shared-GPU pair: a latency-sensitive process launching at a fixed
#     rate beside a batch process on one GPU, each with its own truth;
#   - a paused CP: packets stay pending (write index - read index > 0) until
#     the CP resumes, then the process completes.
# HSA_ENABLE_SDMA=0: no SDMA engine is emulated (the thunk refuses SDMA
# queues; the queue-count test covers that path).
# Usage: hip_test.sh SRC NULLGPU_LIB HIP_CLIENT
set -u
SRC=$1 LIB=$2 HIP=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
procs_init
. "$SRC/tests/nullgpu/nullgpu_env.sh"
nullgpu_require "$LIB" "$HIP"


# --- inference-like, 8 GPUs
T=$TMP/infer.%p
run_group "${NULLGPU[@]}" GPUQ_NULLGPU_GPUS=8xgfx90a GPUQ_NULLGPU_TRUTH=$T HSA_ENABLE_SDMA=0 \
  "$HIP" infer 8 2 3 > "$TMP/infer.out" 2>&1
f=$(ls "$TMP"/infer.[0-9]* 2> /dev/null | head -1)
if [ "$RUN_RC" = 0 ] && grep -q 'hip_client infer .* ok' "$TMP/infer.out" && [ -n "$f" ]; then
  pass "inference-like run on 8 GPUs: exit 0, copies round-trip ($(grep -o 'launches=[0-9]*' "$TMP/infer.out"))"
else
  fail "inference-like run: exit $RUN_RC" "$(tail -20 "$TMP/infer.out")"
  summary
  exit 1
fi
launches=$(grep -o 'launches=[0-9]*' "$TMP/infer.out" | cut -d= -f2)
nodes=$(truth_queues "$f" 'owner=client' | grep -v ' write_index=0 ' | tr ' ' '\n' | sed -n 's/^node=//p' | sort -u | wc -l)
[ "$nodes" = 8 ] && pass "HIP queues with packets on all 8 GPUs" || fail "HIP queues with packets on $nodes GPUs, want 8" "$(cat "$f")"
d=$(sum "$f" 'owner=client' dispatches)
[ "$d" = "$launches" ] && pass "kernel dispatches on HIP queues = launches ($d)" ||
  fail "kernel dispatches on HIP queues $d, launches $launches" "$(cat "$f")"
w=$(sum "$f" '' write_index) c=$(sum "$f" '' consumed) p=$(sum "$f" '' pending)
[ "$w" = "$c" ] && [ "$p" = 0 ] && pass "every packet ROCr wrote was consumed ($w), none pending at exit" ||
  fail "written $w, consumed $c, pending $p" "$(cat "$f")"
b=$(sum "$f" 'owner=rocr_internal' blits)
[ "$b" -gt 0 ] && pass "ROCr's blit kernels ran on its internal queues ($b)" || fail "no blit kernel ran" "$(cat "$f")"
sdma=$(sed -n 's/.*sdma_refused=\([0-9]*\).*/\1/p' "$f")
[ "$sdma" = 0 ] && pass "HSA_ENABLE_SDMA=0: ROCr asked for no SDMA queue" || fail "sdma_refused=$sdma with HSA_ENABLE_SDMA=0"

# --- serve: the command mode the QEMU simulator tier drives (a quick check
# here that it launches, copies and reports what it did; the guest checks
# the rest against the kernel)
printf 'stream s1 0\nstream s2 1\nlaunch s1 40\nlaunch s2 25\ncopy s1\nwait s1\nwait s2\ntruth\nsync 1\n' > "$TMP/serve.in"
run_group "${NULLGPU[@]}" GPUQ_NULLGPU_GPUS=2xgfx90a GPUQ_NULLGPU_TRUTH="$TMP/serve.truth" HSA_ENABLE_SDMA=0 \
  bash -c 'exec "$0" serve < "$1"' "$HIP" "$TMP/serve.in" > "$TMP/serve.out" 2>&1
d=$(sum "$TMP/serve.truth" 'owner=client' dispatches)
if [ "$RUN_RC" = 0 ] && grep -q '^READY .* gpus=2' "$TMP/serve.out" && grep -q '^SYNC 1$' "$TMP/serve.out" &&
  grep -q '^STREAM s1 gpu=0 launches=40 copies=2$' "$TMP/serve.out" && ! grep -q '^BAD' "$TMP/serve.out" && [ "$d" = 65 ]; then
  pass "serve: 2 streams on 2 GPUs, 65 launches = the kernel dispatches on HIP's queues, a copy, every command as expected"
else
  fail "serve: exit $RUN_RC, dispatches $d (want 65)" "$(cat "$TMP/serve.out")"
fi

# --- GPUQ_HIP_CLIENT_HOLD=1 (what the QEMU tier's programs use): after its
# work the process keeps its queues until stdin ends, then exits with the
# work's status
mkdir -p "$TMP/hctl"
mkfifo "$TMP/hold.in"
exec 9<> "$TMP/hold.in"
start_bg "${NULLGPU[@]}" GPUQ_NULLGPU_CONTROL="$TMP/hctl" GPUQ_NULLGPU_TRUTH="$TMP/hold.truth" \
  HSA_ENABLE_SDMA=0 GPUQ_HIP_CLIENT_HOLD=1 bash -c 'exec "$0" batch 0 200 < "$1"' "$HIP" "$TMP/hold.in" \
  > "$TMP/hold.out" 2>&1 9>&- # the fifo as stdin inside: bash gives a background job /dev/null
HOLD=$BG_PID
for _ in $(seq 600); do
  grep -q '^HOLD' "$TMP/hold.out" 2> /dev/null && break
  kill -0 "$HOLD" 2> /dev/null || break
  sleep 0.05
done
touch "$TMP/hctl/dump"
for _ in $(seq 200); do [ -e "$TMP/hctl/dump" ] && sleep 0.05; done
live=$(truth_queues "$TMP/hold.truth" ' live=1 ' 2> /dev/null | wc -l)
if grep -q "^HOLD $HOLD rc=0\$" "$TMP/hold.out" && kill -0 "$HOLD" 2> /dev/null && [ "$live" -gt 0 ]; then
  pass "hold: after its work the batch process holds $live live queues ($(grep -o 'launches=[0-9]*' "$TMP/hold.out"))"
else
  fail "hold: no HOLD line, or no live queue ($live)" "$(cat "$TMP/hold.out")"
fi
exec 9>&-
wait "$HOLD"
rc=$?
_procs_forget "$HOLD"
[ "$rc" = 0 ] && pass "hold: stdin ended, exit 0" || fail "hold: exit $rc after stdin ended"

# --- the shared-GPU pair on one GPU
start_bg "${NULLGPU[@]}" GPUQ_NULLGPU_TRUTH="$TMP/lat.%p" HSA_ENABLE_SDMA=0 "$HIP" latency 0 100 1500 high > "$TMP/lat.out" 2>&1
LAT=$BG_PID
start_bg "${NULLGPU[@]}" GPUQ_NULLGPU_TRUTH="$TMP/batch.%p" HSA_ENABLE_SDMA=0 "$HIP" batch 0 1500 0x0000ffff > "$TMP/batch.out" 2>&1
BATCH=$BG_PID
wait "$LAT"
lat_rc=$?
wait "$BATCH"
batch_rc=$?
for who in lat batch; do
  out=$TMP/$who.out
  f=$(ls "$TMP"/$who.[0-9]* 2> /dev/null | head -1)
  rc=$lat_rc
  [ $who = batch ] && rc=$batch_rc
  n=$(grep -o 'launches=[0-9]*' "$out" | cut -d= -f2)
  if [ "$rc" = 0 ] && [ -n "$n" ] && [ -n "$f" ]; then
    d=$(sum "$f" 'owner=client' dispatches)
    [ "$d" = "$n" ] && pass "shared GPU, $who process: $n launches = $d dispatches on its HIP queues" ||
      fail "shared GPU, $who: $n launches, $d dispatches" "$(cat "$f")"
    # The users' experiment: latency on a high-priority stream (ROCr sets
    # HSA_QUEUE_PRIORITY_MAXIMUM on its queue), batch fenced to 16 CUs
    # (hsaKmtSetQueueCUMask on its queue), as the simulator tier's agents
    # then see them through /dev/kfd.
    if [ $who = lat ]; then
      pr=$(truth_queues "$f" owner=client | awk '$0 ~ / launches=| dispatches=[1-9]/' | tr ' ' '\n' | sed -n 's/^priority=//p' | sort -u | tr '\n' ' ')
      [ "$pr" = "3 " ] && pass "shared GPU, latency process: its HIP queue runs at priority 3 (HSA_QUEUE_PRIORITY_MAXIMUM: KFD queue priority 15)" ||
        fail "shared GPU, latency process: priorities of its dispatching queues: '$pr'" "$(cat "$f")"
    else
      cm=$(truth_queues "$f" owner=client | awk '/ dispatches=[1-9]/' | tr ' ' '\n' | sed -n 's/^cu_masks=//p' | sort -u | tr '\n' ' ')
      [ "$cm" = "1 " ] && pass "shared GPU, batch process: its dispatching HIP queue got one CU mask (hipExtStreamCreateWithCUMask)" ||
        fail "shared GPU, batch process: CU masks of its dispatching queues: '$cm'" "$(cat "$f")"
    fi
  else
    fail "shared GPU, $who process: exit $rc" "$(tail -5 "$out")"
  fi
done

# --- a paused CP keeps packets pending
CTL=$TMP/ctl
mkdir -p "$CTL"
start_bg "${NULLGPU[@]}" GPUQ_NULLGPU_CONTROL="$CTL" GPUQ_NULLGPU_TRUTH="$TMP/pause.%p" HSA_ENABLE_SDMA=0 \
  "$HIP" latency 0 50 1000 > "$TMP/pause.out" 2>&1
PZ=$BG_PID
f=$TMP/pause.$PZ
# dump: ask the CP for the truth file and wait until it is written.
dump() {
  touch "$CTL/dump"
  while [ -e "$CTL/dump" ] && kill -0 "$PZ" 2> /dev/null; do sleep 0.02; done
}
# First the process's own launches must have started (not ROCr's init).
for _ in $(seq 500); do
  dump
  [ -f "$f" ] && [ "$(sum "$f" 'owner=client' write_index)" -gt 0 ] && break
  sleep 0.02
done
touch "$CTL/pause"
pending=0
for _ in $(seq 500); do
  dump
  [ -f "$f" ] && pending=$(sum "$f" 'owner=client' pending)
  [ "$pending" -gt 0 ] && break
  sleep 0.02
done
if [ "$pending" -gt 0 ] && grep -q 'paused=1' "$f"; then
  pass "CP paused: $pending packet(s) pending on the HIP queue (write index - read index)"
else
  fail "CP paused but nothing pending" "$(cat "$f" 2> /dev/null)"
fi
rm -f "$CTL/pause"
wait "$PZ"
rc=$?
p=$(sum "$TMP/pause.$PZ" '' pending)
[ "$rc" = 0 ] && [ "$p" = 0 ] && pass "CP resumed: the process completes, nothing pending at exit" ||
  fail "after resume: exit $rc, pending $p" "$(tail -5 "$TMP/pause.out")"
summary

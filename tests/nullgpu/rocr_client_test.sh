#!/usr/bin/env bash
# rocr_client (the HSA-API client the simulator tier runs in its guest) on
# the null GPU of this host, without a KFD: its queues, packets and the
# thunk's truth agree; a paused CP leaves the packets pending; and
# GPUQ_NULLGPU_KFD=1 on a host whose /dev/kfd is no KFD char device makes
# hsa_init fail, naming it (forwarding is never silently skipped).
# Usage: rocr_client_test.sh SRC NULLGPU_LIB ROCR_CLIENT
set -u
SRC=$1 LIB=$2 CLIENT=${3-}
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
procs_init
. "$SRC/tests/nullgpu/nullgpu_env.sh"
nullgpu_require "$LIB"
if [ -z "$CLIENT" ] || [ ! -x "$CLIENT" ]; then
  skip "rocr_client not built: Debian's libhsa-runtime-dev (hsa/hsa.h) is missing"
  summary
  exit 77
fi

# CLIENT_IN FILE: runs CLIENT with its commands from FILE (a background job
# of this shell would read /dev/null).
CLIENT_IN=(bash -c 'exec "$0" < "$1"' "$CLIENT")
printf 'queue q1 0 128\nqueue q2 1 256\nsubmit q1 40\nsubmit q2 25 barrier\ndestroy q2\ntruth\nexit\n' > "$TMP/run.in"
run_group "${NULLGPU[@]}" GPUQ_NULLGPU_GPUS=2xgfx90a GPUQ_NULLGPU_TRUTH="$TMP/run.truth" \
  HSA_ENABLE_SDMA=0 "${CLIENT_IN[@]}" "$TMP/run.in" > "$TMP/run.out" 2>&1
f=$TMP/run.truth
if [ "$RUN_RC" = 0 ] && grep -q '^READY .* gpus=2' "$TMP/run.out" && ! grep -q '^BAD' "$TMP/run.out" && [ -f "$f" ]; then
  pass "rocr_client on 2 null gfx90a: exit 0, every command as expected"
else
  fail "rocr_client: exit $RUN_RC" "$(tail -20 "$TMP/run.out")"
  summary
  exit 1
fi
n=$(truth_queues "$f" 'owner=client' | wc -l) u=$(truth_queues "$f" 'owner=rocr_internal' | wc -l)
[ "$n" = 2 ] && [ "$u" -ge 1 ] && pass "the thunk saw the 2 client queues and $u ROCr utility queue(s)" ||
  fail "client queues $n (want 2), utility queues $u (want >= 1)" "$(cat "$f")"
w=$(sum "$f" 'owner=client' write_index) d=$(sum "$f" 'owner=client' dispatches) b=$(sum "$f" 'owner=client' barriers)
[ "$w" = 65 ] && [ "$d" = 40 ] && [ "$b" = 25 ] && pass "packets ROCr wrote = the client's: 40 dispatches + 25 barriers" ||
  fail "write indexes $w (want 65), dispatches $d (want 40), barriers $b (want 25)" "$(cat "$f")"
grep -q 'kfd=0' "$f" && [ "$(sum "$f" '' kfd_queue_id)" = "-$(truth_queues "$f" | wc -l)" ] &&
  pass "no KFD forwarding without GPUQ_NULLGPU_KFD (kfd=0, no KFD queue ids)" || fail "forwarding without being asked" "$(cat "$f")"

printf 'queue q1 0 128\nsubmit q1 30 nowait\nexit\n' > "$TMP/paused.in"
run_group "${NULLGPU[@]}" GPUQ_NULLGPU_PAUSED=1 GPUQ_NULLGPU_TRUTH="$TMP/paused.truth" HSA_ENABLE_SDMA=0 \
  "${CLIENT_IN[@]}" "$TMP/paused.in" > "$TMP/paused.out" 2>&1
p=$(sum "$TMP/paused.truth" 'owner=client' pending)
[ "$RUN_RC" = 0 ] && [ "$p" = 30 ] && pass "paused CP: the 30 packets written stay pending" ||
  fail "paused CP: exit $RUN_RC, pending $p (want 30)" "$(cat "$TMP/paused.out" "$TMP/paused.truth")"

if [ -c /dev/kfd ] && grep -qw kfd /proc/devices; then
  skip "this host has a KFD (/dev/kfd): the refusal case needs one without"
else
  echo exit > "$TMP/kfd.in"
  run_group "${NULLGPU[@]}" GPUQ_NULLGPU_KFD=1 "${CLIENT_IN[@]}" "$TMP/kfd.in" > "$TMP/kfd.out" 2>&1
  [ "$RUN_RC" != 0 ] && grep -q 'BAD hsa_init' "$TMP/kfd.out" && grep -q 'not the kfd char device' "$TMP/kfd.out" &&
    pass "GPUQ_NULLGPU_KFD=1 without a KFD: hsa_init fails, the thunk names why" ||
    fail "GPUQ_NULLGPU_KFD=1 without a KFD: exit $RUN_RC" "$(cat "$TMP/kfd.out")"
fi
summary

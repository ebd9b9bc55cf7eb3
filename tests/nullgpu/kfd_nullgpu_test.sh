#!/usr/bin/env bash
# Debian's ROCr 6.4.3 (sid) and 7.2.4 (experimental) running on the null GPU
# at the KFD interface (kfd_nullgpu.c, an LD_PRELOAD standing for amdkfd's
# /dev/kfd ioctls, its sysfs topology and the render node's libdrm_amdgpu
# queries of a gfx90a; test only, never used by the agent). ROCr >= 6.3
# links the thunk in, so the null thunk of nullgpu.c cannot drive it.
# In each cached root of rocm_stacks.sh (chroot in a private mount
# namespace with /proc, /sys and /dev, as a container with its own ROCm):
#   - rocminfo lists the CPU agent and one gfx90a (sramecc+, xnack-), and
#     two with GPUQ_NULLGPU_GPUS=2, exit 0;
#   - rocr_client (compiled here against the root's own hsa.h) on 2 null
#     GPUs creates queues, writes packets and rings doorbells, one per
#     packet and as HIP 7 replays a graph (batch q3 300 256 mixed: 2
#     rings), and with AMD's extended kernel dispatch packets as CLR
#     writes them on gfx1250 (batch q4 200 64 ext: 4 rings); the null CP
#     consumes them: the truth file's per-queue dispatches and barriers =
#     what the client says it wrote, nothing pending, ROCr's utility queue
#     seen, queues destroyed, hsa_shut_down and exit 0;
#   - a paused CP leaves the packets pending, from the start
#     (GPUQ_NULLGPU_PAUSED) or by the control directory's "pause" file,
#     whose "dump" file makes it write the truth then and removes it;
#   - KFD forwarding (GPUQ_NULLGPU_KFD=1) with no KFD: /dev/kfd does not
#     open and one line says why (the QEMU simulator tier forwards for
#     real: tests/kernel/sim);
#   - ROCr's own blit kernels (its copies and fills without SDMA) are
#     performed: rocr_client's copy command round-trips on both GPUs;
#   - gpuq-agent --doorbells=uprobe --hsa-runtime <the root's ROCr> counts
#     the client's rings and its packets by type = the truth.
# Usage: kfd_nullgpu_test.sh SRC AGENT KFDNULL_LIB
set -u
SRC=$1 AGENT=$2 LIB=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/doorbell_agent.sh"
use_background_cleanup
. "$SRC/tests/nullgpu/rocm_stacks.sh"
. "$SRC/tests/nullgpu/nullgpu_env.sh" # kfdnull_require, kfdnull_rocr_stack, truth_queues, sum
kfdnull_require "ROCm 6.4/7.2" "$LIB"

# client_field OUT NAME KEY: KEY of the client's "QUEUE NAME gpu=..." line.
client_field() { sed -n "s/^QUEUE $2 gpu=.* $3=\\([0-9]*\\).*/\\1/p" "$1"; }

CMDS='queue q1 0 128
queue q2 1 256
submit q1 40
submit q1 25 barrier
submit q2 10
queue q3 0 4096
batch q3 300 256 mixed
queue q4 1 4096
batch q4 200 64 ext
truth
destroy q1
destroy q2
destroy q3
destroy q4
shutdown
exit'
STACKS=0
for stack in 6.4 7.2; do
  kfdnull_rocr_stack "$stack" kfdnull "$LIB" || continue
  PRE=(env "LD_PRELOAD=$D/libgpuq_kfdnull.so")

  # rocminfo: the CPU agent and the null gfx90a(s)
  for n in 1 2; do
    run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_GPUS=$n rocminfo > "$TMP/ri-$stack-$n.out" 2>&1
    gpus=$(grep -c 'amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-' "$TMP/ri-$stack-$n.out")
    cpus=$(grep -cE '^ +Device Type: +CPU' "$TMP/ri-$stack-$n.out")
    [ "$RUN_RC" = 0 ] && [ "$gpus" = "$n" ] && [ "$cpus" = 1 ] &&
      pass "ROCm $stack ($ROCM_VERSION): rocminfo lists 1 CPU agent and $n gfx90a:sramecc+:xnack- ($(grep -m1 'Marketing Name:.*null' "$TMP/ri-$stack-$n.out" | sed 's/^ *//;s/  */ /g;s/ *$//')), exit 0" ||
      fail "ROCm $stack: rocminfo with $n GPUs: exit $RUN_RC, $cpus CPU and $gpus gfx90a agents" "$(tail -30 "$TMP/ri-$stack-$n.out")"
  done

  # rocr_client: the packets written = the packets the null CP consumed
  printf '%s\n' "$CMDS" > "$R$D/run.in"
  run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_GPUS=2 GPUQ_NULLGPU_TRUTH="$D/truth.%p" \
    bash -c 'exec "$0" < "$1"' "$D/rocr_client" "$D/run.in" > "$TMP/rc-$stack.out" 2>&1
  out=$TMP/rc-$stack.out
  f=$(ls "$R$D"/truth.* 2> /dev/null | head -1)
  if [ "$RUN_RC" = 0 ] && grep -q '^READY .* gpus=2' "$out" && grep -q '^OK hsa_shut_down' "$out" &&
    ! grep -q '^BAD' "$out" && [ -n "$f" ]; then
    pass "ROCm $stack: rocr_client on 2 null gfx90a (4 queues, 75 single rings, 300 packets in 2 batches, 200 with AMD extended kernel dispatches in 4, destroy, hsa_shut_down): exit 0"
  else
    fail "ROCm $stack: rocr_client exit $RUN_RC" "$(tail -20 "$out")"
    continue
  fi
  cp "$f" "$TMP/truth-$stack"
  f=$TMP/truth-$stack
  n=$(truth_queues "$f" 'owner=client' | wc -l) u=$(truth_queues "$f" 'owner=rocr_internal' | wc -l)
  [ "$n" = 4 ] && [ "$u" -ge 1 ] && pass "ROCm $stack: the null KFD saw the 4 client queues and $u ROCr utility queue(s)" ||
    fail "ROCm $stack: client queues $n (want 4), internal $u (want >= 1)" "$(cat "$f")"
  [ "$(truth_queues "$f" 'owner=client' | grep -c ' node=2 ')" = 2 ] &&
    pass "ROCm $stack: q2 and q4 are on the second GPU (node 2, a doorbell page of its own)" ||
    fail "ROCm $stack: not 2 client queues on node 2" "$(cat "$f")"
  for q in q1 q2 q3 q4; do
    ring=$(sed -n "s/^QUEUE $q created .* ring=\\(0x[0-9a-f]*\\).*/\\1/p" "$out")
    line=$(truth_queues "$f" "ring=$ring ")
    want="written=$(client_field "$out" $q written) dispatches=$(client_field "$out" $q dispatches) ext_dispatches=$(client_field "$out" $q ext_dispatches) barrier_dispatches=$(client_field "$out" $q barrier_dispatches) barriers=$(client_field "$out" $q barriers)"
    got="written=$(tv "$line" consumed) dispatches=$(tv "$line" dispatches) ext_dispatches=$(tv "$line" ext_dispatches) barrier_dispatches=$(tv "$line" barrier_dispatches) barriers=$(tv "$line" barriers)"
    [ -n "$line" ] && [ "$want" = "$got" ] && [ "$(tv "$line" pending)" = 0 ] && [ "$(tv "$line" live)" = 0 ] &&
      pass "ROCm $stack: $q ($(client_field "$out" $q rings) rings): the null CP consumed what the client wrote ($got), none pending, destroyed" ||
      fail "ROCm $stack: $q: client $want, null CP $got" "$(cat "$f" "$out")"
  done
  d=$(sum "$f" owner=client dispatches) e=$(sum "$f" owner=client ext_dispatches) b=$(sum "$f" owner=client barriers)
  [ "$d $e $b" = "425 150 150" ] && pass "ROCm $stack: truth on the client queues: 425 kernel_dispatch (150 of them AMD extended), 150 barrier" ||
    fail "ROCm $stack: truth $d dispatches ($e extended) $b barriers, want 425 150 150" "$(cat "$f")"

  # a paused CP: the packets stay pending
  printf 'queue q1 0 128\nsubmit q1 30 nowait\nexit\n' > "$R$D/paused.in"
  run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_PAUSED=1 GPUQ_NULLGPU_TRUTH="$D/paused.%p" \
    bash -c 'exec "$0" < "$1"' "$D/rocr_client" "$D/paused.in" > "$TMP/paused-$stack.out" 2>&1
  p=$(ls "$R$D"/paused.* 2> /dev/null | head -1)
  [ "$RUN_RC" = 0 ] && [ -n "$p" ] && [ "$(sum "$p" owner=client pending)" = 30 ] && [ "$(sum "$p" owner=client consumed)" = 0 ] &&
    pass "ROCm $stack: a paused null CP leaves the 30 packets pending" ||
    fail "ROCm $stack: paused run exit $RUN_RC" "$(cat "$TMP/paused-$stack.out" "$p" 2> /dev/null)"
  # the same by the control directory, whose dump comes before any packet
  mkdir -p "$R$D/ctl"
  touch "$R$D/ctl/pause" "$R$D/ctl/dump"
  printf 'queue q1 0 128\nsubmit q1 30 nowait\nexit\n' > "$R$D/ctl.in"
  run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_CONTROL="$D/ctl" GPUQ_NULLGPU_TRUTH="$D/ctl.%p" \
    bash -c 'exec "$0" < "$1"' "$D/rocr_client" "$D/ctl.in" > "$TMP/ctl-$stack.out" 2>&1
  p=$(ls "$R$D"/ctl.[0-9]* 2> /dev/null | head -1)
  [ "$RUN_RC" = 0 ] && [ -n "$p" ] && [ ! -e "$R$D/ctl/dump" ] && [ "$(sum "$p" owner=client pending)" = 30 ] &&
    [ "$(sum "$p" owner=client consumed)" = 0 ] && grep -q 'paused=1' "$p" &&
    pass "ROCm $stack: the control directory's pause file leaves the 30 packets pending; its dump file was taken (truth written, file removed)" ||
    fail "ROCm $stack: control run exit $RUN_RC, dump file $([ -e "$R$D/ctl/dump" ] && echo left || echo taken)" "$(cat "$TMP/ctl-$stack.out" "$p" 2> /dev/null)"
  # forwarding asked for where there is no KFD
  run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_KFD=1 rocminfo > "$TMP/fwd-$stack.out" 2>&1
  line=$(grep -c '^kfdnull: GPUQ_NULLGPU_KFD=1 but no KFD GPU at topology node 1 ' "$TMP/fwd-$stack.out")
  [ "$RUN_RC" != 0 ] && [ "$line" = 1 ] &&
    pass "ROCm $stack: KFD forwarding without a KFD: rocminfo exit $RUN_RC, one line: $(grep '^kfdnull:' "$TMP/fwd-$stack.out")" ||
    fail "ROCm $stack: KFD forwarding without a KFD: rocminfo exit $RUN_RC, $line lines naming it" "$(tail -20 "$TMP/fwd-$stack.out")"

  # ROCr's own copies: its blit kernels on its utility queue, performed
  printf 'copy 0 65536\ncopy 1 4099\nshutdown\nexit\n' > "$R$D/copy.in"
  run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_GPUS=2 GPUQ_NULLGPU_TRUTH="$D/copy.%p" \
    bash -c 'exec "$0" < "$1"' "$D/rocr_client" "$D/copy.in" > "$TMP/copy-$stack.out" 2>&1
  p=$(ls "$R$D"/copy.* 2> /dev/null | head -1)
  b=$([ -n "$p" ] && sum "$p" owner=rocr_internal blits)
  [ "$RUN_RC" = 0 ] && [ "$(grep -c '^COPY .* ok' "$TMP/copy-$stack.out")" = 2 ] && ! grep -q '^BAD' "$TMP/copy-$stack.out" &&
    [ "${b:-0}" -ge 6 ] &&
    pass "ROCm $stack: ROCr's blit kernels (CopyAligned, CopyMisaligned, Fill) performed by the null CP: hsa_memory_copy to and from GPU memory (aligned, misaligned) and hsa_amd_memory_fill round-trip on both GPUs ($b blits)" ||
    fail "ROCm $stack: ROCr's copies: exit $RUN_RC, $b blits" "$(cat "$TMP/copy-$stack.out" "$p" 2> /dev/null)"

  # the agent's doorbell uprobes on this root's ROCr, against the truth
  if [ ! -x "$AGENT" ]; then
    skip "ROCm $stack: gpuq-agent not built"
    continue
  fi
  lib=$(readlink -f "$R/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")
  start_doorbell_agent "$lib" "by symbol to ROCr $ROCM_VERSION (${lib##*/} in the root)"
  rm -f "$R$D"/truth.*
  run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_GPUS=2 GPUQ_NULLGPU_TRUTH="$D/truth.%p" \
    bash -c 'exec "$0" < "$1"' "$D/rocr_client" "$D/run.in" > "$TMP/rca-$stack.out" 2>&1
  f=$(ls "$R$D"/truth.* 2> /dev/null | head -1)
  [ "$RUN_RC" = 0 ] && ! grep -q '^BAD' "$TMP/rca-$stack.out" && [ -n "$f" ] ||
    fail "ROCm $stack: rocr_client under the agent: exit $RUN_RC" "$(tail -20 "$TMP/rca-$stack.out")"
  rings=0
  for q in q1 q2 q3 q4; do rings=$((rings + $(client_field "$TMP/rca-$stack.out" $q rings))); done
  for _ in $(seq 100); do
    [ "$(metric_sum 'gpuq_doorbells_total\{')" = "$rings" ] && break
    sleep 0.1
  done
  sleep 0.5 # a poll more: an over-count would show by now
  got=$(metric_sum 'gpuq_doorbells_total\{')
  [ "$got" = "$rings" ] && pass "ROCm $stack: gpuq_doorbells_total = $got = the client's rings (75 single, 2 + 4 batches)" ||
    fail "ROCm $stack: gpuq_doorbells_total $got, the client rang $rings" "$(curl -s "$URL" | grep '^gpuq_doorbell'; cat "$TMP/agent.log")"
  want=$(truth_packets "$f")
  got=$(doorbell_packets)
  [ "$got" = "$want" ] && [ "$(sum "$f" owner=client ext_dispatches)" = 150 ] &&
    pass "ROCm $stack: gpuq_doorbell_packets_total by type (kernel_dispatch, of which format amd_ext, of which with the barrier bit (gpuq_doorbell_barrier_dispatches_total), barrier, other) = the null CP's truth ($got): q4's 150 AMD extended kernel dispatches (gfx1250's packet) among the dispatches" ||
    fail "ROCm $stack: doorbell packets by type $got, truth $want" "$(curl -s "$URL" | grep '^gpuq_doorbell_packets'; cat "$f")"
  stop_bg "$AGENT_PID"
  [ "$STOP_RC" = 0 ] && pass "ROCm $stack: the agent exits 0 on SIGTERM" || fail "ROCm $stack: the agent exited $STOP_RC" "$(cat "$TMP/agent.log")"
done
[ "$STACKS" = 0 ] && {
  summary
  exit 77
}
summary

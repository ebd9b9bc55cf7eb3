#!/usr/bin/env bash
# Host tier of the doorbell uprobes on the REAL ROCr: gpuq-agent
# --doorbells=uprobe attaches by symbol to Debian's
# /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 (ROCr 5.2.3), real HIP
# programs ring doorbells on the null GPU (one on the host; an inference-like
# run over 8 GPUs in a docker-shaped cgroup; the shared-GPU pair, latency and
# batch, each in a cgroup of its own, at the same time on one GPU), and
# /metrics must count exactly their rings, per container. This host has no kprobes and no /dev/kfd: the agent runs
# without amdkfd (self-metrics, uprobes and the sampler only), so the
# doorbells are labelled gpu_id="unknown" (no KFD queue was learned).
#
# Two truths are compared with the agent:
#   - ring_count.so (LD_PRELOAD) counts every call of the exported
#     hsa_signal_store_{screlease,relaxed} on a doorbell signal: exactly the
#     calls the uprobes see, counted independently of BPF;
#   - the null thunk's per-queue truth: the rung doorbells belong to HIP's
#     queues (ROCr passed them to hsaKmtCreateQueue, amd_queue_t = wptr - 56),
#     and on HIP 5.2.3 every packet is rung once, so rings = the packets
#     written on HIP queues (write index at exit).
# What the uprobes cannot see: ROCr's internal queues (utility and blit
# queues, 64 packets) ring through its C++ doorbell signal, not through the
# exported function; the thunk sees their doorbell memory change, the
# uprobes and ring_count.so see nothing. They are reported, not counted.
# Last, rocr_client destroys a queue it rang and stores on the signal ROCr
# makes next, which gets the destroyed doorbell's memory from its signal
# pool: those completion-signal stores must not count (the probe reads the
# signal again after hsa_queue_destroy returns). Then it creates a queue of
# another size, which ROCr gives the same hsa_queue_t and doorbell signal
# but a new ring: its packets must be classified from the new ring. And a
# third queue gets 300 packets as HIP 7 replays a graph: batches of up to
# 256 slots reserved at once, one doorbell store of each batch's last index
# (2 rings): the packets count, each by its own slot, the rings as rings.
# Usage: doorbell_real_test.sh SRC AGENT NULLGPU_LIB HIP_CLIENT RING_COUNT_LIB [ROCR_CLIENT]
set -u
SRC=$1 AGENT=$2 LIB=$3 HIP=$4 RC_LIB=$5 ROCR=${6-}
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/doorbell_agent.sh"
use_background_cleanup
. "$SRC/tests/nullgpu/nullgpu_env.sh"
nullgpu_require "$LIB" "$HIP"
HSA=/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1
if [ "$(id -u)" != 0 ]; then
  skip "doorbell uprobes on the real ROCr: needs root (uprobes, BPF)"
  summary
  exit 77
fi
if [ ! -f "$RC_LIB" ]; then
  skip "ring_count.so was not built"
  summary
  exit 77
fi
UNIFIED=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
  [ -f "$d/cgroup.procs" ] && [ "$(stat -f -c %T "$d")" = cgroup2fs ] && UNIFIED=$d && break
done
# Docker-shaped cgroups: the inference run, the latency and the batch
# process, and the signal-reuse client.
IDS=() CGS=()
for k in 1 2 3 4; do
  id=$(printf 'ab5a%d%059d' "$k" $$)
  if [ -n "$UNIFIED" ] && mkdir -p "$UNIFIED/docker/$id" 2> /dev/null; then
    IDS+=("$id")
    CGS+=("$UNIFIED/docker/$id")
  fi
done
cleanup_cgroups() {
  local c
  for c in "${CGS[@]}"; do rmdir "$c" 2> /dev/null; done
  [ -n "$UNIFIED" ] && rmdir "$UNIFIED/docker" 2> /dev/null
}
on_exit cleanup_cgroups
# in_cgroup CG CMD...: CMD in cgroup CG (started with start_bg).
IN_CG=(bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' in-cgroup)

start_doorbell_agent "$HSA" "by symbol to Debian's $HSA"

ENVS=(GPUQ_NULLGPU_TRUTH="$TMP/truth.%p" GPUQ_RINGCOUNT_FILE="$TMP/rings.%p"
  LD_PRELOAD="$RC_LIB" HSA_ENABLE_SDMA=0)
# Host process: 2 streams, 25 launches each, a stream sync after each.
run_group "${NULLGPU[@]}" "${ENVS[@]}" "$HIP" rings 2 25 > "$TMP/host.out" 2>&1
[ "$RUN_RC" = 0 ] && pass "host HIP process: $(tail -1 "$TMP/host.out")" ||
  fail "host HIP process exit $RUN_RC" "$(tail -5 "$TMP/host.out")"
HOST_PID=$(ls "$TMP"/truth.* | sed 's/.*truth\.//' | head -1)
# Containers: inference-like over 8 GPUs; then the shared-GPU pair at once.
CTR=()
if [ ${#CGS[@]} = 4 ]; then
  start_bg "${IN_CG[@]}" "${CGS[0]}" "${NULLGPU[@]}" "${ENVS[@]}" GPUQ_NULLGPU_GPUS=8xgfx90a \
    "$HIP" infer 8 2 3 > "$TMP/ctr0.out" 2>&1
  P0=$BG_PID
  wait "$P0"
  rc0=$?
  start_bg "${IN_CG[@]}" "${CGS[1]}" "${NULLGPU[@]}" "${ENVS[@]}" "$HIP" latency 0 100 1000 > "$TMP/ctr1.out" 2>&1
  P1=$BG_PID
  start_bg "${IN_CG[@]}" "${CGS[2]}" "${NULLGPU[@]}" "${ENVS[@]}" "$HIP" batch 0 1000 > "$TMP/ctr2.out" 2>&1
  P2=$BG_PID
  wait "$P1"
  rc1=$?
  wait "$P2"
  rc2=$?
  for k in 0 1 2; do
    eval "rc=\$rc$k pid=\$P$k"
    [ "$rc" = 0 ] && pass "container ${IDS[k]:0:12}: $(tail -1 "$TMP/ctr$k.out")" ||
      fail "container ${IDS[k]:0:12}: exit $rc" "$(tail -5 "$TMP/ctr$k.out")"
    CTR+=("$pid")
  done
fi

# rings PID: ring_count.so's total for that process.
rings() { sed -n 's/.* rings=//p' "$TMP/rings.$1" 2> /dev/null | awk '{ s += $1 } END { print s + 0 }'; }
# hip_packets PID: packets written on the process's HIP queues (thunk truth).
hip_packets() { truth_queues "$TMP/truth.$1" 'owner=client' | tr ' ' '\n' | sed -n 's/^write_index=//p' | awk '{ s += $1 } END { print s + 0 }'; }
value() { curl -s "$URL" | grep -E "^$1 " | awk '{ s += $NF } END { print s + 0 }'; }
# value_when SERIES WANT: SERIES's value once it is WANT, or after 10 s.
value_when() {
  for _ in $(seq 100); do
    [ "$(value "$1")" = "$2" ] && break
    sleep 0.1
  done
  value "$1"
}

check_process() { # NAME PID SERIES-REGEX LAUNCHES
  local name=$1 pid=$2 series=$3 launches=$4 want got pk d
  want=$(rings "$pid")
  pk=$(hip_packets "$pid")
  got=$(value_when "$series" "$want")
  [ "$want" -gt 0 ] && [ "$got" = "$want" ] &&
    pass "$name: gpuq_doorbells_total = $got = the rings ring_count.so counted" ||
    fail "$name: gpuq_doorbells_total $got, ring_count.so counted $want" "$(curl -s "$URL" | grep '^gpuq_doorbell')"
  d=$(curl -s "$URL" | grep -E "^gpuq_doorbell_packets_total\\{${series#*\\{} " | grep 'packet_type="kernel_dispatch"' | awk '{ s += $NF } END { print s + 0 }')
  [ "$d" = "$launches" ] && pass "$name: $d rings of kernel-dispatch packets = the program's $launches launches" ||
    fail "$name: $d kernel-dispatch rings, $launches launches" "$(curl -s "$URL" | grep '^gpuq_doorbell_packets')"
  [ "$want" = "$pk" ] && pass "$name: = the $pk packets ROCr wrote on the HIP queues (null thunk truth; one ring per packet)" ||
    fail "$name: $want rings, $pk packets on HIP queues (thunk truth)" "$(cat "$TMP/truth.$pid")"
  # Every rung doorbell belongs to a HIP queue the thunk created.
  local bad=0 q line
  while read -r line; do
    q=$(tv "$line" queue)
    line=$(truth_queues "$TMP/truth.$pid" | while read -r t; do
      w=$(tv "$t" wptr)
      [ "$(printf '0x%x' $((w - 56)))" = "$q" ] && echo "$t"
    done)
    [ "$(tv "$line" owner)" = client ] || bad=$((bad + 1))
  done < <(grep '^ring ' "$TMP/rings.$pid")
  [ "$bad" = 0 ] && pass "$name: every rung doorbell's queue_ptr is a HIP queue of the thunk (wptr - 56)" ||
    fail "$name: $bad rung doorbells not on a HIP queue" "$(cat "$TMP/rings.$pid" "$TMP/truth.$pid")"
  local internal
  internal=$(truth_queues "$TMP/truth.$pid" 'owner=rocr_internal' | tr ' ' '\n' | sed -n 's/^doorbell_changes=//p' | awk '{ s += $1 } END { print s + 0 }')
  [ "$internal" -gt 0 ] && pass "$name: ROCr's internal queues rang too ($internal doorbell changes seen by the thunk), invisible to the uprobes: not counted" ||
    fail "$name: no internal-queue doorbell activity seen"
}
launches() { grep -o 'launches=[0-9]*' "$1" | cut -d= -f2; }
# The process whose truth file is not the host's: the one started as PID
# (its truth file carries the pid of the process exec'd in the cgroup).
truth_pid_of() { # CGROUP-INDEX
  local p
  for p in $(ls "$TMP"/truth.* | sed 's/.*truth\.//'); do
    [ "$p" = "$HOST_PID" ] && continue
    [ "$p" = "${CTR[$1]}" ] && echo "$p" && return
  done
}
check_process "host process" "$HOST_PID" 'gpuq_doorbells_total\{container="",[^}]*\}' "$(launches "$TMP/host.out")"
if [ ${#CTR[@]} = 3 ]; then
  for k in 0 1 2; do
    name=(inference-like latency batch)
    check_process "container ${name[k]} (${IDS[k]:0:12})" "$(truth_pid_of "$k")" \
      "gpuq_doorbells_total\\{container=\"${IDS[k]:0:12}\",[^}]*\\}" "$(launches "$TMP/ctr$k.out")"
  done
else
  skip "per-container doorbells: no writable cgroup v2 hierarchy here"
fi
# A destroyed queue's doorbell signal memory, made a completion signal by
# the next hsa_signal_create: 20 doorbells, then 50 stores that are none.
if [ -z "$ROCR" ] || [ ! -x "$ROCR" ]; then
  skip "signal reuse after hsa_queue_destroy: rocr_client not built (Debian's libhsa-runtime-dev)"
elif [ ${#CGS[@]} != 4 ]; then
  skip "signal reuse after hsa_queue_destroy: no writable cgroup v2 hierarchy here"
else
  # Then a queue of another size: ROCr 5.2.3 gives it q1's hsa_queue_t and
  # doorbell signal again but a ring of its own, so a probe that kept q1's
  # ring would classify q2's packets from q1's consumed slots.
  printf '%s\n' 'queue q1 0 64' 'submit q1 20' 'destroy q1' 'reuse q1 50' \
    'queue q2 0 4096' 'submit q2 15 barrier' 'submit q2 5' \
    'queue q3 0 4096' 'batch q3 300 256 mixed' 'queue q4 0 4096' 'batch q4 200 64 ext' \
    'truth' 'exit' > "$TMP/reuse.in"
  run_group "${IN_CG[@]}" "${CGS[3]}" bash -c 'exec "$@" < "$0"' "$TMP/reuse.in" \
    "${NULLGPU[@]}" "${ENVS[@]}" "$ROCR" > "$TMP/reuse.out" 2>&1
  reused=$(grep '^REUSED q1 ' "$TMP/reuse.out")
  if [ "$RUN_RC" = 0 ] && [ -n "$reused" ] && ! grep -q '^BAD' "$TMP/reuse.out"; then
    pass "rocr_client: 20 doorbells, hsa_queue_destroy, then ROCr's next signal has the doorbell's memory ($reused)"
  else
    fail "rocr_client did not get the destroyed doorbell's memory back (exit $RUN_RC)" "$(cat "$TMP/reuse.out")"
  fi
  # queue_field NAME FIELD: FIELD of NAME's QUEUE line.
  queue_field() { sed -n "s/^QUEUE $1 created .*$2=\\([^ ]*\\).*/\\1/p" "$TMP/reuse.out"; }
  q1="at=$(queue_field q1 at) doorbell=$(queue_field q1 doorbell) ring=$(queue_field q1 ring)"
  q2="at=$(queue_field q2 at) doorbell=$(queue_field q2 doorbell) ring=$(queue_field q2 ring)"
  [ "${q1% ring=*}" = "${q2% ring=*}" ] && [ "${q1#* ring=}" != "${q2#* ring=}" ] &&
    pass "rocr_client: q2 (4096 packets) got q1's hsa_queue_t and doorbell signal and a ring of its own (q1 $q1, q2 $q2)" ||
    fail "rocr_client: q2 did not reuse q1's queue and doorbell with a new ring (q1 $q1, q2 $q2)" "$(cat "$TMP/reuse.out")"
  ctr="container=\"${IDS[3]:0:12}\""
  series="gpuq_doorbells_total\\{$ctr,[^}]*\\}"
  # what rocr_client says it wrote on q3
  q3_field() { sed -n "s/^QUEUE q3 .* $1=\\([0-9]*\\).*/\\1/p" "$TMP/reuse.out"; }
  q3="rings=$(q3_field rings) dispatches=$(q3_field dispatches) barriers=$(q3_field barriers)"
  [ "$q3" = "rings=2 dispatches=225 barriers=75" ] &&
    pass "rocr_client: q3 wrote 300 packets in 2 batches ($q3)" ||
    fail "rocr_client: q3 did not batch as asked ($q3)" "$(cat "$TMP/reuse.out")"
  # q4: AMD's extended kernel dispatch packets, as CLR writes them on gfx1250
  q4=$(sed -n 's/^QUEUE q4 .* \(rings=[0-9]*\) \(dispatches=[0-9]*\) \(ext_dispatches=[0-9]*\) \(barrier_dispatches=[0-9]*\) \(barriers=[0-9]*\).*/\1 \2 \3 \4 \5/p' "$TMP/reuse.out")
  reuse_truth=$TMP/truth.$(sed -n 's/^READY \([0-9]*\).*/\1/p' "$TMP/reuse.out")
  q4_truth=$(truth_queues "$reuse_truth" owner=client |
    awk '/ ext_dispatches=[1-9]/' | tr ' ' '\n' | grep -E '^(dispatches|ext_dispatches|barrier_dispatches|barriers)=' | tr '\n' ' ')
  [ "$q4" = "rings=4 dispatches=150 ext_dispatches=150 barrier_dispatches=100 barriers=50" ] &&
    [ "$q4_truth" = "dispatches=150 ext_dispatches=150 barrier_dispatches=100 barriers=50 " ] &&
    pass "rocr_client: q4 wrote 200 packets in 4 batches, 150 of them AMD extended kernel dispatches ($q4), consumed by the null CP as dispatches ($q4_truth)" ||
    fail "rocr_client: q4 did not write or the CP did not consume its extended dispatches (client: $q4; truth: $q4_truth)" "$(cat "$TMP/reuse.out")"
  value_when "$series" 46 > /dev/null
  sleep 0.5 # a poll more: a count of the reused stores would show by now
  got=$(value "$series")
  [ "$got" = 46 ] && pass "reuse: gpuq_doorbells_total = 46 rings (20 on q1, 20 on q2, 2 batches on q3, 4 on q4), the 50 stores on the reused signal not counted" ||
    fail "reuse: gpuq_doorbells_total $got, want 46 (the 50 stores on the reused memory are no doorbells)" "$(curl -s "$URL" | grep "${IDS[3]:0:12}")"
  packets="$(value "gpuq_doorbell_packets_total\\{$ctr,[^}]*packet_type=\"kernel_dispatch\"[^}]*\\}") $(value "gpuq_doorbell_packets_total\\{$ctr,[^}]*packet_type=\"kernel_dispatch\",format=\"amd_ext\"\\}") $(value "gpuq_doorbell_packets_total\\{$ctr,[^}]*packet_type=\"barrier\"[^}]*\\}")"
  [ "$packets" = "400 150 140" ] && pass "reuse and batches: packets by their own slots: 400 kernel_dispatch (20 on q1, 5 on q2, 225 on q3, 150 on q4), 150 of them format=amd_ext (q4's), 140 barrier (15 on q2, 75 on q3, 50 on q4); q2's read from q2's own ring" ||
    fail "reuse and batches: kernel_dispatch, amd_ext and barrier packets $packets, want 400 150 140 (q2's slots read from q1's old ring? q3's batches counted as rings? q4's extended dispatches not dispatches?)" "$(curl -s "$URL" | grep "${IDS[3]:0:12}")"
  # rocr_client sets the barrier bit on the kernel dispatches of even write
  # indexes: what it says it wrote, and what the null CP consumed on every
  # queue (q1's 64 packets make the truth call it rocr_internal)
  bb=$(value "gpuq_doorbell_barrier_dispatches_total\\{$ctr,[^}]*\\}") bb_truth=$(sum "$reuse_truth" '' barrier_dispatches)
  bb_client=$(sed -n 's/^QUEUE q[1-4] gpu=.* barrier_dispatches=\([0-9]*\).*/\1/p' "$TMP/reuse.out" | awk '{ s += $1 } END { print s + 0 }')
  [ "$bb" = "$bb_client" ] && [ "$bb" = "$bb_truth" ] && [ "$bb" -gt 0 ] && [ "$bb" -lt 400 ] &&
    pass "reuse and batches: gpuq_doorbell_barrier_dispatches_total = $bb kernel dispatches with the barrier bit = what the client wrote = the null CP's count (of 400)" ||
    fail "reuse and batches: barrier-bit dispatches $bb, the client's $bb_client, the null CP's $bb_truth" "$(curl -s "$URL" | grep "${IDS[3]:0:12}")"
fi
total=$(value 'gpuq_doorbells_total\{[^}]*\}')
classes=$(value 'gpuq_doorbell_packets_total\{[^}]*\}')
# HIP 5.2.3 rings once per packet; only q3's 2 rings published 300.
extra=0
grep -q '^BATCHED q3 300 rings=2' "$TMP/reuse.out" 2> /dev/null && extra=298
grep -q '^BATCHED q4 200 rings=4' "$TMP/reuse.out" 2> /dev/null && extra=$((extra + 196))
[ -n "$total" ] && [ "$classes" = $((total + extra)) ] && pass "packets = rings + $extra (q3's and q4's batches) ($(curl -s "$URL" | grep '^gpuq_doorbell_packets_total' | grep -v ' 0$' | sed 's/.*packet_type="\([a-z_]*\)",format="\([a-z_]*\)"} \(.*\)/\1\/\2=\3/' | sort | uniq | tr '\n' ' '))" ||
  fail "packets $classes, rings $total + $extra"
dropped=$(value 'gpuq_events_dropped_total\{reason="doorbell_map_full"\}')
[ "$dropped" = 0 ] && pass "no doorbell lost to a full map" || fail "doorbell_map_full $dropped"
stop_bg "$AGENT_PID"
[ "$STOP_RC" = 0 ] && pass "the agent exits 0 on SIGTERM" || fail "the agent exited $STOP_RC on SIGTERM" "$(cat "$TMP/agent.log")"
summary

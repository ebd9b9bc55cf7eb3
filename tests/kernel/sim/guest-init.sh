#!/bin/busybox sh
# /init of the KFD simulator tier's guest (tests/kernel/run_sim_tier.sh
# builds the initramfs and boots it). Loads the simulator (a module named
# amdgpu: tests/kernel/sim), then, per hook mode (fentry, kprobe), runs the
# real gpuq-agent daemon against driver processes in three cgroups (two
# docker-style containers and the host) and compares every metric family it
# exports with the simulator's ground truth (/sys/kernel/debug/kfd_sim/truth,
# through sim_compare): lifecycle, an agent killed and restarted mid-run
# (seeded from sysfs), `--once`, a burst of creates/destroys, and the
# runlist / eviction / submission families when the agent exports them.
#
# Every result is one console line the host parses:
#   GPUQ-KTEST <kernel> <check> PASS|FAIL|SKIP <detail>
# Logs: "GPUQ-LOG <kernel> <group>| <line>", dmesg "GPUQ-DMESG <kernel>| ...",
# timings "GPUQ-KTIME <kernel> <step> <uptime>".
# shellcheck shell=dash
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
K=${GPUQ_KERNEL:-$(uname -r)}
# (sim_check prints its verdicts with it)
export GPUQ_KERNEL=$K
# GPUQ_ONLY (GPUQ_KTEST_ONLY on the host, a developer's knob): run only the
# named group of checks after the common setup; the host then reports every
# other check missing, so such a run never passes.
ONLY=${GPUQ_ONLY:-}
# GPUQ_SCOPE: run_sim_tier.sh splits a kernel's checks over guests that
# run side by side, one core each: "btf" runs every group of the simulator
# with its BTF (the runtime clients in btf-fentry, the fentry and kprobe
# tiers, record, short-lived), "nobtf" the nobtf group (the simulator
# reloaded without BTF: the args-kprobe and tracepoint tiers and their
# clients), "programs" the programs group; unset: all.
SCOPE=${GPUQ_SCOPE:-}
# SERIES: the kernel series this guest boots (K is the host's label for the
# guest: "7.3", "7.3-nobtf", "6.1-programs").
SERIES=${K%%-*}
# only GROUP: GROUP is in this guest's scope, and GPUQ_ONLY (GPUQ_KTEST_ONLY
# on the host) is empty or names GROUP, alone or in a comma-separated list
# (fentry,nobtf).
only() {
  case $SCOPE in
    programs | nobtf) [ "$1" = "$SCOPE" ] || return 1 ;;
    btf) case $1 in programs | nobtf) return 1 ;; esac ;;
  esac
  [ -z "$ONLY" ] || named "$1"
}
# named GROUP: GPUQ_ONLY names GROUP (a group that runs only when asked for).
named() { case ",$ONLY," in *",$1,"*) true ;; *) false ;; esac; }
# GPUQ_CLIENTS (run_sim_tier.sh's client_plan): the runtime client groups
# (rocr, hip-args, rocr-7.2-tp...) this guest runs, comma-separated; unset:
# every one.
CLIENTS=${GPUQ_CLIENTS:-}
client_on() { [ -z "$CLIENTS" ] || case ",$CLIENTS," in *",$1,"*) true ;; *) false ;; esac; }
SIM=/lib/kfd-sim
# the check lists the host expects (run_sim_tier.sh reads the same file)
. $SIM/check_lists.sh
PORT=9464
URL=http://127.0.0.1:$PORT/metrics
TRUTH=/sys/kernel/debug/kfd_sim/truth
KFD=/sys/class/kfd/kfd
LIFECYCLE="gpuq_queues gpuq_processes gpuq_queue_creates_total gpuq_queue_destroys_total gpuq_process_exits_total gpuq_queue_create_failures_total"
# The hooks every function tier must attach, and the tracepoint tier's
# (REQUIRED_PROBES, CONTEXT_PROBES, ARGS_CONTEXT_PROBES, TP_PROBE_NAMES):
# generated from the agent's hook table (tests/kernel/guest_hooks.cc).
. /etc/gpuq-hooks.sh
unset PROBES SCHED_PROBES TP_PROBES # the QEMU guest's "probe:function" pairs
LIFECYCLE_PROBES=$REQUIRED_PROBES
RUNLIST="gpuq_runlist_unmaps_total gpuq_runlist_unmap_duration_seconds_count gpuq_runlist_map_duration_seconds_count gpuq_runlist_failures_total gpuq_runlist_operations_total gpuq_queue_preemptions_total gpuq_queue_preempted_seconds_total"
EVICTION="gpuq_evictions_total gpuq_eviction_restores_total gpuq_evicted_processes gpuq_queues_evicted"
# The BTF tiers read the runlist at each HWS map (docs/kfd-probe-points.md).
OVERSUB="gpuq_runlist_oversubscribed gpuq_runlist_oversubscribed_maps_total gpuq_runlist_oversubscribed_seconds_total gpuq_runlist_entries gpuq_runlist_entry_limit"
# The simulator's writable parameters (the limits a runlist is held to).
SIMPARAM=/sys/module/amdgpu/parameters
SUBMISSION="gpuq_submissions_total gpuq_queue_pending_packets"

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t debugfs nodev /sys/kernel/debug 2> /dev/null
mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
mount -t cgroup2 none /sys/fs/cgroup
# The preemption model when it lets the kernel preempt programs ("full
# (lazy)" on 7.3), else empty (6.1: voluntary).
PREEMPTS=$(grep -E '\((full|lazy|rt)\)' /sys/kernel/debug/sched/preempt 2> /dev/null)
# Exact runs on a kernel that preempts programs. There a program run is
# skipped when another task sits preempted inside the same program on this
# CPU (docs/probe-tiers.md), and no boot option stops it on 7.3:
# sched_dynamic_mode() (kernel/sched/core.c) accepts only "full" and "lazy"
# where the architecture has lazy preemption. The scheduler's own rule does:
# a SCHED_FIFO task is preempted only by a task of a higher priority (never
# at a tick, never by a SCHED_OTHER task; kernel/sched/rt.c), so tasks that
# share one FIFO priority never preempt one another inside a program. Every
# process of this guest inherits FIFO priority 1 from init: the agents, the
# drivers, the shell. Kernel workers are not init's children: the
# simulator's process teardown and eviction workers run hooked functions
# (destroys, runlist unmaps) while FIFO drivers run the same programs, so
# the simulator's worker_fifo parameter (SIM_ARGS, every insmod) makes them
# FIFO 1 for the length of their work; two jobs exiting at once lost their
# teardown's destroys without it. One kind runs otherwise:
#  - the runtime clients (ROCr, HIP, rocBLAS: RUNTIME_SCHED, SCHED_OTHER).
#    ROCr busy-waits for completions and expects a time-shared CPU: as FIFO
#    tasks of one priority on one vCPU its waiting threads starved the rest
#    of the guest. Their null CP thread runs FIFO (GPUQ_NULLGPU_CP_FIFO=1),
#    so it is never preempted inside a program and takes the CPU whenever it
#    wakes. A client's own threads can still preempt one another at ticks,
#    but the KFD calls come from one of them: no run has lost a record
#    there since the rest of the guest went FIFO, and its checks are exact
#    like every other (a lost one fails, naming the drops).
# The skips group forces skips on purpose (forced_skips).
RUNTIME_SCHED=""
CP_FIFO=""
SIM_ARGS=""
if [ -n "$PREEMPTS" ]; then
  if chrt -f -p 1 $$; then
    RUNTIME_SCHED="chrt -o 0"
    CP_FIFO="GPUQ_NULLGPU_CP_FIFO=1"
    SIM_ARGS="worker_fifo=1"
  else
    echo "GPUQ-LOG $K init| chrt -f -p 1 failed: checks may see skipped programs"
  fi
fi
ip link set lo up

up() { cut -d' ' -f1 /proc/uptime; }
ktime() { echo "GPUQ-KTIME $K $1 $(up)"; }
result() { echo "GPUQ-KTEST $K $1 $2 $3"; }
pass() { result "$1" PASS "${2:-}"; }
fail() { result "$1" FAIL "${2:-}"; }
skip() { result "$1" SKIP "${2:-}"; }
dump() {
  local group="$1" f
  shift
  for f in "$@"; do
    [ -s "$f" ] && sed "s/^/GPUQ-LOG $K $group| /" "$f"
  done
}
elapsed() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }
# within SECONDS T0: true while less than SECONDS have passed since T0.
within() { awk -v s="$1" -v a="$2" -v b="$(up)" 'BEGIN { exit !(b - a < s) }'; }

# start_recorder CAP LOG LIMIT: `gpuq-agent record -o CAP` in the
# background (its pid in REC_PID), waiting up to LIMIT seconds for the
# capture file, which exists once its programs are attached.
start_recorder() {
  rm -f "$1"
  /bin/gpuq-agent record -o "$1" --no-runtime-lookup > "$2" 2>&1 &
  REC_PID=$!
  local t0
  t0=$(up)
  while [ ! -e "$1" ] && kill -0 $REC_PID 2> /dev/null && within "$3" "$t0"; do sleep 0.1; done
}

# stop_recorder: SIGINT to REC_PID, SIGKILL after 60 s; its exit status in
# REC_RC.
stop_recorder() {
  local t0
  kill -INT $REC_PID
  t0=$(up)
  while kill -0 $REC_PID 2> /dev/null && within 60 "$t0"; do sleep 0.1; done
  kill -KILL $REC_PID 2> /dev/null
  wait $REC_PID
  REC_RC=$?
}

finish() {
  ktime finished
  dmesg > /tmp/dmesg.txt
  if grep -qE 'WARNING:|BUG:|Oops|Call Trace|general protection' /tmp/dmesg.txt; then
    fail kernel-clean "dmesg has a kernel warning or oops (see GPUQ-DMESG lines)"
  else
    pass kernel-clean "no WARNING/BUG/Oops in dmesg"
  fi
  sed "s/^/GPUQ-DMESG $K| /" /tmp/dmesg.txt
  echo "GPUQ-KTEST-DONE $K"
  sync
  poweroff -f
}

echo # the firmware's last line has no newline
ktime userspace-up
echo "GPUQ-INFO $K uname $(uname -r)"

# ---- the simulator ----------------------------------------------------------
FLAVOR=$(cat $SIM/flavor)
insmod $SIM/amdgpu.ko $SIM_ARGS > /tmp/insmod.txt 2>&1
rc=$?
ktime insmod-done
nodes=$(ls $KFD/topology/nodes 2> /dev/null | tr '\n' ' ')
if [ $rc = 0 ] && [ -c /dev/kfd ] && [ -d $KFD/proc ] && [ -e /sys/kernel/btf/amdgpu ] &&
  grep -q "kfd_procfs_add_queue	\[amdgpu\]" /proc/kallsyms; then
  pass insmod "rc=0, /dev/kfd, $KFD/proc, topology nodes: $nodes, /sys/kernel/btf/amdgpu, kallsyms [amdgpu], workers FIFO while they work: $(cat /sys/module/amdgpu/parameters/worker_fifo)"
else
  fail insmod "rc=$rc kfd=$(ls -l /dev/kfd 2>&1) nodes='$nodes' btf=$(ls /sys/kernel/btf/amdgpu 2>&1)"
  dump insmod /tmp/insmod.txt
  finish
fi
# The BTF names the struct of the flavor built: kfd_node only in that one.
if grep -q kfd_node /sys/kernel/btf/amdgpu; then got=kfd_node; else got=kfd_dev; fi
if [ "$got" = "$FLAVOR" ]; then
  pass btf-flavor "module BTF is the $FLAVOR shape ($(wc -c < /sys/kernel/btf/amdgpu) bytes)"
else
  fail btf-flavor "built as $FLAVOR, BTF looks like $got"
fi

# GPUs by topology node: 1 HWS, 2 MES (v11), 3 NO_HWS, 4 MES v12 (6.5+),
# 5 GC 12.1's MES (7.2+).
gpu_of_node() { cat $KFD/topology/nodes/$1/gpu_id 2> /dev/null; }
# sim_gpus: the G_* of the simulator loaded now (extra GPUs come after these).
sim_gpus() {
  G_HWS=$(gpu_of_node 1)
  G_MES=$(gpu_of_node 2)
  G_NOHWS=$(gpu_of_node 3)
  G_MES12=$(gpu_of_node 4)
  [ -n "$G_MES12" ] || G_MES12=$G_MES
  G_MES121=$G_MES12
  grep -q '^gfx_target_version 120500$' $KFD/topology/nodes/5/properties 2> /dev/null &&
    G_MES121=$(gpu_of_node 5)
}
sim_gpus
echo "GPUQ-INFO $K gpus hws=$G_HWS mes=$G_MES nohws=$G_NOHWS mes12=$G_MES12 mes12.1=$G_MES121"
# What the kernel's amdkfd has, as the simulator was built for it
# (run_sim_tier.sh, from the real module's BTF): "contexts" = secondary KFD
# contexts (AMDKFD_IOC_CREATE_PROCESS, 7.2+); "xnack-chain" = runlists of
# mixed XNACK modes chained on GPUs that ask for it (gmc.xnack_flags, 6.16+
# in Debian's kernels).
HAS_CONTEXTS=0
grep -qx contexts $SIM/features && HAS_CONTEXTS=1
HAS_XNACK_CHAIN=0
grep -qx xnack-chain $SIM/features && HAS_XNACK_CHAIN=1
[ $HAS_CONTEXTS = 1 ] && LIFECYCLE_PROBES="$LIFECYCLE_PROBES $CONTEXT_PROBES"

if v=$(/bin/gpuq-agent --version 2>&1); then pass agent-version "$v"; else fail agent-version "$v"; fi

# ---- cgroups: two docker containers and the host ----------------------------
ID_A=3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899
ID_B=a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90
CG_A=/sys/fs/cgroup/system.slice/docker-$ID_A.scope
CG_B=/sys/fs/cgroup/system.slice/docker-$ID_B.scope
CG_HOST=/sys/fs/cgroup
mkdir -p $CG_A $CG_B
# cgroup v2 id = the kernfs inode number of the cgroup's directory
# queue-type labels: the real module's enumerator names (kfd_sim_btf.h)
qtypes() { sed 's/^/QTYPE /' /sys/kernel/debug/kfd_sim/queue_types; }
{
  qtypes
  echo "CG $(stat -c %i $CG_HOST) -"
  echo "CG $(stat -c %i $CG_A) $(echo $ID_A | cut -c1-12)"
  echo "CG $(stat -c %i $CG_B) $(echo $ID_B | cut -c1-12)"
  for n in $KFD/topology/nodes/*; do
    g=$(cat $n/gpu_id)
    [ "$g" != 0 ] && echo "GPU $g"
  done
} > /tmp/static.in

# ---- driver processes ---------------------------------------------------------
# start_driver NAME CGROUP FD: kfd_sim_driver in CGROUP, commands on fd FD.
# The fifo is opened read-write first: that never blocks (a blocking open
# can fail with EINTR on SIGCHLD, and a failed exec redirection ends the shell).
start_driver() {
  rm -f /tmp/$1.in /tmp/$1.out
  mkfifo /tmp/$1.in
  eval "exec $3<> /tmp/$1.in"
  sh -c "echo \$\$ > $2/cgroup.procs && exec /bin/kfd_sim_driver" < /tmp/$1.in > /tmp/$1.out 2>&1 &
  eval "FD_$1=$3"
  i=0
  while ! grep -q READY /tmp/$1.out 2> /dev/null && [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
  done
  eval "PID_$1=$(awk '/READY/ { print $2; exit }' /tmp/$1.out)"
}
SEQ=0
# drv NAME COMMAND...: one command, then waits until the driver did it. A
# driver that has exited (or was never started) is said at once, in the log
# the failing check dumps, instead of a 120 s wait on a closed descriptor.
drv() {
  local name=$1 fd pid
  shift
  eval "fd=\${FD_$name:-}"
  eval "pid=\${PID_$name:-}"
  if [ -z "$fd" ] || [ -z "$pid" ] || ! kill -0 "$pid" 2> /dev/null; then
    echo "DRIVER $name is not running (fd '$fd', pid '$pid'): '$*' not sent" | tee -a /tmp/drv-errors.txt
    return 1
  fi
  SEQ=$((SEQ + 1))
  echo "$*" >&"$fd"
  echo "sync $SEQ" >&"$fd"
  t0=$(up)
  while ! grep -q "SYNC $SEQ\$" /tmp/$name.out && within 120 "$t0"; do
    kill -0 "$pid" 2> /dev/null || {
      echo "DRIVER $name exited during '$*'" | tee -a /tmp/drv-errors.txt
      return 1
    }
    sleep 0.05
  done
}
# exit_driver NAME [LAST]: exits with its queues alive; returns once KFD
# tore the process down (its kworker removes proc/<pid> last). LAST, a
# command, goes in the same write as exit: the client reads both at once
# and exits microseconds after LAST's work.
exit_driver() {
  local name=$1 fd pid
  eval "fd=\$FD_$name"
  eval "pid=\$PID_$name"
  if [ -n "${2:-}" ]; then
    printf '%s\nexit\n' "$2" >&"$fd"
  else
    echo exit >&"$fd"
  fi
  eval "exec $fd>&-"
  t0=$(up)
  while { kill -0 "$pid" 2> /dev/null || [ -d $KFD/proc/$pid ]; } && within 60 "$t0"; do
    sleep 0.05
  done
  dump "driver-$name" /tmp/$name.out
  cat /tmp/$name.out >> /tmp/drivers.out
}

# ---- the agent ---------------------------------------------------------------
scrape() { timeout 10 wget -q -O "$1" "$URL" 2> /dev/null; }

# start_agent MODE FLAGS...: the daemon; BASE = the truth it starts from.
# Nothing runs in the simulator until every lifecycle probe is attached
# (ATTACH_MIN of them: the tracepoint tier has two programs' hooks).
ATTACH_MIN=4
start_agent() {
  cp $TRUTH /tmp/base.truth
  launch_agent "$@"
  await_agent
}
# launch_agent MODE FLAGS...: the daemon on PORT in the background (AG_PID).
launch_agent() {
  AG_MODE=$1
  shift
  /bin/gpuq-agent --web.listen-address 127.0.0.1:$PORT --no-runtime-lookup \
    --reconcile-interval 2s "$@" >> "/tmp/agent-$AG_MODE.out" 2>&1 &
  AG_PID=$!
}
# await_agent [T0]: AG_UP = the seconds from T0 (default now) until URL
# served /metrics with ATTACH_MIN probes attached, or "" (AWAIT_S seconds,
# default 180, passed or AG_PID died).
await_agent() {
  t0=${1:-$(up)}
  AG_UP=""
  while within "${AWAIT_S:-180}" "$t0"; do
    if scrape /tmp/m.prom && [ "$(grep -c '^gpuq_probe_attached{.*} 1$' /tmp/m.prom)" -ge $ATTACH_MIN ]; then
      AG_UP=$(elapsed "$t0")
      break
    fi
    kill -0 $AG_PID 2> /dev/null || break
    sleep 0.2
  done
}

# The probe tiers' agents when several run at once (the client groups run
# two, the programs group four: kprobes, fentry, tracepoints and uprobes all
# take several consumers): each tier's port, flags, lifecycle probes and
# how many probes must be attached before anything runs.
tier_port() {
  case $1 in
    btf-fentry) echo 9471 ;;
    btf-kprobe) echo 9472 ;;
    args-kprobe) echo 9473 ;;
    tracepoint) echo 9474 ;;
  esac
}
tier_flags() {
  case $1 in
    btf-kprobe) echo --no-fentry ;;
    args-kprobe) echo --probe-tier=args ;;
    tracepoint) echo --probe-tier=tracepoint ;;
  esac
}
tier_probes() { if [ "$1" = tracepoint ]; then echo "$TP_PROBE_NAMES"; else echo "$LIFECYCLE_PROBES"; fi; }
tier_attach_min() { if [ "$1" = tracepoint ]; then echo 2; else echo 4; fi; }

# threads PID: where each thread of PID waits (state, wchan, kernel stack).
threads() {
  local t
  for t in /proc/$1/task/*; do
    echo "thread ${t##*/} $(cat $t/comm 2> /dev/null) state $(cut -d' ' -f3 $t/stat 2> /dev/null) syscall $(cut -d' ' -f1 $t/syscall 2> /dev/null) wchan $(cat $t/wchan 2> /dev/null)"
    sed 's/^/  /' $t/stack 2> /dev/null
  done
}

stop_agent() {
  kill -TERM "$AG_PID" 2> /dev/null
  i=0
  while kill -0 "$AG_PID" 2> /dev/null && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if kill -0 "$AG_PID" 2> /dev/null; then
    STOP_RESULT=hung
    threads "$AG_PID" > /tmp/hung.txt
    dump hung-agent /tmp/hung.txt
    kill -KILL "$AG_PID"
    wait "$AG_PID"
  else
    wait "$AG_PID"
    STOP_RESULT="exit $?"
  fi
}

# compare_once FAMILIES METRICS-FILE: sim_compare's output (sim_compare.cc)
# in /tmp/cmp.out.
# Truth now: the simulator's, the drivers' (/tmp/drv.truth) and the
# submissions of earlier client runs' containers (/tmp/drv.past, client_runs).
# With ONLY set, that container's series alone.
: > /tmp/drv.past
compare_once() {
  {
    cat /tmp/static.in
    sed 's/^/BASE /' /tmp/base.truth
    sed 's/^/NOW /' $TRUTH /tmp/drv.truth /tmp/drv.past
    sed 's/^/MET /' "$2"
  } > /tmp/cmp.in
  sim_compare --fams "$1" --only "${ONLY:-}" /tmp/cmp.in > /tmp/cmp.out
  grep -q '^RESULT ok' /tmp/cmp.out
}

# cmp_compared: from the last comparison's RESULT line, the series compared
# and the seconds' figures after them.
cmp_compared() {
  tail -n 1 /tmp/cmp.out | awk '{ r = $3; for (i = 5; i <= NF; i++) r = r " " $i; print r }'
}

# converge FAMILIES: scrapes until the families equal the truth (events are
# in flight through the ring buffer) or 30 s pass; leaves /tmp/cmp.out.
converge() {
  t0=$(up)
  while :; do
    scrape /tmp/m.prom
    compare_once "$1" /tmp/m.prom && return 0
    within 30 "$t0" || return 1
    sleep 0.3
  done
}

# prog_misses: the kernel's recursion_misses of each BPF program loaded,
# "NAME N" per line (bpftool prints the count only when it is not 0).
prog_misses() {
  bpftool prog show 2> /dev/null | awk '
    /^[0-9]+: / {
      name = ""
      misses = 0
      for (i = 1; i < NF; i++) {
        if ($i == "name") name = $(i + 1)
        if ($i == "recursion_misses") misses = $(i + 1)
      }
      print name, misses + 0
    }'
}

expect_truth() {
  if ! converge "$2"; then
    fail "$1" "$(grep '^DIFF' /tmp/cmp.out | head -n 8 | tr '\n' ';')"
    sed 's/^/truth: /' $TRUTH > /tmp/truth.txt
    # the queues the kernel and the agent's programs hold
    find /sys/class/kfd/kfd/proc -path '*/queues/*' -name gpuid 2> /dev/null |
      while read -r f; do echo "sysfs queue: $f = $(cat "$f" 2> /dev/null)"; done > /tmp/sysfs-queues.txt
    bpftool map dump name live_queues 2> /dev/null | sed 's/^/live_queues: /' > /tmp/live-queues.txt
    dump "$1" /tmp/cmp.out /tmp/truth.txt /tmp/sysfs-queues.txt /tmp/live-queues.txt /tmp/m.prom
  else
    pass "$1" "$(cmp_compared) series equal the simulator's truth ($2); drops: $(dropped)"
  fi
}

# xnack_conflicts CHECK: the runlists the simulator built oversubscribed
# with an XNACK conflict since the mode began (truth "oversub", a = 3) are
# the agent's maps under reason="xnack_conflict" (the last scrape), and
# there are some where amdkfd chains on mixed modes (HAS_XNACK_CHAIN), none
# where it has no such test.
xnack_conflicts() {
  local want got
  want=$(($(truth_sum oversub a=3) - $(truth_sum oversub a=3 /tmp/base.truth)))
  got=$(awk 'index($0, "gpuq_runlist_oversubscribed_maps_total{") == 1 && index($0, "reason=\"xnack_conflict\"") { s += $NF } END { print s + 0 }' /tmp/m.prom)
  if [ $HAS_XNACK_CHAIN = 0 ]; then
    [ "$want" = 0 ] && [ "$got" = 0 ] && pass "$1" "this kernel's amdkfd has no XNACK test (no gmc.xnack_flags): the runlist mixing XNACK modes fits (simulator 0, agent 0)" ||
      fail "$1" "the runlist mixing XNACK modes where amdkfd has no such test: simulator $want, agent $got oversubscribed maps, want 0"
  else
    [ "$want" -gt 0 ] && [ "$got" = "$want" ] && pass "$1" "$got runlists oversubscribed with mixed XNACK modes, as the simulator's $want" ||
      fail "$1" "runlists oversubscribed with mixed XNACK modes: simulator $want, agent $got (want equal, more than 0)"
  fi
}

# missing FAMILIES: those of FAMILIES the last scrape has no TYPE line for.
missing() {
  local f out=""
  for f in $1; do
    grep -q "^# TYPE ${f%_count} " /tmp/m.prom || out="$out ${f%_count}"
  done
  echo $out
}

# expect_exported CHECK FAMILIES WHO: expect_truth, or SKIP while this
# agent does not export the families yet (other owners' work in progress).
expect_exported() {
  scrape /tmp/m.prom
  miss=$(missing "$2")
  if [ -n "$miss" ]; then
    skip "$1" "not exported by this agent yet: $miss (pending: $3)"
  else
    expect_truth "$1" "$2"
  fi
}

gives() { case " $TIER_GIVES " in *" $1 "*) return 0 ;; esac; return 1; }

# expect_absent CHECK FAMILIES: the last scrape has no series of FAMILIES
# (a tier that cannot see them exports none, not zeros).
expect_absent() {
  scrape /tmp/m.prom
  n=0
  for f in $2; do
    n=$((n + $(grep -c "^${f}[{ ]" /tmp/m.prom)))
  done
  if [ "$n" = 0 ]; then
    pass "$1" "tier $TIER: no series of $2 (the tier cannot see them)"
  else
    fail "$1" "tier $TIER exports $n series of $2"
    grep -E "^($(echo "$2" | tr ' ' '|'))[{ ]" /tmp/m.prom > /tmp/absent.txt
    dump "$1" /tmp/absent.txt
  fi
}

# runlist_durations CHECK: the HWS GPU's unmap and map duration histograms
# hold at least the time the simulator spent waiting in them (a lower bound:
# an operation cannot take less than its wait).
runlist_durations() {
  miss=$(missing "gpuq_runlist_unmap_duration_seconds_count gpuq_runlist_map_duration_seconds_count")
  if [ -n "$miss" ]; then
    skip "$1" "not exported by this agent yet: $miss (pending: KERNEL runlist hooks, MODEL export)"
    return
  fi
  detail=""
  ok=1
  for op in unmap map; do
    want=$(awk -v w="${op}_wait_us" -v g="$G_HWS" '$1 == w && $2 == g { s += $6 } END { print s + 0 }' $TRUTH)
    base=$(awk -v w="${op}_wait_us" -v g="$G_HWS" '$1 == w && $2 == g { s += $6 } END { print s + 0 }' /tmp/base.truth)
    got=$(awk -v n="gpuq_runlist_${op}_duration_seconds_sum{" -v g="gpu_id=\"$G_HWS\"" \
      'index($0, n) == 1 && index($0, g) && index($0, "scheduler=\"hws\"") { s += $NF } END { printf "%.6f", s + 0 }' /tmp/m.prom)
    waited=$((want - base))
    [ "$waited" -gt 0 ] || ok=0
    awk -v got="$got" -v want="$waited" 'BEGIN { exit !(got * 1000000 >= want) }' || ok=0
    detail="$detail $op: sum ${got}s >= waited ${waited}us;"
  done
  if [ $ok = 1 ]; then
    pass "$1" "$detail"
  else
    fail "$1" "$detail (GPUQ-LOG $1)"
    grep 'duration_seconds' /tmp/m.prom > /tmp/durations.txt
    dump "$1" /tmp/durations.txt
  fi
}

# driver_truth NAME CGROUP QUEUES: submit/pending truth lines of the named
# queues (created while the agent ran) from the driver's own indexes.
driver_truth() {
  local name=$1 cgid
  cgid=$(stat -c %i "$2")
  drv "$name" truth
  # a queue's last line wins; the queues of one (GPU, type) add up
  grep " QUEUE " /tmp/$name.out | tail -n 20 | awk -v cg="$cgid" -v want=" $3 " '
    { for (i = 4; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
    index(want, " " $4 " ") {
      key[$4] = f["gpu"] " " f["type"]; gpu[$4] = f["gpu"]
      sub_[$4] = f["submitted"]; pend_[$4] = f["pending"]
    }
    END {
      for (q in key) { last["submit " key[q] " 0 " cg] += sub_[q]; pend["pending " gpu[q] " 0 0 " cg] += pend_[q] }
      for (k in last) print k, last[k]; for (k in pend) print k, pend[k]
    }' > /tmp/drv.truth
}

# dropped: the non-zero gpuq_events_dropped_total series of the last scrape.
dropped() {
  d=$(grep '^gpuq_events_dropped_total{' /tmp/m.prom | grep -v ' 0$' | sed 's/^gpuq_events_dropped_total//' | tr '\n' ' ')
  echo "${d:-none}"
}

sum_of() {
  awk -v name="$2" 'index($0, name "{") == 1 || index($0, name " ") == 1 { s += $NF }
    END { printf "%g", s + 0 }' "$1"
}

# sysfs_inventory CHECK: the simulator's own sysfs agrees with its truth.
sysfs_inventory() {
  n_sysfs=$(ls -d $KFD/proc/*/queues/* $KFD/proc/*/context_*/queues/* 2> /dev/null | wc -l)
  n_truth=$(truth_sum queues)
  if [ "$n_sysfs" = "$n_truth" ]; then
    pass "$1" "$n_sysfs queue directories under $KFD/proc = live queues in the truth"
  else
    fail "$1" "$n_sysfs queue directories, truth says $n_truth"
  fi
}

# truth_sum WHAT [a=A|b=B|-] [FILE]: the simulator's truth lines WHAT (with
# their field a or b equal to the value given; - for any), summed, from FILE
# (default: the live truth).
truth_sum() {
  local col=0 v=""
  case ${2:--} in
    a=*) col=3 v=${2#a=} ;;
    b=*) col=4 v=${2#b=} ;;
  esac
  awk -v w="$1" -v c=$col -v v="$v" '$1 == w && (c == 0 || $c == v) { s += $6 } END { print s + 0 }' "${3:-$TRUTH}"
}

# labels_check CHECK: the agent's queue_type labels are the real module's
# enumerator names (the truth's labels, /sys/kernel/debug/kfd_sim/queue_types,
# from kfd_sim_btf.h), which put SDMA_XGMI at 4 up to 6.18 and at 3 from 7.2
# (DIQ removed). Negative control: the same comparison with the other
# numbering must find a difference (d2's b4 is an sdma_xgmi queue).
labels_check() {
  local want other xgmi
  case $SERIES in
    6.* | 7.0 | 7.1)
      want=4
      other="0 compute;1 sdma;2 hiq;3 sdma_xgmi;4 sdma_by_eng_id"
      ;;
    *)
      want=3
      other="0 compute;1 sdma;2 hiq;3 diq;4 sdma_xgmi;5 sdma_by_eng_id"
      ;;
  esac
  xgmi=$(awk '$2 == "sdma_xgmi" { print $1 }' /sys/kernel/debug/kfd_sim/queue_types)
  scrape /tmp/m.prom
  compare_once gpuq_queue_creates_total /tmp/m.prom
  ok=$?
  grep -v '^QTYPE ' /tmp/cmp.in > /tmp/cmp-other.in
  echo "$other" | tr ';' '\n' | sed 's/^/QTYPE /' | cat - /tmp/cmp-other.in > /tmp/cmp-other.in2
  sim_compare --fams gpuq_queue_creates_total /tmp/cmp-other.in2 > /tmp/cmp-other.out
  if [ "$xgmi" = "$want" ] && [ $ok = 0 ] &&
    grep -q 'queue_type="sdma_xgmi"' /tmp/m.prom && grep -q '^RESULT diff' /tmp/cmp-other.out; then
    pass "$1" "kernel enum: sdma_xgmi = $xgmi; the agent's creates by queue_type equal the truth's labels; with the other kernels' numbering ($other) they differ: $(grep -c '^DIFF' /tmp/cmp-other.out) series"
  else
    fail "$1" "sdma_xgmi = ${xgmi:-none} (want $want on $SERIES); agent = truth: $([ $ok = 0 ] && echo yes || echo no); negative control: $(tail -n 1 /tmp/cmp-other.out)"
    dump "$1" /tmp/cmp.out /tmp/cmp-other.out
  fi
}

# ---- one hook mode -------------------------------------------------------------
# run_mode NAME FLAGS...: the whole scenario with the daemon started with
# FLAGS. MODE and TIER are the labels gpuq_probe_attached must carry for
# each of PROBES; TIER_GIVES lists the optional family groups this tier
# exports (docs/probe-tiers.md "What each tier gives"): a group it does not
# give must have no series at all, never a zero standing in for a number.
# SEEDED_EXACT=0: the tier cannot see the destroys and exits of what was
# seeded from sysfs, so the second half of the scenario starts fresh.
MODE=fentry TIER=btf-fentry PROBES=$LIFECYCLE_PROBES TIER_GIVES="runlist eviction oversubscription" SEEDED_EXACT=1
run_mode() {
  m=$1
  shift
  FLAGS="$*"
  ktime "$m-start"
  # shellcheck disable=SC2086
  start_agent "$m" $FLAGS
  if [ -z "$AG_UP" ]; then
    fail "$m:serves" "no /metrics with the lifecycle probes attached (alive: $(kill -0 $AG_PID 2> /dev/null && echo yes || echo no))"
    dump "$m" "/tmp/agent-$m.out" /tmp/m.prom
    stop_agent
    return
  fi
  pass "$m:serves" "/metrics with probes attached after ${AG_UP}s"
  bad=""
  for p in $PROBES; do
    awk -v p="probe=\"$p\"" -v mo="mode=\"$MODE\"" -v t="tier=\"$TIER\"" '
      index($0, "gpuq_probe_attached{") == 1 && index($0, p) && index($0, mo) &&
        index($0, t) && $NF == 1 { found = 1 }
      END { exit !found }' /tmp/m.prom || bad="$bad $p"
  done
  others=$(grep '^gpuq_probe_attached{' /tmp/m.prom | sed 's/^gpuq_probe_attached//' | tr '\n' ' ')
  if [ -z "$bad" ]; then
    pass "$m:attached" "lifecycle probes attached as $MODE, tier $TIER; all: $others"
  else
    fail "$m:attached" "not attached as $MODE/$TIER:$bad; all: $others"
  fi

  : > /tmp/drv.truth
  # -- lifecycle: three processes in three cgroups, one exits with its queues
  start_driver d1 $CG_A 3
  start_driver d2 $CG_B 4
  start_driver d3 $CG_HOST 5
  # a1 at queue priority 15 (amdkfd's high pipe priority), b1 and c1 at 0 (low),
  # the rest at ROCr's default 7 (medium)
  drv d1 create a1 "$G_HWS" aql 100 0 15
  drv d1 create a2 "$G_HWS" sdma
  drv d1 create a3 "$G_MES" aql
  drv d1 create a4 "$G_NOHWS" pm4
  drv d1 createfail 4660
  drv d2 create b1 "$G_HWS" aql 100 0 0
  drv d2 create b2 "$G_MES" sdma
  drv d2 create b3 "$G_MES12" aql
  drv d2 create b4 "$G_NOHWS" sdma_xgmi
  drv d3 create c1 "$G_NOHWS" aql 100 0 0
  drv d3 create c2 "$G_HWS" sdma
  drv d1 destroy a2
  exit_driver d2
  if [ $HAS_CONTEXTS = 1 ]; then
    # 7.2+: d3 (the host) opens a secondary KFD context beside its primary
    # one. Its queue ids start at 0 again (the primary's c1, c2 are 0 and 1),
    # and its MES queue sits on GC 12.1's MES.
    drv d3 context
    drv d3 create x1 "$G_MES121" aql
    drv d3 create x2 "$G_NOHWS" sdma_xgmi
    drv d3 primary
  fi
  ktime "$m-lifecycle"
  sysfs_inventory "$m:sysfs-inventory"
  expect_truth "$m:queues" "gpuq_queues gpuq_queues_by_priority gpuq_queues_by_requested_priority"
  # -- priority updates by AMDKFD_IOC_UPDATE_QUEUE: a3 (MES) from 7 (medium)
  #    to 15 (high), c1 (NO_HWS) from 0 (low) to 9 (medium); the gauge follows
  #    (before the restart below: queues found in sysfs have no priority to
  #    compare; d2 has exited already)
  drv d1 update a3 100 15
  drv d3 update c1 100 9
  expect_truth "$m:priority-update" "gpuq_queues_by_priority gpuq_queues_by_requested_priority"
  # -- CU masks by AMDKFD_IOC_SET_CU_MASK, judged against the 104 active CUs
  #    every simulated GPU has (simd_count 416 / simd_per_cu 4): a1 (HWS)
  #    CUs 0-15 (restricted); c1 (NO_HWS) exactly CUs 0-103 (all_cus); a3
  #    (MES, WGPs: CUs in pairs) all but CUs 48-49 (restricted), then 128
  #    bits all set (all_cus: the set replaces the class). The set's HWS
  #    unmap/map and MES remove/add are the update path's (cause update):
  #    where the tier gives them, the runlist families are compared too.
  #    Failing sets change nothing: num_cu_mask 0 on c1, CU 0 without CU 1
  #    on a3 (EINVAL: its GPU has WGPs), a queue id d1 does not have (EFAULT,
  #    as amdkfd's pqm_update_mqd). The masks are compared only here: a
  #    restarted agent cannot know those of the queues it finds in sysfs.
  drv d1 cumask a1 0x0000ffff
  drv d3 cumask c1 0xffffffff 0xffffffff 0xffffffff 0x000000ff
  drv d1 cumask a3 0xffffffff 0xfffcffff 0xffffffff 0x000000ff
  drv d1 cumask a3 0xffffffff 0xffffffff 0xffffffff 0xffffffff
  drv d3 cumaskfail c1 22
  drv d1 cumaskfail a3 22 0x00000001
  drv d1 cumaskfail 999 14 0x0000ffff
  fams=gpuq_queues_cu_masked
  gives runlist && fams="$fams $RUNLIST"
  expect_truth "$m:cu-mask" "$fams"
  # -- GWS by AMDKFD_IOC_ALLOC_QUEUE_GWS (ROCr's hsaKmtAllocQueueGWS, for
  #    cooperative launches): a1 (HWS) and a3 (MES) are given the GWS (one
  #    queue per process and GPU may hold it); each runs the dqm's
  #    update_queue, whose HWS unmap/map and MES remove/add are cause update
  #    (the op_gws hook: without it they would have no cause). The GWS
  #    queues the HWS runlist holds are gpuq_runlist_entries' gws_queues
  #    (BTF tiers).
  if gives runlist; then
    drv d1 gws a1 1
    drv d1 gws a3 1
    fams=$RUNLIST
    gives oversubscription && fams="$fams gpuq_runlist_entries"
    expect_truth "$m:gws" "$fams"
  fi
  expect_truth "$m:processes" gpuq_processes
  expect_truth "$m:creates" gpuq_queue_creates_total
  expect_truth "$m:destroys" gpuq_queue_destroys_total
  expect_truth "$m:exits" gpuq_process_exits_total
  expect_truth "$m:create-failures" gpuq_queue_create_failures_total
  labels_check "$m:queue-type-labels"
  if [ $HAS_CONTEXTS = 1 ]; then
    # the context's file is closed: amdkfd tears it down at once, in d3
    exits_before=$(truth_sum exit)
    torn_before=$(truth_sum destroy b=2)
    drv d3 closecontext
    fams=$LIFECYCLE
    gives runlist && fams="$fams $RUNLIST"
    expect_truth "$m:context-teardown" "$fams"
    exits=$(($(truth_sum exit) - exits_before))
    torn=$(($(truth_sum destroy b=2) - torn_before))
    if [ "$exits" = 1 ] && [ "$torn" = 2 ]; then
      pass "$m:context" "the simulator tore a secondary context down: 1 exit, 2 exit-teardown destroys (sysfs had proc/<pid>/context_<id>); the agent agreed above"
    else
      fail "$m:context" "the close should have ended 1 context with 2 queues; the truth moved by $exits exits, $torn exit-teardown destroys"
    fi
  fi

  # -- the agent is killed; the simulator goes on; --once and a new daemon
  #    must seed what they missed from sysfs
  kill -KILL "$AG_PID"
  wait "$AG_PID" 2> /dev/null
  drv d1 create a5 "$G_MES" sdma
  drv d1 destroy a1
  drv d3 create c3 "$G_HWS" aql
  ktime "$m-once-start"
  cp $TRUTH /tmp/base.truth
  # shellcheck disable=SC2086
  timeout 180 /bin/gpuq-agent --once -o prometheus --interval 1s --no-runtime-lookup $FLAGS \
    > /tmp/once.prom 2> /tmp/once.err
  rc=$?
  if [ $rc = 0 ] && compare_once "gpuq_queues gpuq_processes" /tmp/once.prom; then
    pass "$m:once" "--once -o prometheus: $(tail -n 1 /tmp/cmp.out | awk '{ print $3 }') queue/process series equal the truth"
  else
    fail "$m:once" "exit $rc; $(grep '^DIFF' /tmp/cmp.out | head -n 8 | tr '\n' ';')"
    dump "$m-once" /tmp/once.err /tmp/cmp.out /tmp/once.prom
  fi
  ktime "$m-restart"
  # shellcheck disable=SC2086
  start_agent "$m" $FLAGS
  if [ -z "$AG_UP" ]; then
    fail "$m:restart-seeded" "the restarted agent never served /metrics"
  else
    expect_truth "$m:restart-seeded" "$LIFECYCLE"
  fi
  # seeded queues leave by ioctl and by exit teardown; new ones arrive
  drv d1 destroy a3
  drv d1 create a6 "$G_HWS" aql
  exit_driver d3
  if [ "$SEEDED_EXACT" = 1 ]; then
    expect_truth "$m:after-restart" "$LIFECYCLE"
  else
    # The BTF-free tiers see a seeded queue's destroy and a seeded
    # process's exit only through reconciliation (docs/probe-tiers.md,
    # "What differs"): the gauges, creates and failures stay exact.
    expect_truth "$m:after-restart" "gpuq_queues gpuq_processes gpuq_queue_creates_total gpuq_queue_create_failures_total"
    # From here on every process is one this agent saw create (the tiers
    # learn a process's GPUs from its creates): d1 starts again, with a
    # queue on each GPU, under a new agent.
    stop_agent
    exit_driver d1
    # shellcheck disable=SC2086
    start_agent "$m" $FLAGS
    [ -n "$AG_UP" ] || fail "$m:fresh-start" "the agent started for the fresh half never served /metrics"
    start_driver d1 $CG_A 3
    drv d1 create a5 "$G_MES" sdma
    drv d1 create a6 "$G_HWS" aql
    drv d1 create a8 "$G_NOHWS" aql
    [ "$G_MES12" != "$G_MES" ] && drv d1 create a9 "$G_MES12" aql
    [ "$G_MES121" != "$G_MES12" ] && drv d1 create a10 "$G_MES121" aql
    expect_truth "$m:fresh-start" "$LIFECYCLE"
  fi

  # -- a burst of creates/destroys: every series exact
  start_driver d4 $CG_B 6
  ktime "$m-burst-start"
  drv d4 burst "$G_NOHWS" 2000
  drv d4 burst "$G_MES" 1000
  drv d4 burst "$G_HWS" 1000
  ktime "$m-burst-done"
  exit_driver d4
  expect_truth "$m:burst" "$LIFECYCLE"

  # -- runlist: slow unmaps and maps, one that times out (-ETIME: the HWS
  #    hang), MES remove + add, all from update ioctls
  drv d1 runlist "$G_HWS" 20000 10000 0
  drv d1 update a6 50
  drv d1 update a6 100
  drv d1 runlist "$G_HWS" 0 0 1
  drv d1 update a6 80
  drv d1 runlist "$G_HWS" 0 0 0
  drv d1 update a6 100
  drv d1 update a5 50
  # a create whose runlist update hangs fails with ETIME; its queue is freed
  # in the creating thread, which is not a destroy
  drv d1 runlist "$G_HWS" 0 0 1
  drv d1 createfail "$G_HWS" 62
  drv d1 runlist "$G_HWS" 0 0 0
  if gives runlist; then
    expect_exported "$m:runlist" "$RUNLIST gpuq_queue_create_failures_total gpuq_queue_destroys_total" \
      "KERNEL runlist hooks, MODEL export"
    runlist_durations "$m:runlist-durations"
  else
    expect_absent "$m:runlist" "$RUNLIST"
    expect_truth "$m:runlist-lifecycle" "gpuq_queue_create_failures_total gpuq_queue_destroys_total"
  fi

  # -- oversubscription: the HWS GPU's limits lowered (the simulator reads
  #    its parameters at each map, amdkfd its device's at init): a second
  #    compute queue of d1 beyond 1 CP queue slot, then a second process
  #    beyond 1 process per quantum; d6's exit and a11's destroy bring the
  #    runlist back within them; the defaults again at a6's update
  echo 1 > $SIMPARAM/cp_queue_slots
  drv d1 create a11 "$G_HWS" aql
  echo 1 > $SIMPARAM/hws_max_conc_proc
  start_driver d6 $CG_B 8
  drv d6 create f1 "$G_HWS" aql
  exit_driver d6
  drv d1 destroy a11
  echo 24 > $SIMPARAM/cp_queue_slots
  echo 8 > $SIMPARAM/hws_max_conc_proc
  drv d1 update a6 100
  #    then XNACK modes mixed on a GPU that chains on them (6.16+): d7
  #    turns XNACK on before its first queue, beside d1 (off) on the HWS
  #    GPU, and exits; where amdkfd has no such test the runlist fits
  echo 1 > $SIMPARAM/xnack_chain
  start_driver d7 $CG_B 8
  drv d7 xnack 1
  drv d7 create x1 "$G_HWS" aql
  exit_driver d7
  echo 0 > $SIMPARAM/xnack_chain
  if gives oversubscription; then
    expect_truth "$m:oversubscription" "$OVERSUB"
    xnack_conflicts "$m:oversubscription-xnack"
  else
    expect_absent "$m:oversubscription" "$OVERSUB"
  fi

  # -- evictions: nested TTM + userptr then two restores (one transition
  #    each way per GPU); then an SVM eviction from another process, left
  #    in place until d1 exits
  drv d1 evict 0 2
  drv d1 evict 0 1
  drv d1 restore 0
  drv d1 restore 0
  start_driver d5 $CG_HOST 7
  drv d5 evict "$PID_d1" 0
  exit_driver d5
  if gives eviction; then
    expect_exported "$m:evictions" "$EVICTION" "KERNEL eviction hooks, MODEL export"
    # d1 is still evicted (d5's SVM eviction): its queues were compared
    # above as evicted, not only as zeros
    n=$(truth_sum evicted_queues)
    if [ "${n:-0}" -gt 0 ]; then
      pass "$m:evicted-queues" "$n queues of the evicted d1 held off the GPU, in gpuq_queues_evicted as in the simulator"
    else
      fail "$m:evicted-queues" "d1 should hold evicted queues now: the simulator counts ${n:-none}"
    fi
  else
    expect_absent "$m:evictions" "$EVICTION"
  fi

  # -- submissions: AQL queues in ROCr's layout, one starting at index 1000,
  #    one (g1) whose amd_queue_t is in simulated GTT mapped VM_IO | VM_PFNMAP,
  #    as ROCr >= 6.2 places it on MES GPUs: process_vm_readv cannot read it
  #    (EFAULT), the sampler reads it again from /proc/<pid>/mem
  drv d1 create a7 "$G_MES" aql 100 1000
  drv d1 create g1 "$G_MES" aql 100 0 7 gtt
  drv d1 submit a6 100
  drv d1 complete a6 60
  drv d1 submit a7 50
  drv d1 submit g1 30
  drv d1 complete g1 12
  driver_truth d1 $CG_A "a6 a7 g1"
  expect_exported "$m:submissions" "$SUBMISSION" "SAMPLER (--sample-interval), MODEL export"
  gtt_addr=$(sed -n 's/.* GTT addr=0x\([0-9a-f]*\) .*/\1/p' /tmp/d1.out | tail -n 1)
  gtt_errno=$(sed -n 's/.* GTT addr=.* errno=\([0-9]*\)$/\1/p' /tmp/d1.out | tail -n 1)
  gtt_flags=$(awk -v a="$gtt_addr" '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { on = index($1, a "-") == 1 }
    on && /^VmFlags:/ { print; exit }' /proc/$PID_d1/smaps 2> /dev/null)
  g1_line=$(grep ' QUEUE g1 ' /tmp/d1.out | tail -n 1)
  if [ "$gtt_errno" = 14 ] && echo "$gtt_flags" | grep -qw io && echo "$gtt_flags" | grep -qw pf; then
    pass "$m:gtt-queue" "g1's amd_queue_t at 0x$gtt_addr is mapped$(echo "$gtt_flags" | sed 's/^VmFlags://'), process_vm_readv gives EFAULT there, and the submissions above count its ${g1_line#* submitted=}"
  else
    fail "$m:gtt-queue" "want EFAULT from process_vm_readv and VmFlags io pf: errno=$gtt_errno flags='$gtt_flags' addr=$gtt_addr"
  fi

  # -- the last process exits (evicted, with queues): nothing left, every
  #    exported family still equal; pending packets of dead queues are gone
  exit_driver d1
  grep '^submit ' /tmp/drv.truth > /tmp/drv.truth.new
  mv /tmp/drv.truth.new /tmp/drv.truth
  scrape /tmp/m.prom
  fams="$LIFECYCLE"
  opt="$SUBMISSION"
  gives runlist && opt="$opt $RUNLIST"
  gives eviction && opt="$opt $EVICTION"
  for f in $opt; do
    [ -z "$(missing "$f")" ] && fams="$fams $f"
  done
  expect_truth "$m:final" "$fams"
  dump "$m-metrics" /tmp/m.prom
  stop_agent
  case $STOP_RESULT in
    "exit 0") pass "$m:stops" "exit 0 after SIGTERM" ;;
    *) fail "$m:stops" "$STOP_RESULT after SIGTERM" ;;
  esac
  dump "$m" "/tmp/agent-$m.out"
}

# ---- Debian's real ROCr and HIP on the null GPU -----------------------------------
# Two clients, each in container A on Debian's libhsa-runtime64.so.1 with the
# null thunk (libhsakmt.so.1 of tests/nullgpu) forwarding every queue
# create/destroy to /dev/kfd (GPUQ_NULLGPU_KFD=1): null GPU 0 stands on KFD
# node 1 (HWS), GPU 1 on node 2 (MES). The null CP consumes the packets in
# user space. The agent runs with --doorbells=uprobe on that library; each
# family is compared with the simulator's truth and with the thunk's own
# (its truth file: queues ROCr created, ROCr's utility queues included,
# write/read indexes).
#   rocr  rocr_client (tests/nullgpu/rocr_client.c): the HSA API itself,
#         hsa_queue_create, AQL packets, hsa_signal_store_screlease
#   hip   hip_client serve (tests/nullgpu/hip_client.cc, Debian's hipcc):
#         HIP streams, kernel launches and copies; HIP puts its streams on
#         the hardware queues of its own pool and rings through ROCr's
#         exported hsa_signal_store_screlease
# Each group's checks: ROCR_CHECKS, HIP_CHECKS, ROCBLAS_CHECKS (check_lists.sh,
# sourced where SIM is set).
NG_CTL=/tmp/ngctl
NG_TRUTH=/tmp/ng.truth

# ng_run CGROUP CONTROL TRUTH GPUS KFD-NODES CMD...: CMD (its environment
# first if it wants one) in CGROUP on the null thunk, forwarding its queues
# to /dev/kfd's KFD-NODES, with that control dir and truth file and no SDMA.
# Run it in the background (`ng_run ... &`): it execs, so $! is CMD's pid.
ng_run() {
  local cg=$1 env
  env=$(ng_env "$2" "$3" "$4" "$5")
  shift 5
  exec $RUNTIME_SCHED sh -c "echo \$\$ > $cg/cgroup.procs && exec env LD_LIBRARY_PATH=/lib/nullgpu $env $*"
}

# ng_env CONTROL TRUTH GPUS KFD-NODES: the null GPUs' environment (both
# read the same, tests/nullgpu/null_cp.h): forwarding to those KFD nodes,
# that control dir and truth file, and no SDMA.
ng_env() {
  echo "GPUQ_NULLGPU_KFD=1 GPUQ_NULLGPU_KFD_NODES=$4 GPUQ_NULLGPU_GPUS=$3 GPUQ_NULLGPU_CONTROL=$1 GPUQ_NULLGPU_TRUTH=$2 $CP_FIFO HSA_ENABLE_SDMA=0"
}

# kfd_run STACK CGROUP CONTROL TRUTH GPUS KFD-NODES CMD...: as ng_run, for
# a ROCm stack of /rocm (run_sim_tier.sh's build_rocm_stacks: ROCr 6.4 or
# 7.2, which link the thunk in): CMD through the stack's own loader and
# libraries (a container with its own ROCm), on the KFD null GPU
# (kfd_nullgpu.c) with GPUS gfx90a, forwarding its queues to KFD-NODES.
kfd_run() {
  local d=/rocm/$1 cg=$2 env
  env=$(ng_env "$3" "$4" "$5" "$6")
  shift 6
  exec $RUNTIME_SCHED sh -c "echo \$\$ > $cg/cgroup.procs && exec env LD_PRELOAD=$d/lib/libgpuq_kfdnull.so $env \
    $d/lib/ld-linux-x86-64.so.2 --library-path $d/lib $*"
}

# root_run TAG CGROUP CONTROL TRUTH GPUS KFD-NODES CMD...: as kfd_run, for
# a root run_sim_tier.sh shares (build_hip_stacks: hip-6.4, hip-7.2,
# rocblas-6.4): CMD chrooted in it, at /share/TAG (mount_shares), whose
# /mnt holds our programs (/rocm/TAG) and whose /tmp is the guest's (the
# fifos, the null GPU's control dir and truth file).
root_run() {
  local s=/share/$1 cg=$2 env
  env=$(ng_env "$3" "$4" "$5" "$6")
  shift 6
  exec $RUNTIME_SCHED sh -c "echo \$\$ > $cg/cgroup.procs && exec chroot $s env LD_PRELOAD=/mnt/libgpuq_kfdnull.so $env HOME=/tmp $*"
}

# mount_shares: each root run_sim_tier.sh shares over 9p (virtio; the
# modules from share.cpio.gz where the kernel builds them as modules) at
# /share/TAG, read-only, with /proc, /sys, /dev, the guest's /tmp and our
# programs (/rocm/TAG at its /mnt) mounted in it. A share that cannot be
# mounted leaves /lib/nullgpu/TAG-missing saying why.
mount_shares() {
  local d tag s
  for d in /rocm/hip-* /rocm/rocblas-*; do
    [ -d "$d" ] || continue
    tag=${d##*/} s=/share/${d##*/}
    [ -f /lib/nullgpu/$tag-missing ] && continue
    modprobe virtio_pci 2> /dev/null
    modprobe 9pnet_virtio 2> /dev/null
    modprobe 9p 2> /dev/null
    mkdir -p $s
    if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 $tag $s > /tmp/share.txt 2>&1; then
      echo "the 9p share $tag did not mount ($(tr '\n' ' ' < /tmp/share.txt); 9p: $(grep -c 9p /proc/filesystems) in /proc/filesystems)" > /lib/nullgpu/$tag-missing
      continue
    fi
    mount -o bind $d $s/mnt && mount -t proc proc $s/proc && mount -o rbind /sys $s/sys &&
      mount -o rbind /dev $s/dev && mount -o bind /tmp $s/tmp ||
      echo "the mounts in the 9p share $tag failed" > /lib/nullgpu/$tag-missing
  done
}
mount_shares

# rocr_runtime NAME: the ROCr NAME's client maps: Debian 12's, or with STACK
# set that ROCm stack's (a shared root's: the file its symlink names, as
# /proc/PID/maps shows it).
rocr_runtime() {
  if [ -n "${STACK:-}" ] && [ "$1" != rocr ]; then
    readlink -f /share/$1-$STACK/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1
  elif [ -n "${STACK:-}" ]; then
    echo /rocm/$STACK/lib/libhsa-runtime64.so.1
  else
    echo /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1
  fi
}

# start_client NAME: NAME's client in container A, commands on fd 8; waits
# for READY (hsa_init under TCG takes seconds; HIP also loads LLVM through
# comgr). Sets PID_NAME, FD_NAME. With STACK set (rocr only), the client of
# that ROCm stack (kfd_run).
start_client() {
  local name=$1 cmd
  case $name in
    rocr) cmd=/bin/rocr_client ;;
    hip) cmd="/bin/hip_client serve" ;;
    rocblas) cmd="/mnt/rocblas_client serve" ;;
  esac
  rm -f /tmp/$name.in /tmp/$name.out $NG_TRUTH
  mkdir -p $NG_CTL
  rm -f $NG_CTL/*
  mkfifo /tmp/$name.in
  exec 8<> /tmp/$name.in
  if [ -n "${STACK:-}" ] && [ $name != rocr ]; then
    root_run $name-$STACK $CG_A $NG_CTL $NG_TRUTH 2 1,2 /mnt/${name}_client serve < /tmp/$name.in > /tmp/$name.out 2>&1 &
  elif [ -n "${STACK:-}" ]; then
    kfd_run $STACK $CG_A $NG_CTL $NG_TRUTH 2 1,2 /rocm/$STACK/bin/rocr_client < /tmp/$name.in > /tmp/$name.out 2>&1 &
  else
    ng_run $CG_A $NG_CTL $NG_TRUTH 2xgfx90a 1,2 $cmd < /tmp/$name.in > /tmp/$name.out 2>&1 &
  fi
  eval "FD_$name=8"
  t0=$(up)
  while ! grep -q '^READY\|^BAD' /tmp/$name.out 2> /dev/null && within 180 "$t0"; do
    sleep 0.1
  done
  eval "PID_$name=\$(awk '/^READY/ { print \$2; exit }' /tmp/$name.out)"
}

# ng_dump [CONTROL TRUTH]: the thunk (default: the client's) writes its truth
# file now (its CP polls the control dir).
ng_dump() {
  local ctl=${1:-$NG_CTL}
  rm -f "${2:-$NG_TRUTH}"
  touch $ctl/dump
  t0=$(up)
  while [ -e $ctl/dump ] && within 60 "$t0"; do sleep 0.05; done
}

# thunk_lines EXITED [TRUTH CGROUP]: a thunk's truth (default: the client's
# in container A) as truth lines of CGROUP (sim_compare's format), gpu by
# gpu: queues, processes, creates, destroys (ioctl for those ROCr destroyed;
# process_exit for the rest once EXITED=1, with the process's exit),
# submissions (write indexes: every queue starts at 0 under this agent) and
# pending packets.
thunk_lines() {
  awk -v cg="$(stat -c %i "${3:-$CG_A}")" -v exited="$1" '
    $1 == "queue" {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      g = f["gpu_id"]
      gpus[g] = 1
      create[g]++
      submit[g] += f["write_index"]
      if (f["live"] == 0) ioctl[g]++
      else if (exited) gone[g]++
      else { live[g]++; pend[g] += f["pending"] }
    }
    END {
      if (exited) print "exit", 0, 0, 0, cg, 1
      for (g in gpus) {
        print "create", g, 0, 0, cg, create[g]
        print "submit", g, 0, 0, cg, submit[g]
        if (ioctl[g]) print "destroy", g, 0, 1, cg, ioctl[g]
        if (gone[g]) print "destroy", g, 0, 2, cg, gone[g]
        if (live[g]) { print "queues", g, 0, 0, cg, live[g]; print "processes", g, 0, 0, cg, 1 }
        if (pend[g]) print "pending", g, 0, 0, cg, pend[g]
      }
    }' "${2:-$NG_TRUTH}"
}

# compare_thunk FAMILIES: the last scrape against the thunk's truth alone
# (with THUNK_ONLY, the series of that container alone: a client run's).
compare_thunk() {
  {
    cat /tmp/static.in
    sed 's/^/NOW /' /tmp/ng.lines
    sed 's/^/MET /' /tmp/m.prom
  } > /tmp/cmpt.in
  sim_compare --fams "$1" --only "${THUNK_ONLY:-}" /tmp/cmpt.in > /tmp/cmpt.out
  grep -q '^RESULT ok' /tmp/cmpt.out
}

# expect_both CHECK SIM-FAMILIES THUNK-FAMILIES: converges on the
# simulator's truth (its submit/pending lines from the thunk), then the same
# scrape against the thunk's truth.
expect_both() {
  if ! converge "$2"; then
    fail "$1" "simulator truth: $(grep '^DIFF' /tmp/cmp.out | head -n 8 | tr '\n' ';')"
    sed 's/^/truth: /' $TRUTH > /tmp/truth.txt
    dump "$1" /tmp/cmp.out /tmp/truth.txt /tmp/ng.lines $NG_TRUTH /tmp/m.prom
    return
  fi
  if ! compare_thunk "$3"; then
    fail "$1" "thunk truth: $(grep '^DIFF' /tmp/cmpt.out | head -n 8 | tr '\n' ';')"
    dump "$1" /tmp/cmpt.out /tmp/ng.lines $NG_TRUTH /tmp/m.prom
    return
  fi
  pass "$1" "$(tail -n 1 /tmp/cmp.out | awk '{ print $3 }') series = simulator truth ($2), $(tail -n 1 /tmp/cmpt.out | awk '{ print $3 }') = thunk truth ($3): $(awk -v fams=" $3 " '
    { k = $1 == "queues" ? "gpuq_queues" : $1 == "processes" ? "gpuq_processes" : $1 == "create" ? "gpuq_queue_creates_total" : $1 == "destroy" ? "gpuq_queue_destroys_total" : $1 == "exit" ? "gpuq_process_exits_total" : $1 == "submit" ? "gpuq_submissions_total" : "gpuq_queue_pending_packets" }
    index(fams, " " k " ") { printf "%s%s%s gpu %s = %s", sep, $1, ($1 == "destroy" ? ($4 == 1 ? "(ioctl)" : "(exit)") : ""), $2, $6; sep = ", " }' /tmp/ng.lines); drops: $(dropped)"
}

# sum_for FAMILY CONTAINER ["LABEL=VALUE ..."]: the last scrape's FAMILY
# summed over CONTAINER's series carrying every label given.
sum_for() {
  awk -v fam="$1{" -v c="container=\"$2\"" -v want="$3" '
    index($0, fam) == 1 && index($0, c) {
      n = split(want, w, " ")
      for (i = 1; i <= n; i++) {
        split(w[i], kv, "=")
        if (!index($0, kv[1] "=\"" kv[2] "\"")) next
      }
      s += $NF
    }
    END { print s + 0 }' /tmp/m.prom
}

# series_a FAMILY: the sum of the last scrape's FAMILY for container A.
series_a() { sum_for "$1" "$(echo $ID_A | cut -c1-12)"; }

# client_sums TRUTH: per GPU, "GPU WRITES DISPATCHES BARRIERS OTHER" of the
# client's own queues in a thunk's truth (not ROCr's internal ones): the
# packets it wrote, and of those the null CP consumed the kernel dispatches,
# the barriers and the rest (vendor, agent, other), as the agent's
# packet_type="kernel_dispatch", "barrier" and "other" (with "unreadable")
# count them.
client_sums() {
  awk '$1 == "queue" && index($0, " owner=client ") {
      split("", f)
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      g = f["gpu_id"]
      w[g] += f["write_index"]; d[g] += f["dispatches"]; b[g] += f["barriers"]
      o[g] += f["vendor"] + f["agent"] + f["other"]; e[g] += f["ext_dispatches"]
      bb[g] += f["barrier_dispatches"] }
    END { for (g in w) print g, w[g], d[g], b[g], o[g], e[g] + 0, bb[g] + 0 }' "$1"
}

# rocr_steps / hip_steps / rocblas_steps: the client's queues and packets,
# checked by every agent of the run after each step (the CP paused on the
# way: the packets written stay pending).
rocr_steps() {
  # two client queues on GPU 0 (HWS), one on GPU 1 (MES); ROCr adds its
  # utility queue
  drv rocr queue r1 0 128
  drv rocr queue r2 1 256
  drv rocr queue r3 0 128
  drv rocr submit r1 40
  drv rocr submit r2 25 barrier
  drv rocr submit r3 10
  # as HIP 7 replays a graph: batches of 32 slots, one ring each (4 rings)
  drv rocr batch r3 100 32 mixed
  # as CLR launches on gfx1250: AMD's extended kernel dispatch packets
  # (VENDOR_SPECIFIC, AmdFormat 3), every 4th a barrier (3 rings)
  drv rocr batch r3 60 20 ext
  check_thunk queues "gpuq_queues gpuq_processes"
  check_thunk creates gpuq_queue_creates_total
  check_thunk submissions "gpuq_submissions_total gpuq_queue_pending_packets"
  if paused_cp pending; then
    drv rocr submit r1 30 nowait
    drv rocr submit r2 12 barrier nowait
    check_thunk pending "gpuq_submissions_total gpuq_queue_pending_packets"
  fi
  rm -f $NG_CTL/pause
  drv rocr drain r1
  drv rocr drain r2
  check_thunk drained "gpuq_submissions_total gpuq_queue_pending_packets"
}

# HIP 5.2.3 gives a device's first stream a hardware queue of its pool (and
# the next ones up to GPU_MAX_HW_QUEUES, 4); with HSA_ENABLE_SDMA=0 the
# copies run as ROCr's blit kernels on its own utility queue. Every packet
# on HIP's queues (launches, and the barrier of a stream sync) is one ring.
# HIP 6.4.3 and 7.2.4 (STACK) run the same steps; HIP 7 rings once per batch
# of a graph's packets (its value the batch's last index), so there rings
# are fewer than packets and the doorbells check counts packets.
hip_steps() {
  drv hip stream h1 0
  drv hip stream h2 1
  drv hip stream h3 0
  drv hip launch h1 40
  drv hip launch h2 25
  drv hip launch h3 10
  drv hip copy h1
  # a graph launched twice: HIP 7 submits it in batches, one ring each (the
  # doorbells check counts their packets), so 7.2.4's has 300 nodes; the
  # older HIPs ring once per packet, and 30 nodes show their graphs as well
  # with 540 fewer rings for every agent's uprobes
  if [ "${STACK:-}" = 7.2 ]; then
    drv hip graph h3 300 2
  else
    drv hip graph h3 30 2
  fi
  drv hip wait h1
  drv hip wait h2
  drv hip wait h3
  check_thunk queues "gpuq_queues gpuq_processes"
  check_thunk creates gpuq_queue_creates_total
  check_thunk submissions "gpuq_submissions_total gpuq_queue_pending_packets"
  if paused_cp pending; then
    drv hip launch h1 30
    drv hip launch h2 12
    check_thunk pending "gpuq_submissions_total gpuq_queue_pending_packets"
  fi
  rm -f $NG_CTL/pause
  drv hip wait h1
  drv hip wait h2
  check_thunk drained "gpuq_submissions_total gpuq_queue_pending_packets"
}

# rocBLAS 6.4.4's sgemm on one stream of GPU 0 (its Tensile kernels loaded
# from the root's code objects for gfx90a; the null CP runs no kernel code).
rocblas_steps() {
  drv rocblas sgemm 256 20
  drv rocblas wait
  check_thunk queues "gpuq_queues gpuq_processes"
  check_thunk creates gpuq_queue_creates_total
  check_thunk submissions "gpuq_submissions_total gpuq_queue_pending_packets"
  if paused_cp pending; then
    drv rocblas sgemm 128 5
    check_thunk pending "gpuq_submissions_total gpuq_queue_pending_packets"
  fi
  rm -f $NG_CTL/pause
  drv rocblas wait
  check_thunk drained "gpuq_submissions_total gpuq_queue_pending_packets"
}

# check_thunk CHECK FAMILIES: the thunk's truth now (container A alive), its
# submissions and pending packets as the simulator's driver truth; FAMILIES
# against both, for each agent of the run (its group's CHECK).
check_thunk() {
  ng_dump
  thunk_lines 0 > /tmp/ng.lines
  grep '^submit\|^pending' /tmp/ng.lines > /tmp/drv.truth
  ca_each ca_expect_both "$1" "$2"
}
ca_expect_both() { expect_both "$G:$1" "$2" "$2"; }

# paused_cp CHECK: pauses the null CP; false (CHECK failed for every agent
# of the run) unless the thunk's next dump says paused=1.
paused_cp() {
  touch $NG_CTL/pause
  ng_dump
  grep -q 'paused=1' $NG_TRUTH && return 0
  ca_fail "$1" "the null CP did not report paused: $(head -n 1 $NG_TRUTH)"
  return 1
}

# client_gpus NAME: the GPU indexes NAME's client submits to (rocblas_client:
# device 0 only).
# client_rings NAME GPU-INDEX: what the client itself says it rang on that
# GPU, or "" when it cannot know (HIP counts launches, not rings).
client_gpus() { if [ $1 = rocblas ]; then echo 0; else echo 0 1; fi; }
client_rings() {
  case $1 in
    rocr) awk -v gi="gpu=$2" '$1 == "QUEUE" && $3 == gi { sub("rings=", "", $6); s += $6 } END { print s + 0 }' /tmp/rocr.out ;;
    hip | rocblas) echo "" ;;
  esac
}

# client_launches NAME GPU-INDEX: the kernel launches the client made on
# that GPU ("" for rocr_client, whose packets are not all dispatches).
client_launches() {
  case $1 in
    rocr | rocblas) echo "" ;;
    hip) awk -v gi="gpu=$2" '$1 == "STREAM" && $3 == gi { sub("launches=", "", $4); s += $4 } END { print s + 0 }' /tmp/hip.out ;;
  esac
}

# ---- sampling with the deployment's capabilities ----------------------------------
# Two more agents beside the rocr client's, as the least-privilege image runs
# (capbound: the capability half of deploy/README.md's flags; the guest has no
# container runtime): "leastpriv" with exactly CAP_BPF, CAP_PERFMON,
# CAP_SYS_ADMIN and CAP_SYS_PTRACE, "noptrace" without CAP_SYS_PTRACE. The
# client is root with every capability, as a container's processes are. They
# run the tracepoint tier, the cheapest to load (the run's own two agents
# load theirs at the same time on the one vCPU): what they check is sampling,
# which every tier does alike.
LP_AGENTS="leastpriv:9481:bpf,perfmon,sys_admin,sys_ptrace noptrace:9482:bpf,perfmon,sys_admin"
lp_start() {
  local a n port caps t0 url
  for a in $LP_AGENTS; do
    n=${a%%:*} port=${a#*:} caps=${port#*:} port=${port%%:*}
    /bin/capbound "$caps" /bin/gpuq-agent --web.listen-address 127.0.0.1:$port --no-runtime-lookup \
      --probe-tier=tracepoint --sample-interval 100ms > /tmp/agent-$n.out 2>&1 &
    eval "LP_PID_$n=$!"
  done
  for a in $LP_AGENTS; do
    n=${a%%:*} port=${a#*:} port=${port%%:*}
    url=http://127.0.0.1:$port/metrics
    t0=$(up)
    while within 180 "$t0"; do
      # its KFD hooks, not any two (the cgroup tracepoints attach even
      # where the planner found no tracepoint tier)
      if timeout 10 wget -q -O /tmp/lp.prom "$url" 2> /dev/null; then
        agent_probes_absent /tmp/lp.prom tracepoint
        [ -z "$ABSENT" ] && break
      fi
      eval "kill -0 \$LP_PID_$n" 2> /dev/null || break
      sleep 0.3
    done
  done
}
lp_stop() {
  local a n pid
  for a in $LP_AGENTS; do
    n=${a%%:*}
    eval "pid=\$LP_PID_$n"
    [ -n "$pid" ] || continue
    kill -TERM "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    eval "LP_PID_$n="
  done
}
# lp_checks P: with /tmp/ng.lines the thunk's truth, "leastpriv" must count
# container A's submissions and pending packets as the thunk says, with no
# sample denied; "noptrace" must count none, every sample denied, said once
# in its log naming CAP_SYS_PTRACE.
lp_checks() {
  local P=$1 t0 ok=0 url caps denied said sub
  caps=$(awk '/^CapEff:/ { print $2 }' /proc/$LP_PID_leastpriv/status 2> /dev/null)
  t0=$(up)
  while within 30 "$t0"; do
    timeout 10 wget -q -O /tmp/lp.prom http://127.0.0.1:9481/metrics 2> /dev/null || { sleep 0.3; continue; }
    { cat /tmp/static.in; sed 's/^/NOW /' /tmp/ng.lines; sed 's/^/MET /' /tmp/lp.prom; } > /tmp/lp.in
    sim_compare --fams "gpuq_submissions_total gpuq_queue_pending_packets" /tmp/lp.in > /tmp/lp.out
    grep -q '^RESULT ok' /tmp/lp.out && ok=1 && break
    sleep 0.3
  done
  denied=$(awk '/^gpuq_queue_samples_total\{result="denied"\}/ { print $2 }' /tmp/lp.prom)
  if [ $ok = 1 ] && [ "$caps" = 000000c000280000 ] && [ "${denied:-x}" = 0 ]; then
    pass $P:least-privilege "an agent with exactly CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYS_PTRACE (CapEff $caps) samples the client (root, every capability): $(tail -n 1 /tmp/lp.out | awk '{ print $3 }') series = the thunk's truth, denied samples 0"
  else
    fail $P:least-privilege "CapEff '$caps' (want 000000c000280000), denied '$denied', thunk truth: $(grep '^DIFF' /tmp/lp.out | head -n 6 | tr '\n' ';') its KFD hooks: $(grep '^gpuq_probe_attached{probe="tp_' /tmp/lp.prom | tr '\n' ' ')"
    dump $P-leastpriv /tmp/lp.out /tmp/agent-leastpriv.out
  fi
  ok=0
  t0=$(up)
  while within 30 "$t0"; do
    timeout 10 wget -q -O /tmp/lp.prom http://127.0.0.1:9482/metrics 2> /dev/null || { sleep 0.3; continue; }
    denied=$(awk '/^gpuq_queue_samples_total\{result="denied"\}/ { print $2 }' /tmp/lp.prom)
    [ "${denied:-0}" -gt 0 ] && ok=1 && break
    sleep 0.3
  done
  sub=$(awk '/^gpuq_submissions_total\{/ { s += $NF } END { print s + 0 }' /tmp/lp.prom)
  said=$(grep -c 'CAP_SYS_PTRACE' /tmp/agent-noptrace.out)
  if [ $ok = 1 ] && [ "$sub" = 0 ] && [ "$said" = 1 ]; then
    pass $P:no-ptrace "without CAP_SYS_PTRACE: $denied samples denied, no submissions made up, one log line: $(grep CAP_SYS_PTRACE /tmp/agent-noptrace.out | cut -c1-160)"
  else
    fail $P:no-ptrace "denied '$denied' (want > 0), submissions $sub (want 0), log lines naming CAP_SYS_PTRACE $said (want 1)"
    dump $P-noptrace /tmp/agent-noptrace.out /tmp/lp.prom
  fi
}

# ---- agents, one per probe tier at once (the client runs', the programs') ----
# The agents: CA_N; the i-th in tier CA_T_i, pid CA_PID_i, with a group of
# its own, CA_A_i (its start and stops checks). One that leaves (ca_drop)
# says why in /tmp/ca-out-i (the client runs are subshells). In a client
# run, CA_G_i is the agent's group for it (NAME[-STACK][-SUFFIX]) and
# CA_IN_i=1 if that group runs (GPUQ_CLIENTS); elsewhere CA_IN_i=1 for all.
# ca_use I: the I-th agent's URL, TIER, ATTACH_MIN, AG_PID, G and CA_I.
ca_use() {
  CA_I=$1
  eval "G=\${CA_G_$1:-\$CA_A_$1} TIER=\$CA_T_$1 AG_PID=\${CA_PID_$1:-}"
  PORT=$(tier_port "$TIER")
  URL=http://127.0.0.1:$PORT/metrics
  ATTACH_MIN=$(tier_attach_min "$TIER")
}
# ca_each CMD ARGS...: CMD ARGS for each agent of the run still in it (ca_use).
ca_each() {
  local i
  for i in $(seq "$CA_N"); do
    eval "[ \"\${CA_IN_$i:-}\" = 1 ]" || continue
    [ -e /tmp/ca-out-$i ] && continue
    ca_use "$i"
    "$@"
  done
}
# ca_fail CHECK MSG: CHECK failed for every agent of the run.
ca_fail() { ca_each ca_fail1 "$1" "$2"; }
ca_fail1() { fail "$G:$1" "$2"; }
# ca_skip REASON CHECKS: each of CHECKS (rocr's least-privilege ones too)
# skipped for every agent of the run.
ca_skip() { ca_each ca_skip1 "$@"; }
ca_skip1() {
  local c
  for c in $2 $([ $G = rocr ] && echo least-privilege no-ptrace); do skip "$G:$c" "$1"; done
}
# ca_drop WHY: the current agent leaves the runs, stopped (the runs after
# fail their start check with WHY; agents_stop reaps it).
ca_drop() {
  echo "$1" > /tmp/ca-out-$CA_I
  kill -TERM "$AG_PID" 2> /dev/null
}
# ca_gone: the start check of each group of the run whose agent left.
ca_gone() {
  local i g
  for i in $(seq "$CA_N"); do
    eval "[ \"\${CA_IN_$i:-}\" = 1 ]" && [ -e /tmp/ca-out-$i ] || continue
    eval "g=\$CA_G_$i"
    fail "$g:start" "its agent left the runs before: $(cat /tmp/ca-out-$i)"
  done
}

# agents_start FLAGS GROUP:TIER...: an agent per GROUP:TIER on TIER's port
# (CA_N; the i-th: CA_A_i = GROUP, CA_T_i = TIER, CA_PID_i), with FLAGS
# (--doorbells=uprobe and its --hsa-runtime files among them) and TIER's
# own, started together (their programs load on the one vCPU at once), then
# each up with its lifecycle probes and doorbell uprobes attached (GROUP:start)
# or gone (ca_drop). BASE is now.
agents_start() {
  local a
  CA_FLAGS=$1
  shift
  CA_N=0
  rm -f /tmp/ca-out-*
  for a in "$@"; do
    CA_N=$((CA_N + 1))
    eval "CA_A_$CA_N=\${a%%:*} CA_T_$CA_N=\${a#*:} CA_IN_$CA_N=1"
  done
  cp $TRUTH /tmp/base.truth
  ca_each ca_launch
  ca_each agent_up
}
# ca_launch: the current agent started (not awaited).
ca_launch() {
  # shellcheck disable=SC2046,SC2086
  launch_agent $G $CA_FLAGS $(tier_flags $TIER)
  eval "CA_PID_$CA_I=\$AG_PID CA_T0_$CA_I=$(up)"
}
# agent_up: the current agent served /metrics with its lifecycle probes
# attached in its tier and its doorbell uprobes (its group's start check;
# the time to that in CA_UP_i, its doorbell uprobes in CA_DB_i), or it
# leaves (ca_drop).
agent_up() {
  local t0 db
  eval "t0=\$CA_T0_$CA_I"
  await_agent "$t0"
  if [ -z "$AG_UP" ]; then
    fail $G:start "the agent ($(tier_flags $TIER) $CA_FLAGS) never served /metrics with its probes attached"
    dump $G /tmp/agent-$G.out /tmp/m.prom
    ca_drop "it never served /metrics with its probes attached"
    return
  fi
  agent_probes_absent /tmp/m.prom "$TIER"
  db=$(grep -c '^gpuq_probe_attached{probe="doorbell_.*tier="uprobe"} 1$' /tmp/m.prom)
  [ "$db" -gt 0 ] || ABSENT="$ABSENT doorbell-uprobes"
  if [ -n "$ABSENT" ]; then
    fail $G:start "not attached in tier $TIER:$ABSENT ($(grep '^gpuq_probe_attached{' /tmp/m.prom | tr '\n' ' '))"
    dump $G /tmp/agent-$G.out /tmp/m.prom
    ca_drop "not attached in tier $TIER:$ABSENT"
    return
  fi
  eval "CA_UP_$CA_I=\$AG_UP CA_DB_$CA_I=\$db"
  pass $G:start "agent up after ${AG_UP}s: lifecycle probes in tier $TIER, $db doorbell uprobes (--hsa-runtime files: $(echo "$CA_FLAGS" | grep -o -- '--hsa-runtime [^ ]*' | cut -d' ' -f2 | tr '\n' ' ')); $CA_N agent(s) at once"
}
# agent_probes_absent METRICS TIER: ABSENT = TIER's lifecycle probes
# (tier_probes) not attached in TIER in the METRICS scrape.
agent_probes_absent() {
  local c
  ABSENT=""
  for c in $(tier_probes "$2"); do
    grep -q "^gpuq_probe_attached{probe=\"$c\",.*tier=\"$2\"} 1\$" "$1" || ABSENT="$ABSENT $c"
  done
}
# agents_stop: each agent stops on SIGTERM (its group's stops check); those
# that left are reaped.
agents_stop() {
  local i
  for i in $(seq "$CA_N"); do
    ca_use "$i"
    if [ -e /tmp/ca-out-$i ]; then
      wait "$AG_PID" 2> /dev/null
      continue
    fi
    stop_agent
    if [ "$STOP_RESULT" = "exit 0" ]; then
      pass $G:stops "exit 0 after SIGTERM"
    else
      fail $G:stops "$STOP_RESULT after SIGTERM"
    fi
    dump $G "/tmp/agent-$G.out"
  done
}

# ---- client runs: one agent per probe tier watches all of a guest's runs -----
# Every client run of a guest runs under the same agents, one per probe tier
# the guest checks (the btf guest's btf-fentry and btf-kprobe, the nobtf
# guest's args-kprobe and tracepoint), each on its tier's port with
# --doorbells=uprobe on every ROCr the runs map (--hsa-runtime, repeatable),
# started before the first run and stopped after the last: a user's agent
# while containers with their own ROCm come and go. (Two agents started per
# run cost 28-66 s of TCG time a run, 7 runs a guest.) Each run has a
# container of its own (run_container): the run's thunk truth is
# compared with that container's series alone (THUNK_ONLY), the simulator's
# truth with every series since the agents started (BASE), the submissions
# of earlier runs' containers taken from their thunks (/tmp/drv.past).
# The agents' groups: "clients" in btf-fentry, "clients-SUFFIX" in the
# others.
# client_list: every client run as NAME:STACK (no STACK: Debian 12's ROCm
# 5.2.3), their groups' base names NAME[-STACK]: Debian 12's ROCr and HIP
# 5.2.3 on the null thunk, and the ROCm stacks users run in 2026
# (run_sim_tier.sh's ROCM_STACKS, listed in /lib/nullgpu/rocm-stacks):
# Debian's ROCr 6.4.3 and 7.2.4, whose queues the KFD null GPU forwards, their
# HIP (6.4.3, 7.2.4) and rocBLAS (6.4.4), each chrooted in its root shared
# over 9p.
client_list() {
  local s
  echo rocr: hip:
  for s in $(cat /lib/nullgpu/rocm-stacks 2> /dev/null); do echo "rocr:$s"; done
  for s in $(cat /lib/nullgpu/rocm-stacks 2> /dev/null); do echo "hip:$s"; done
  echo rocblas:6.4
}
# client_base NAME:STACK: the run's groups' base name.
client_base() {
  local s=${1#*:}
  echo "${1%%:*}${s:+-$s}"
}

# client_agents_start SUFFIX:TIER...: the client runs' agents (agents_start),
# in the tiers where any client group runs, with --hsa-runtime on the ROCr
# file of each run that has one; no runs before.
client_agents_start() {
  local a c base runtimes="" f any groups="" flags
  : > /tmp/drv.past
  for c in $(client_list); do
    f=$(STACK=${c#*:} rocr_runtime ${c%%:*})
    [ -f "$f" ] || continue
    case " $runtimes " in *" $f "*) ;; *) runtimes="$runtimes $f" ;; esac
  done
  for a in "$@"; do
    any=""
    for c in $(client_list); do
      base=$(client_base "$c")
      client_on "$(client_groups "$base" "$a" | cut -d: -f1)" && any=1
    done
    [ -n "$any" ] && groups="$groups $(client_groups clients "$a")"
  done
  CA_N=0
  [ -n "$groups" ] || return
  # Its --container-grace outlasts the guest's runs: the simulator's truth
  # keeps every run's container, and the default 300 s removed the first
  # runs' series before the last run's checks (seen on 7.3); the grace
  # itself is the unit tier's (retire_test.cc).
  # --recording.dir: max_hw_queues records through the btf-fentry agent.
  flags="--sample-interval 100ms --doorbells=uprobe --container-grace 3600s --recording.dir /tmp/recs-clients"
  for f in $runtimes; do flags="$flags --hsa-runtime $f"; done
  ktime clients-start
  # shellcheck disable=SC2086
  agents_start "$flags" $groups
  ktime clients-ready
}

# run_container LEAD: container A for this run (runs are subshells): a
# docker cgroup of its own, its id from the run's lead group, in
# /tmp/static.in for sim_compare. It stays (no --container-grace expiry
# while the agents run).
run_container() {
  ID_A=$(echo "run $1" | sha256sum | cut -c1-64)
  CG_A=/sys/fs/cgroup/system.slice/docker-$ID_A.scope
  THUNK_ONLY=$(echo $ID_A | cut -c1-12)
  mkdir -p $CG_A
  echo "CG $(stat -c %i $CG_A) $THUNK_ONLY" >> /tmp/static.in
}
# run_past: the submissions of the run's container, its client gone (the
# thunk's final truth), move to /tmp/drv.past for the runs after.
run_past() {
  [ -s $NG_TRUTH ] && thunk_lines 1 | grep '^submit' >> /tmp/drv.past
  : > /tmp/drv.truth
}

# client_checks NAME GROUP:TIER...: NAME's client (STACK's, if set) in a
# container of its own, under the runs' agents: GROUP's checks for the
# agent in TIER, those GPUQ_CLIENTS names; the first group leads (its timing
# marks; rocr's adds the least-privilege agents).
client_checks() {
  local name=$1 lead="" a i pid runtime markers checks what c
  shift
  runtime=$(rocr_runtime $name)
  eval "checks=\$$(echo "$name" | tr a-z A-Z)_CHECKS"
  for a in "$@"; do
    client_on "${a%%:*}" || continue
    for i in $(seq "$CA_N"); do
      eval "[ \"\$CA_T_$i\" = \"${a#*:}\" ]" && eval "CA_G_$i=${a%%:*} CA_IN_$i=1"
    done
    [ -n "$lead" ] || lead=${a%%:*}
  done
  for i in $(seq "$CA_N"); do eval "[ -n \"\${CA_G_$i:-}\" ]" || eval "CA_IN_$i=0"; done
  [ -n "$lead" ] || return
  ca_gone
  markers="missing $name-missing"
  [ -z "${STACK:-}" ] || markers="rocm-$STACK-missing $([ $name != rocr ] && echo $name-$STACK-missing)"
  for c in $markers; do
    if [ -f /lib/nullgpu/$c ]; then
      ca_skip "$(cat /lib/nullgpu/$c)" "$checks"
      return
    fi
  done
  [ -n "$(ca_each echo x)" ] || return
  ktime $lead-start
  run_container $lead
  : > /tmp/drv.truth
  [ $lead = rocr ] && lp_start
  ca_each client_agent_serves
  if [ -z "$(ca_each echo x)" ]; then
    lp_stop
    return
  fi
  start_client $name
  eval "pid=\$PID_$name"
  if [ -z "$pid" ]; then
    ca_fail start "${name} client: no READY ($(head -n 3 /tmp/$name.out | tr '\n' ';'))"
    dump $lead /tmp/$name.out
    exec 8>&- # its stdin ends: it exits
    lp_stop
    return
  fi
  # the doorbell uprobes sit on the --hsa-runtime files: the client must
  # map this run's
  maps=$(grep -o '/[^ ]*libhsa-runtime64[^ ]*' /proc/$pid/maps | sort -u | tr '\n' ' ')
  if [ "$maps" != "$runtime " ]; then
    ca_fail start "the $name client maps ROCr as '$maps', not the --hsa-runtime file $runtime"
    exit_driver $name
    run_past
    lp_stop
    return
  fi
  if [ -n "${STACK:-}" ] && [ $name != rocr ]; then
    d=/rocm/$name-$STACK
    what="(Debian's $([ -s $d/rocblas-version ] && echo "rocBLAS $(cat $d/rocblas-version), ")HIP $(cat $d/hip-version) and ROCr $(cat $d/rocr-version), chrooted in its root over 9p, on the KFD null GPU forwarding to /dev/kfd)"
  elif [ -n "${STACK:-}" ]; then
    what="(Debian's ROCr $(cat /rocm/$STACK/version) on the KFD null GPU forwarding to /dev/kfd)"
  else
    what="(on the null thunk with /dev/kfd)"
  fi
  ca_each ca_pass_start "$name client pid $pid in container $THUNK_ONLY: $(head -n 1 /tmp/$name.out) $what"
  ktime $lead-ready
  ${name}_steps
  if [ $lead = rocr ]; then
    lp_checks rocr
    lp_stop
  fi

  # doorbells: what the client rang, then each agent's figures
  drv $name truth
  ca_each client_doorbells $name "$runtime"

  if [ $name = rocr ]; then
    # hsa_queue_destroy: an ioctl destroy
    drv rocr destroy r2
    check_thunk destroys "$LIFECYCLE $SUBMISSION"
  fi

  # the process exits without hsa_shut_down: KFD tears it down (its
  # kworker), every gauge back to zero, the counters stay. rocr_client
  # writes 7 packets on r1 right before it exits: only the exit read
  # (bpf/exit_read.bpf.h; exit_group in the tracepoint tier) can count
  # them, the sampler never sees them.
  if [ $name = rocr ]; then
    exit_driver $name "submit r1 7 nowait"
  else
    exit_driver $name
  fi
  thunk_lines 1 > /tmp/ng.lines
  grep '^submit' /tmp/ng.lines > /tmp/drv.truth
  ca_each client_teardown
  run_past
  dump $lead-client /tmp/$name.out
  sed 's/^/thunk: /' $NG_TRUTH > /tmp/ng.txt
  dump $lead-thunk /tmp/ng.txt
  ca_each client_run_stops $name
  ktime $lead-done
}

# client_agent_serves: the current agent still serves /metrics with its
# lifecycle probes attached, or this run's start check fails and it leaves.
client_agent_serves() {
  if ! scrape /tmp/m.prom; then
    fail $G:start "the agent no longer serves /metrics"
    ca_drop "it stopped serving /metrics (before the run of $G)"
    return
  fi
  agent_probes_absent /tmp/m.prom "$TIER"
  if [ -n "$ABSENT" ]; then
    fail $G:start "lifecycle probes no longer attached in tier $TIER:$ABSENT"
    ca_drop "lifecycle probes no longer attached in tier $TIER:$ABSENT (before the run of $G)"
  fi
}
# ca_pass_start WHAT: the current agent's start check of the run passes,
# saying WHAT ran.
ca_pass_start() {
  local up db
  eval "up=\$CA_UP_$CA_I db=\$CA_DB_$CA_I"
  pass $G:start "the agent serves (up after ${up}s before the guest's first client run; lifecycle probes in tier $TIER, $db doorbell uprobes); $1"
}

# client_teardown: after the client's exit (/tmp/ng.lines, /tmp/drv.truth
# its thunk's final truth), the current agent's families against both
# truths, container A's gauges at zero.
client_teardown() {
  local q pp
  expect_both $G:teardown "$LIFECYCLE $SUBMISSION" "$LIFECYCLE $SUBMISSION"
  q=$(series_a gpuq_queues)
  pp=$(series_a gpuq_queue_pending_packets)
  if [ "$q" != 0 ] || [ "$pp" != 0 ]; then
    fail $G:teardown "after the exit container A still has $q queues, $pp pending packets"
  fi
  dump $G-metrics /tmp/m.prom
}

# client_run_stops NAME: NAME's client did every command as expected and
# exited, and the current agent serves on for the next run.
client_run_stops() {
  local serves=yes
  scrape /tmp/alive.prom || serves=no
  if [ $serves = yes ] && ! grep -q '^BAD' /tmp/$1.out; then
    pass $G:stops "the $1 client: every command as expected, exited; the agent serves on for the next run"
  else
    fail $G:stops "the agent serves /metrics: $serves; the $1 client: $(grep '^BAD' /tmp/$1.out | head -n 3 | tr '\n' ';')"
  fi
}

# client_doorbells NAME RUNTIME: the current agent's doorbell figures for
# NAME's client against what it rang (its truth dumped: `drv NAME truth`).
client_doorbells() {
  local name=$1 runtime=$2 cid t0 ok detail gi g rings launches tw td tb to te tbb got pk kd ke kbb kb ko
  # every ring of the client went through the exported
  # hsa_signal_store_screlease; per GPU the packets they published = the
  # write indexes of its queues in the thunk (rocr_client's batches publish
  # up to 32 packets a ring; HIP 7 a graph's in batches), the rings = the
  # client's own count where it has one, kernel-dispatch packets = the
  # kernel dispatches the null CP consumed on them (HIP's launches, and
  # from 6.4 on its copies' blit kernels, on the stream's own queue: at
  # least the launches) (ROCr's utility queues ring internally: no uprobe
  # sees them)
  scrape /tmp/m.prom
  cid=$(echo $ID_A | cut -c1-12)
  t0=$(up)
  ok=0
  while within 30 "$t0"; do
    ok=1
    detail=""
    for gi in $(client_gpus $name); do
      g=$(gpu_of_node $((gi + 1)))
      rings=$(client_rings $name $gi)
      launches=$(client_launches $name $gi)
      read -r tw td tb to te tbb <<EOF
$(client_sums $NG_TRUTH | awk -v g="$g" '$1 == g { print $2, $3, $4, $5, $6, $7 }')
EOF
      tw=${tw:-0} td=${td:-0} tb=${tb:-0} to=${to:-0} te=${te:-0} tbb=${tbb:-0}
      got=$(sum_for gpuq_doorbells_total "$cid" "gpu_id=$g")
      pk=$(sum_for gpuq_doorbell_packets_total "$cid" "gpu_id=$g")
      kd=$(sum_for gpuq_doorbell_packets_total "$cid" "gpu_id=$g packet_type=kernel_dispatch")
      ke=$(sum_for gpuq_doorbell_packets_total "$cid" "gpu_id=$g packet_type=kernel_dispatch format=amd_ext")
      kbb=$(sum_for gpuq_doorbell_barrier_dispatches_total "$cid" "gpu_id=$g")
      kb=$(sum_for gpuq_doorbell_packets_total "$cid" "gpu_id=$g packet_type=barrier")
      ko=$(($(sum_for gpuq_doorbell_packets_total "$cid" "gpu_id=$g packet_type=other") + \
        $(sum_for gpuq_doorbell_packets_total "$cid" "gpu_id=$g packet_type=unreadable")))
      detail="$detail gpu $g: doorbell packets $pk, thunk client write indexes $tw, rings $got"
      [ -n "$rings" ] && detail="$detail, client rings $rings"
      detail="$detail, by type (kernel_dispatch, of which amd_ext, of which with the barrier bit, barrier, other) $kd $ke $kbb $kb $ko, the null CP's $td $te $tbb $tb $to"
      [ -n "$launches" ] && detail="$detail, launches $launches"
      detail="$detail;"
      { [ "$pk" = "$tw" ] && [ "$tw" -gt 0 ]; } || ok=0
      [ -z "$rings" ] || [ "$rings" = "$got" ] || ok=0
      [ "$kd" = "$td" ] && [ "$ke" = "$te" ] && [ "$kbb" = "$tbb" ] && [ "$kb" = "$tb" ] && [ "$ko" = "$to" ] || ok=0
      [ -z "$launches" ] || [ "$launches" -le "$kd" ] || ok=0
    done
    [ $ok = 1 ] && break
    sleep 0.3
    scrape /tmp/m.prom
  done
  if [ $ok = 1 ]; then
    pass $G:doorbells "--doorbells=uprobe on $runtime:$detail"
  else
    fail $G:doorbells "$detail"
    grep '^gpuq_doorbell\|^gpuq_probe_attached' /tmp/m.prom > /tmp/db.txt
    dump $G-doorbells /tmp/db.txt /tmp/$name.out
  fi

}

# client_runs SUFFIX:TIER...: every client run of this guest (client_list),
# each in a subshell, under the agents of client_agents_start; its groups
# named NAME[-STACK] in btf-fentry and NAME[-STACK]-SUFFIX in the others.
# A subshell itself: the agents' PORT, URL, TIER... stay in it.
# shellcheck disable=SC2046 # client_groups' words are the arguments
client_runs() (
  client_agents_start "$@"
  [ "$CA_N" = 0 ] && exit 0
  for c in $(client_list); do
    (STACK=${c#*:} client_checks ${c%%:*} $(client_groups "$(client_base "$c")" "$@"))
  done
  case " $* " in *" :btf-fentry "*) (max_hw_queues) ;; esac
  agents_stop
  : > /tmp/drv.past
)
# ---- the users' GPU_MAX_HW_QUEUES experiment ------------------------------------
# max_hw_queues: one HIP program (Debian's HIP 5.2.3 on the null thunk
# forwarding to /dev/kfd's node 1; `hip_client queues 8`: 8 streams, a
# kernel on each, one copy each way, held with its streams alive) at
# GPU_MAX_HW_QUEUES=1 and at 8, each in a container of its own, recorded
# through the btf-fentry agent's recording API (`record --from --container`)
# while it runs. Checks, each against the null thunk's truth exactly:
#   live    per run, the agent's live queues of that container (every KFD
#           queue ROCr made: HIP's and its own), and its doorbells' kernel
#           dispatches and those with the barrier bit (HIP's queues: the
#           uprobes never see ROCr's internal ones);
#   report  `report hwq-1=... hwq-8=...` compares the two captures side by
#           side: the queues created, the runtime knobs each process was
#           started with, the kernel dispatches and the barrier-bit share.
# Its checks: MHQ_CHECKS (check_lists.sh).
max_hw_queues() {
  local n id cg rec t0 bad="" detail="" q live kd bb want_q want_created want_kd want_bb knobs rrc
  if [ -f /lib/nullgpu/missing ] || [ -f /lib/nullgpu/hip-missing ]; then
    for c in $MHQ_CHECKS; do skip max-hw-queues:$c "$(cat /lib/nullgpu/missing /lib/nullgpu/hip-missing 2> /dev/null | head -n 1)"; done
    return
  fi
  PORT=$(tier_port btf-fentry) URL=http://127.0.0.1:$(tier_port btf-fentry)/metrics TIER=btf-fentry
  : > /tmp/mhq-report.want
  for n in 1 8; do
    id=$(echo "max-hw-queues $n" | sha256sum | cut -c1-64)
    cg=/sys/fs/cgroup/system.slice/docker-$id.scope
    mkdir -p $cg /tmp/ngctl-mhq$n
    rm -f /tmp/mhq$n.* /tmp/ngctl-mhq$n/*
    /bin/gpuq-agent record --from "http://127.0.0.1:$PORT" --container "$(echo $id | cut -c1-12)" \
      -o /tmp/mhq$n.cap > /tmp/mhq$n.rec 2>&1 &
    rec=$!
    t0=$(up)
    while ! grep -q 'until Ctrl-C' /tmp/mhq$n.rec && kill -0 $rec 2> /dev/null && within 30 "$t0"; do sleep 0.1; done
    mkfifo /tmp/mhq$n.in
    exec 7<> /tmp/mhq$n.in
    ng_run $cg /tmp/ngctl-mhq$n /tmp/mhq$n.truth 1xgfx90a 1 GPU_MAX_HW_QUEUES=$n GPUQ_HIP_CLIENT_HOLD=1 \
      /bin/hip_client queues 8 < /tmp/mhq$n.in > /tmp/mhq$n.out 2>&1 7>&- &
    t0=$(up)
    while ! grep -q '^HOLD\|^BAD' /tmp/mhq$n.out 2> /dev/null && within 300 "$t0"; do sleep 0.2; done
    ng_dump /tmp/ngctl-mhq$n /tmp/mhq$n.truth
    want_q=$(grep '^queue ' /tmp/mhq$n.truth | grep -c ' live=1 ')
    want_created=$(grep -c '^queue ' /tmp/mhq$n.truth)
    set -- $(client_sums /tmp/mhq$n.truth | awk '{ d += $3 + $6; b += $7 } END { print d + 0, b + 0 }')
    want_kd=$1 want_bb=$2
    # the agent has sampled every queue (and so read the knobs) and counted
    # every doorbell
    t0=$(up)
    while :; do
      scrape /tmp/m.prom
      live=$(sum_for gpuq_queues "$(echo $id | cut -c1-12)")
      kd=$(sum_for gpuq_doorbell_packets_total "$(echo $id | cut -c1-12)" packet_type=kernel_dispatch)
      bb=$(sum_for gpuq_doorbell_barrier_dispatches_total "$(echo $id | cut -c1-12)")
      q=$(sum_for gpuq_queue_samples_total "$(echo $id | cut -c1-12)" result=read)
      [ "$live $kd $bb" = "$want_q $want_kd $want_bb" ] && [ "$q" -gt 0 ] && break
      within 30 "$t0" || break
      sleep 0.3
    done
    grep -q '^hip_client queues .* ok$' /tmp/mhq$n.out || bad="$bad run-$n:$(tail -n 2 /tmp/mhq$n.out | tr '\n' ';')"
    [ "$live $kd $bb" = "$want_q $want_kd $want_bb" ] || bad="$bad GPU_MAX_HW_QUEUES=$n:queues-$live-want-$want_q,dispatches-$kd-want-$want_kd,barrier-bit-$bb-want-$want_bb"
    detail="$detail GPU_MAX_HW_QUEUES=$n: $live queues, $kd kernel dispatches, $bb with the barrier bit ($(grep -c '^queue .* owner=client ' /tmp/mhq$n.truth) of the queues HIP's);"
    kill -INT $rec
    t0=$(up)
    while kill -0 $rec 2> /dev/null && within 60 "$t0"; do sleep 0.1; done
    wait $rec || bad="$bad record-$n-exit-$?"
    exec 7>&- # its stdin ends: it exits
    echo "$n $want_created $want_kd $want_bb" >> /tmp/mhq-report.want
  done
  mhq_verdict live "$bad" "the agent equals the null thunk's truth exactly:$detail" \
    /tmp/mhq1.out /tmp/mhq8.out /tmp/mhq1.truth /tmp/mhq8.truth /tmp/mhq1.rec /tmp/mhq8.rec
  # report: the comparison's rows, one cell per run, against the truth
  timeout 120 /bin/gpuq-agent report hwq-1=/tmp/mhq1.cap hwq-8=/tmp/mhq8.cap > /tmp/mhq-report.txt 2> /tmp/mhq-report.err
  rrc=$?
  mhq_row() { awk -v w="$1" 'index($0, w) == 1 { $0 = substr($0, length(w) + 1); sub(/^ +/, ""); gsub(/  +/, "|"); print; exit }' /tmp/mhq-report.txt; }
  bad=""
  knobs=$(mhq_row "runtime knobs")
  # created, kernel dispatches, barrier-bit dispatches of run 1, then run 8
  set -- $(awk '{ printf "%s %s %s ", $2, $3, $4 }' /tmp/mhq-report.want)
  [ "$(mhq_row "queues created")" = "$1|$4" ] || bad="$bad queues-created:$(mhq_row "queues created")-want-$1|$4"
  [ "$(mhq_row "kernel dispatches (doorbells)")" = "$2|$5" ] || bad="$bad dispatches:$(mhq_row "kernel dispatches (doorbells)")-want-$2|$5"
  [ "$(mhq_row "  with the barrier bit" | sed 's/ ([0-9]*%)//g')" = "$3|$6" ] || bad="$bad barrier-bit:$(mhq_row "  with the barrier bit")-want-$3|$6"
  [ "$knobs" = "GPU_MAX_HW_QUEUES=1 HSA_ENABLE_SDMA=0|GPU_MAX_HW_QUEUES=8 HSA_ENABLE_SDMA=0" ] || bad="$bad knobs:$knobs"
  [ $rrc = 0 ] || bad="$bad report-exit-$rrc:$(head -n 1 /tmp/mhq-report.err)"
  detail="queues created $(mhq_row "queues created"), kernel dispatches $(mhq_row "kernel dispatches (doorbells)"), with the barrier bit $(mhq_row "  with the barrier bit"), knobs $knobs"
  mhq_verdict report "$bad" "report compares the two runs side by side, each column the truth's: $detail" \
    /tmp/mhq-report.txt /tmp/mhq-report.err /tmp/mhq-report.want
}
# mhq_verdict CHECK BAD DETAIL FILES...: max-hw-queues:CHECK passes without
# BAD, else fails with FILES dumped.
mhq_verdict() {
  local check=max-hw-queues:$1 bad=$2 detail=$3
  shift 3
  if [ -z "$bad" ]; then
    pass $check "$detail"
  else
    fail $check "$bad; $detail"
    dump $check "$@"
  fi
}

# client_groups BASE SUFFIX:TIER...: BASE's GROUP:TIER arguments.
client_groups() {
  local base=$1 a
  shift
  for a in "$@"; do
    case ${a%%:*} in
      "") echo "$base:${a#*:}" ;;
      *) echo "$base-${a%%:*}:${a#*:}" ;;
    esac
  done
}
only clients && client_runs :btf-fentry kprobe:btf-kprobe

# Subshells: whatever goes wrong in a mode, init lives on to report it.
only fentry && (run_mode fentry)
only kprobe && (MODE=kprobe TIER=btf-kprobe run_mode kprobe --no-fentry)
# ---- record -- COMMAND, --container, SIGINT -----------------------------------
# record_checks: `record --container <A> -- sh -c ...` around a driver that the
# command moves into container A, while a driver in container B creates a
# queue during the recording; the command's status (7) comes back and the
# capture replays to A's operations only. Then a bare `record` stopped by
# SIGINT after a queue of B's was created: exit 0, and the create is in it.
record_checks() {
  local short_a short_b rc
  short_a=$(echo $ID_A | cut -c1-12)
  short_b=$(echo $ID_B | cut -c1-12)
  start_driver r2 $CG_B 6
  printf 'create ra1 %s aql\ncreate ra2 %s sdma\ndestroy ra1\nexit\n' "$G_HWS" "$G_MES" > /tmp/ra.cmds
  SEQ=$((SEQ + 1))
  timeout 300 /bin/gpuq-agent record -o /tmp/rec.cap --no-runtime-lookup --container "$short_a" -- \
    sh -c "echo 'create rb1 $G_HWS aql' >&6; echo 'sync $SEQ' >&6
      while ! grep -q 'SYNC $SEQ\$' /tmp/r2.out; do sleep 0.05; done
      echo \$\$ > $CG_A/cgroup.procs && /bin/kfd_sim_driver < /tmp/ra.cmds > /tmp/ra.out 2>&1; exit 7" \
    > /tmp/rec.log 2>&1
  rc=$?
  dump record /tmp/rec.log
  cat /tmp/ra.out >> /tmp/drivers.out
  if [ $rc = 7 ]; then pass record-command "the command's exit status 7 came back"; else fail record-command "exit $rc, want 7"; fi
  timeout 60 /bin/gpuq-agent --once -o prometheus --replay /tmp/rec.cap > /tmp/rec.prom 2>&1
  a=$(grep "^gpuq_queue_creates_total{container=\"$short_a\"" /tmp/rec.prom | awk '{ s += $NF } END { print s + 0 }')
  b=$(grep -c "container=\"$short_b\"" /tmp/rec.prom)
  d=$(grep "^gpuq_queue_destroys_total{container=\"$short_a\".*reason=\"ioctl\"" /tmp/rec.prom | awk '{ s += $NF } END { print s + 0 }')
  if [ "$a" = 2 ] && [ "$d" = 1 ] && [ "$b" = 0 ] && grep -q "rb1" /tmp/r2.out; then
    pass record-container "capture of A: 2 creates, 1 ioctl destroy; B's create during the recording left out"
  else
    fail record-container "creates of A: $a (want 2), ioctl destroys: $d (want 1), series of B: $b (want 0)"
    dump record-prom /tmp/rec.prom
  fi
  start_recorder /tmp/int.cap /tmp/int.log 180
  drv r2 create rb2 "$G_MES" sdma
  stop_recorder
  rc=$REC_RC
  dump record-int /tmp/int.log
  timeout 60 /bin/gpuq-agent --once -o prometheus --replay /tmp/int.cap > /tmp/int.prom 2>&1
  n=$(grep "^gpuq_queue_creates_total{container=\"$short_b\"" /tmp/int.prom | awk '{ s += $NF } END { print s + 0 }')
  if [ $rc = 0 ] && [ "$n" = 1 ]; then
    pass record-sigint "SIGINT: exit 0, the capture replays with the create before it"
  else
    fail record-sigint "exit $rc (want 0), creates of B in the capture: $n (want 1)"
  fi
  exit_driver r2
}
only record && (record_checks)

# ---- short-lived containers keep their names ----------------------------------
# Two Kubernetes Job containers (containerd's CRI layout: a cri-containerd
# scope under kubepods, the bundle's config.json with the CRI annotations,
# both removed the moment the task ends, as containerd does) each create
# queues and submit for about 2 s, then exit. Every series they produced
# must carry their names, never a short id or "unresolved". The bundle
# stands for containerd's; the host tier (tests/bpf/short_lived_podman_test.sh)
# runs real podman containers for the doorbell series.
short_lived_checks() {
  local pod_cg=/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod7c0ffee0_1234_4abc_8def_0123456789ab.slice
  local tasks=/run/containerd/io.containerd.runtime.v2.task/k8s.io
  local n id cg name bad="" detail=""
  : > /tmp/agent-short.out
  cp $TRUTH /tmp/base.truth
  /bin/gpuq-agent --web.listen-address 127.0.0.1:$PORT --runtime.run-dir /run \
    --reconcile-interval 2s --recording.dir /tmp/recs > /tmp/agent-short.out 2>&1 &
  AG_PID=$!
  t0=$(up)
  while ! { scrape /tmp/m.prom && [ "$(grep -c '^gpuq_probe_attached{.*} 1$' /tmp/m.prom)" -ge 4 ]; } &&
    kill -0 $AG_PID 2> /dev/null && within 180 "$t0"; do sleep 0.2; done
  # The jobs run while `record --from` records through the daemon's API.
  /bin/gpuq-agent record --from "http://127.0.0.1:$PORT" -o /tmp/api.cap > /tmp/api-rec.log 2>&1 &
  API_PID=$!
  t1=$(up)
  while ! grep -q 'until Ctrl-C' /tmp/api-rec.log && kill -0 $API_PID 2> /dev/null && within 30 "$t1"; do
    sleep 0.1
  done
  for n in 1 2; do
    id=$(printf 'b%063d' "$n")
    cg=$pod_cg/cri-containerd-$id.scope
    mkdir -p "$cg" "$tasks/$id"
    printf '{"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-name":"job-%s","io.kubernetes.cri.sandbox-name":"batch-%s-xk2p","io.kubernetes.cri.sandbox-namespace":"jobs"}}' \
      "$n" "$n" > "$tasks/$id/config.json"
    sh -c "echo \$\$ > $cg/cgroup.procs
      { echo 'create s${n}a $G_HWS aql'; echo 'create s${n}b $G_MES sdma'; echo 'submit s${n}a 40'
        sleep 2; echo exit; } | /bin/kfd_sim_driver > /tmp/short$n.out 2>&1" &
  done
  wait_short=$(up)
  while [ "$(cat /tmp/short1.out /tmp/short2.out 2> /dev/null | grep -c EXIT)" -lt 2 ] && within 60 "$wait_short"; do
    sleep 0.1
  done
  # containerd deletes the bundle and the cgroup as soon as the task exits
  for n in 1 2; do
    id=$(printf 'b%063d' "$n")
    rm -rf "${tasks:?}/$id"
    t1=$(up)
    while ! rmdir "$pod_cg/cri-containerd-$id.scope" 2> /dev/null && within 30 "$t1"; do sleep 0.1; done
  done
  sleep 3
  scrape /tmp/m.prom
  # Each job: its series under its name, its 2 creates, its exit, and the
  # exit's destroy of each of its queues, exactly (both drivers create at
  # once, at one FIFO priority: neither preempts the other inside a program).
  for n in 1 2; do
    name="job-$n"
    named=$(grep '^gpuq_' /tmp/m.prom | grep -c "container=\"$name\".*namespace=\"jobs\"")
    creates=$(sum_for gpuq_queue_creates_total "$name" namespace=jobs)
    destroys=$(sum_for gpuq_queue_destroys_total "$name" namespace=jobs)
    exits=$(sum_for gpuq_process_exits_total "$name" namespace=jobs)
    detail="$detail $name: $creates creates, $destroys destroys, $exits exit;"
    [ "$named" -ge 1 ] || bad="$bad no-series-named-$name"
    [ "$creates $destroys $exits" = "2 2 1" ] ||
      bad="$bad $name:creates=$creates,destroys=$destroys,exits=$exits(want-2,2,1)"
  done
  # Nothing of theirs under an id or unresolved.
  strays=$(grep '^gpuq_' /tmp/m.prom | grep -c 'container="b0000\|container="unresolved"')
  [ "$strays" = 0 ] || bad="$bad $strays-series-under-id-or-unresolved"
  if [ -z "$bad" ]; then
    pass short-lived-named "two 2 s Job containers, bundle and cgroup removed at exit: every series named ($detail)"
  else
    fail short-lived-named "missing or misnamed:$bad"
    grep 'job-\|container="b0000\|unresolved\|^gpuq_events_dropped_total' /tmp/m.prom > /tmp/short.prom
    dump short-lived /tmp/short.prom /tmp/agent-short.out /tmp/short1.out
  fi
  api_record_check
  cat /tmp/short1.out /tmp/short2.out >> /tmp/drivers.out
  stop_agent
}

# api_record_check: the recording API end to end, live. `record --from`
# recorded the two jobs through the daemon; stopped now, its capture's
# replay and report must give every series of theirs the daemon exports
# (/tmp/m.prom, scraped since they ended) exactly: the jobs ran entirely
# inside the recording.
api_record_check() {
  local rc fams want got n created subs bad="" detail=""
  REC_PID=$API_PID
  stop_recorder
  rc=$REC_RC
  dump api-record /tmp/api-rec.log
  scrape /tmp/m-api.prom
  timeout 60 /bin/gpuq-agent --once -o prometheus --replay /tmp/api.cap > /tmp/api.prom 2> /tmp/api-once.err
  fams='^gpuq_(queue_creates_total|queue_destroys_total|process_exits_total|submissions_total|queues|queue_pending_packets)\{'
  want=$(grep -E "$fams" /tmp/m-api.prom | grep 'namespace="jobs"' | sort)
  got=$(grep -E "$fams" /tmp/api.prom | grep 'namespace="jobs"' | sort)
  [ "$rc" = 0 ] || bad="$bad record-from-exit-$rc"
  [ -n "$want" ] || bad="$bad no-job-series-exported"
  [ "$want" = "$got" ] || bad="$bad replay-differs"
  timeout 60 /bin/gpuq-agent report /tmp/api.cap > /tmp/api-report.txt 2>&1 || bad="$bad report-failed"
  for n in 1 2; do
    # CONTAINER POD NAMESPACE ID PROCS GPUS QUEUES_PEAK COMPUTE_PEAK CREATED SUBMISSIONS
    created=$(awk -v c="job-$n" '$1 == c && $3 == "jobs" { print $9 }' /tmp/api-report.txt)
    subs=$(awk -v c="job-$n" '$1 == c && $3 == "jobs" { print $10 }' /tmp/api-report.txt)
    [ "$created" = "$(sum_for gpuq_queue_creates_total "job-$n" namespace=jobs)" ] || bad="$bad job-$n-created-$created"
    [ "$subs" = "$(sum_for gpuq_submissions_total "job-$n" namespace=jobs)" ] || bad="$bad job-$n-submissions-$subs"
    detail="$detail job-$n: $created created, $subs submissions;"
  done
  if [ -z "$bad" ]; then
    pass api-record "record --from through the daemon's API around two Job containers: its replay gives their $(echo "$want" | wc -l) series exactly, its report their creates and submissions ($detail)"
  else
    fail api-record "$bad"
    { echo "$want" | sed 's/^/AGENT /'; echo "$got" | sed 's/^/REPLAY /'; } > /tmp/api-diff.txt
    dump api-record-diff /tmp/api-diff.txt /tmp/api-report.txt /tmp/api-once.err /tmp/agent-short.out
  fi
}
only short-lived && (short_lived_checks)

# ---- partitioned GPUs: 8 MI300X in CPX mode, 64 KFD nodes ------------------------
# The simulator reloaded with 64 more GPUs, 8 partitions of each of 8
# physical GPUs (extra_partitions=8: the topology of an MI300X node in CPX
# mode). A process in container A holds a compute queue on every partition,
# one in container B an SDMA queue on each partition of the first physical
# GPU. Every lifecycle family per partition equals the truth; gpuq_gpu_info
# joins each node to the physical GPU and partition its topology says
# (location_id: the bus and device, the partition in the function bits),
# numbered as amd-smi numbers sockets (by PCI address); and /metrics joined
# with it, and --once's PHYSICAL GPUS, sum the truth's queues per physical
# GPU exactly.
part_phys() { # the sysfs node's physical GPU "pci partition", from its properties
  awk '$1 == "location_id" { l = $2 } $1 == "domain" { d = $2 }
    END { printf "%04x:%02x:%02x %d\n", d, int(l / 256) % 256, int(l / 8) % 32, l % 8 }' "$1/properties"
}
# partitions_checks GROUP PER_GPU NODES: the simulator reloaded with NODES
# extra GPUs, PER_GPU partitions of each physical GPU (CPX: 8, DPX: 2); the
# checks are named GROUP:<check> (PART_CHECKS).
partitions_checks() {
  local G=$1 per=$2 nodes=$3 n first nd g i bad="" got want
  ktime $G-start
  rmmod amdgpu > /tmp/part-mod.txt 2>&1 && insmod $SIM/amdgpu.ko $SIM_ARGS extra_hws_gpus=$nodes extra_partitions=$per >> /tmp/part-mod.txt 2>&1
  rc=$?
  n=$(($(ls -d $KFD/topology/nodes/* | wc -l) - 1))
  first=$((n - nodes + 1))
  if [ $rc != 0 ] || [ ! -e /sys/kernel/btf/amdgpu ] || [ $first -lt 4 ]; then
    fail $G:reload "rc=$rc, $n GPU nodes, btf $(ls /sys/kernel/btf/amdgpu 2>&1): $(tr '\n' ' ' < /tmp/part-mod.txt)"
    return
  fi
  # gpu_id, physical PCI device and partition of every GPU node, and the
  # physical GPUs' amd-smi order (domain, bus, device: one width, so text order)
  # (line k: node k; node 0 is the CPU)
  for nd in $(seq 1 $n); do
    echo "$(gpu_of_node $nd) $(part_phys $KFD/topology/nodes/$nd)"
  done > /tmp/part-nodes.txt
  awk '{ print $2 }' /tmp/part-nodes.txt | sort -u | awk '{ print $1, NR - 1 }' > /tmp/part-phys.txt
  pass $G:reload "simulator reloaded with extra_hws_gpus=$nodes extra_partitions=$per: $n GPU nodes, $(wc -l < /tmp/part-phys.txt) physical GPUs, partitions on nodes $first-$n ($(awk -v f=$first 'NR == f { print $2 }' /tmp/part-nodes.txt) .. $(awk -v n=$n 'NR == n { print $2 }' /tmp/part-nodes.txt))"
  cp /tmp/static.in /tmp/static.saved
  {
    grep -v '^GPU ' /tmp/static.saved
    awk '{ print "GPU", $1 }' /tmp/part-nodes.txt
  } > /tmp/static.in
  : > /tmp/drv.truth
  start_agent $G
  if [ -z "$AG_UP" ]; then
    fail $G:queues "no /metrics with the lifecycle probes attached"
    dump $G /tmp/agent-$G.out
    stop_agent
    cp /tmp/static.saved /tmp/static.in
    return
  fi
  start_driver pa $CG_A 3
  start_driver pb $CG_B 4
  i=0
  for nd in $(seq $first $n); do
    g=$(gpu_of_node $nd)
    echo "create p$i $g aql" >&3
    [ $nd -lt $((first + 8)) ] && echo "create s$i $g sdma" >&4
    i=$((i + 1))
  done
  drv pa version
  drv pb version
  ktime $G-created
  expect_truth $G:queues "$LIFECYCLE"
  # -- gpuq_gpu_info: each node's partition and physical GPU
  scrape /tmp/m.prom
  bad=$(awk 'FNR == NR { phys[$1] = $2; next }
    FILENAME ~ /part-nodes/ { want[$1] = "gpu_partition_id=\"" $3 "\",gpu_physical_index=\"" phys[$2] "\",gpu_physical_pci=\"" $2 "\""; next }
    index($0, "gpuq_gpu_info{") == 1 {
      match($0, /gpu_id="[0-9]*"/); g = substr($0, RSTART + 8, RLENGTH - 9)
      seen[g] = 1
      if (!(g in want) || !index($0, want[g])) print "gpu " g ": " $0
    }
    END { for (g in want) if (!(g in seen)) print "gpu " g ": no gpuq_gpu_info" }' \
    /tmp/part-phys.txt /tmp/part-nodes.txt /tmp/m.prom)
  if [ -z "$bad" ]; then
    pass $G:gpu-info "$(wc -l < /tmp/part-nodes.txt) gpuq_gpu_info series, each with the partition and physical GPU (gpu_physical_pci, gpu_physical_index) its topology node says"
  else
    fail $G:gpu-info "$(echo "$bad" | head -n 3 | tr '\n' ';')"
  fi
  # -- per physical GPU: the truth's live queues (a queues line per GPU, type
  #    and cgroup) summed by the physical GPU of each gpu_id, against
  #    /metrics' gpuq_queues joined with gpuq_gpu_info's gpu_physical_index
  awk '{ print $1, $2 }' /tmp/part-nodes.txt > /tmp/part-map.txt
  want=$(awk 'FNR == NR { phys[$1] = $2; next } FILENAME ~ /part-map/ { idx[$1] = phys[$2]; next }
    $1 == "queues" && ($2 in idx) { s[idx[$2]] += $6 }
    END { for (p in s) if (s[p]) print p, s[p] }' /tmp/part-phys.txt /tmp/part-map.txt $TRUTH | sort -n | tr '\n' ' ')
  got=$(awk 'index($0, "gpuq_gpu_info{") == 1 {
      match($0, /gpu_id="[0-9]*"/); g = substr($0, RSTART, RLENGTH)
      match($0, /gpu_physical_index="[0-9]*"/); idx[g] = substr($0, RSTART + 20, RLENGTH - 21)
    }
    index($0, "gpuq_queues{") == 1 { match($0, /gpu_id="[0-9]*"/); q[substr($0, RSTART, RLENGTH)] += $NF }
    END { for (g in q) s[idx[g]] += q[g]; for (p in s) if (s[p]) print p, s[p] }' /tmp/m.prom | sort -n | tr '\n' ' ')
  if [ -n "$want" ] && [ "$got" = "$want" ]; then
    pass $G:physical "live queues per physical GPU (index queues), /metrics joined with gpuq_gpu_info = the truth summed by topology: $got"
  else
    fail $G:physical "per physical GPU: agent '$got', truth '$want'"
  fi
  stop_agent
  # -- --once (seeded from sysfs): PHYSICAL GPUS, queues (COMPUTE + SDMA +
  #    OTHER) and processes per physical GPU: the truth's queues, and 2
  #    processes where container B's process also is (the first), else 1
  timeout 180 /bin/gpuq-agent --once --interval 1s --no-runtime-lookup > /tmp/part-once.txt 2>&1
  got=$(sed -n '/^PHYSICAL GPUS/,/^$/p' /tmp/part-once.txt | awk 'NR > 2 && NF && $4 + $5 + $6 { print $1, $4 + $5 + $6, $7 }' | tr '\n' ' ')
  # (B's process: the physical GPUs of nodes first .. first+7, where its
  # SDMA queues are)
  want=$(echo "$want" | awk -v both="$(awk -v f=$first 'FNR == NR { phys[$1] = $2; next }
      FNR >= f && FNR < f + 8 { printf "%s ", phys[$2] }' /tmp/part-phys.txt /tmp/part-nodes.txt)" '
    BEGIN { n = split(both, f, " "); for (i = 1; i <= n; i++) b[f[i]] = 1 }
    { for (i = 1; i < NF; i += 2) printf "%s %s %d ", $i, $(i + 1), ($i in b) ? 2 : 1 }')
  if [ -n "$want" ] && [ "$got" = "$want" ]; then
    pass $G:once "--once's PHYSICAL GPUS (index queues processes): $got"
  else
    fail $G:once "got '$got', want '$want'"
    dump $G-once /tmp/part-once.txt
  fi
  exit_driver pa
  exit_driver pb
  cp /tmp/static.saved /tmp/static.in
  rmmod amdgpu > /tmp/part-mod.txt 2>&1 && insmod $SIM/amdgpu.ko $SIM_ARGS >> /tmp/part-mod.txt 2>&1 ||
    fail $G:reload "cannot load the simulator back: $(tr '\n' ' ' < /tmp/part-mod.txt)"
  ktime $G-done
}
if only partitions; then
  (partitions_checks partitions 8 64)
  (partitions_checks partitions-dpx 2 8)
fi

# ---- skips: the one run that lets the kernel skip programs ---------------------
# forced_skips CHECK: every other check runs where no program can be skipped
# (RUNTIME_SCHED above); this one makes the kernel skip them, as on a user's
# host. The tracepoint tier's agent, a driver's burst of creates and
# destroys and two loops of syscalls run SCHED_OTHER on the one vCPU: a tick
# preempts a task inside sys_enter's or sys_exit's program and the next task
# to enter it is skipped. Then the agent is made FIFO again (no skip can
# happen any more) and its gpuq_events_dropped_total{reason="prog_skipped"}
# must equal the sum of the kernel's recursion_misses over the agent's
# programs (the only programs loaded then: no other agent runs), exactly,
# and be above 0, and gpuq_program_skipped_runs_total each program's. An agent that ignored a skip would
# export less. A kernel that never preempts a program (6.1: voluntary)
# cannot be made to skip one: the check is skipped there, naming the model.
forced_skips() {
  local check=$1 got want per i loops bad name n a
  if [ -z "$PREEMPTS" ] || [ -z "$RUNTIME_SCHED" ]; then
    skip $check "no skip can be forced: this kernel never preempts a BPF program (sched/preempt: $(cat /sys/kernel/debug/sched/preempt 2> /dev/null)); the newest kernel's guest runs this check"
    return
  fi
  : > /tmp/agent-skips.out
  ATTACH_MIN=2 # (a subshell's: the tracepoint tier's two hooks)
  start_agent skips --probe-tier=tracepoint
  if [ -z "$AG_UP" ]; then
    fail $check "the tracepoint tier's agent did not serve with its probes attached"
    dump $check /tmp/agent-skips.out
    stop_agent
    return
  fi
  # every thread of it time-shared from now on, as on a user's host
  chrt -o -a -p 0 "$AG_PID"
  start_driver d9 $CG_B 9
  chrt -o -p 0 "$PID_d9"
  loops=""
  for i in 1 2; do
    chrt -o 0 sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); : < /proc/uptime; done' &
    loops="$loops $!"
  done
  drv d9 burst "$G_HWS" 300
  wait $loops
  exit_driver d9
  chrt -f -a -p 1 "$AG_PID"
  # the counts can no longer move; the agent reads the kernel's at each scrape
  if [ "$(pidof gpuq-agent)" != "$AG_PID" ]; then
    fail $check "another agent runs beside the tracepoint tier's ($(pidof gpuq-agent)): its programs' misses would be counted too"
    stop_agent
    return
  fi
  prog_misses > /tmp/skips-kernel.txt
  want=$(awk '{ s += $2 } END { print s + 0 }' /tmp/skips-kernel.txt)
  per=$(awk '$2 > 0 { printf "%s%s %d", sep, $1, $2; sep = ", " }' /tmp/skips-kernel.txt)
  scrape /tmp/m.prom
  got=$(awk 'index($0, "gpuq_events_dropped_total{reason=\"prog_skipped\"}") == 1 { print $NF + 0 }' /tmp/m.prom)
  # and program by program (a program the agent does not count, the cgroup
  # watcher's, must have no skips: the sum above would miss them)
  bad=""
  while read -r name n; do
    a=$(awk -v l="gpuq_program_skipped_runs_total{program=\"$name\"}" 'index($0, l) == 1 { print $NF + 0 }' /tmp/m.prom)
    [ -z "$a" ] && [ "$n" = 0 ] && continue
    [ "$a" = "$n" ] || bad="$bad $name:agent-${a:-none}-kernel-$n"
  done < /tmp/skips-kernel.txt
  if [ "$want" -gt 0 ] && [ "${got:-none}" = "$want" ] && [ -z "$bad" ]; then
    pass $check "the kernel skipped the agent's programs $want times (${per}); the agent exports prog_skipped $got and each program's count in gpuq_program_skipped_runs_total; drops: $(dropped)"
  elif [ "$want" = 0 ]; then
    fail $check "no program was skipped under SCHED_OTHER load: nothing forced (programs: $(tr '\n' ';' < /tmp/skips-kernel.txt))"
  else
    fail $check "the kernel skipped the agent's programs $want times ($per), the agent exports prog_skipped ${got:-none}; per program:${bad:- equal}"
    dump $check /tmp/skips-kernel.txt /tmp/m.prom /tmp/agent-skips.out
  fi
  stop_agent
}

# ---- the same simulator without BTF: what amdgpu-dkms hosts run -------------
# nobtf/amdgpu.ko is the module with its .BTF section removed, so
# /sys/kernel/btf/amdgpu is absent. The agent runs with no tier flag: its
# planner must choose the argument-only kprobe tier by itself, and the
# tracepoint tier once kprobes are disarmed. Both against the same truth
# (docs/probe-tiers.md): the args bodies learn every identity from nested
# calls, the tracepoint tier decodes the ioctls from sys_enter/sys_exit.
ktime nobtf-start
# GPUQ_KTEST_ONLY=tracepoint (a developer's knob): the tracepoint tier's
# lifecycle checks alone, without the args-kprobe tier and the clients.
if only nobtf || named tracepoint; then
rmmod amdgpu > /tmp/nobtf.txt 2>&1 && insmod $SIM/nobtf/amdgpu.ko $SIM_ARGS >> /tmp/nobtf.txt 2>&1
rc=$?
if [ $rc = 0 ] && [ ! -e /sys/kernel/btf/amdgpu ] && [ -c /dev/kfd ] &&
  grep -q "kfd_procfs_add_queue	\[amdgpu\]" /proc/kallsyms; then
  pass nobtf-reload "simulator reloaded without .BTF: /sys/kernel/btf/amdgpu absent, /dev/kfd and [amdgpu] kallsyms present"
  sim_gpus
  ARGS_PROBES=$LIFECYCLE_PROBES
  [ $HAS_CONTEXTS = 1 ] && ARGS_PROBES="$ARGS_PROBES $ARGS_CONTEXT_PROBES"
  if ! named tracepoint; then
    (MODE=kprobe TIER=args-kprobe SEEDED_EXACT=0 PROBES=$ARGS_PROBES TIER_GIVES="runlist eviction" run_mode args)
    client_runs args:args-kprobe tp:tracepoint
  fi
  if echo 0 > /sys/kernel/debug/kprobes/enabled 2> /tmp/kp.txt; then
    pass kprobes-off "kprobes disarmed (/sys/kernel/debug/kprobes/enabled = 0)"
    (MODE=tracepoint TIER=tracepoint PROBES="$TP_PROBE_NAMES" ATTACH_MIN=2 TIER_GIVES="" SEEDED_EXACT=0 \
      run_mode tracepoint)
    (forced_skips skips:forced)
    echo 1 > /sys/kernel/debug/kprobes/enabled
  else
    fail kprobes-off "cannot disarm kprobes: $(cat /tmp/kp.txt)"
  fi
else
  fail nobtf-reload "rc=$rc btf=$(ls /sys/kernel/btf/amdgpu 2>&1) kfd=$(ls -l /dev/kfd 2>&1): $(tr '\n' ' ' < /tmp/nobtf.txt)"
fi
fi
ktime nobtf-done

# ---- programs: the users' workloads in three containers, every probe tier ------
# Real HIP programs (hip_client, GPUQ_HIP_CLIENT_HOLD=1: they hold their
# queues after their work until stdin ends, then exit without HIP's
# teardown), HIP 5.2.3 on the null thunk forwarding to /dev/kfd, in
# containers: A (GPUQ_INFER=1 only, GPUQ_KTEST_INFER on the host) an
# inference-like run over 8 GPUs (infer 8 2 2: 2 streams per GPU; per
# iteration an H2D copy, 3 kernels, a D2H copy and an event), the longest
# (209 s of CPU; on a fast machine the guest took 143 s with it, 86 s
# without); B and C the users' experiment (a latency-sensitive program at
# 100 Hz on HIP's greatest-priority stream beside a batch one fenced to CUs
# 0-15) on an HWS GPU held to 2 CP queue slots (a runlist of more than 2
# compute queues is oversubscribed: HWS time-slices it); D and E its second
# run, at the same time, where the pair fits (24 slots: the simulator's
# fits_gpu_id; 0.3 s each); F and G B and C again on HIP 7.2.4 (below).
# sim_check programs-experiment says what is checked. Four agents, one per
# PROG_TIERS with PROG_CHECKS (check_lists.sh), watch them at once (every
# probe tier takes several consumers), each with --doorbells=uprobe on
# Debian 12's libhsa-runtime64 and the HIP 7.2 root's; every tier is
# compared with the same truths (the simulator's and each thunk's).
PROGS="lat batch fitlat fitbatch"
[ "${GPUQ_INFER:-0}" = 1 ] && PROGS="infer $PROGS"
# Containers F and G: the first pair on the newest ROCm the guest has,
# Debian's HIP 7.2.4 with its ROCr (root_run: chrooted in its root, shared
# over 9p, on the KFD null GPU), the figures users of ROCm 7 get
# (programs-<tier>:experiment-7.2). HIP72_MISSING: why they cannot run here
# (those checks skip).
HIP72_MISSING=""
for c in rocm-7.2-missing hip-7.2-missing; do
  [ -z "$HIP72_MISSING" ] && [ -f /lib/nullgpu/$c ] && HIP72_MISSING=$(cat /lib/nullgpu/$c)
done
[ -z "$HIP72_MISSING" ] && [ ! -x /share/hip-7.2/mnt/hip_client ] &&
  HIP72_MISSING="no HIP 7.2 root with hip_client at /share/hip-7.2 (run_sim_tier.sh's build_hip_stacks)"
[ -z "$HIP72_MISSING" ] && PROGS="$PROGS lat72 batch72"
ID_C=c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00
CG_C=/sys/fs/cgroup/system.slice/docker-$ID_C.scope
ID_D=d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0
CG_D=/sys/fs/cgroup/system.slice/docker-$ID_D.scope
ID_E=e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0
CG_E=/sys/fs/cgroup/system.slice/docker-$ID_E.scope
ID_F=f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0
CG_F=/sys/fs/cgroup/system.slice/docker-$ID_F.scope
ID_G=a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0
CG_G=/sys/fs/cgroup/system.slice/docker-$ID_G.scope
# prog_cg / prog_id PROG: the cgroup of PROG's container, its id as the
# agent labels it (prog_c: the container's letter).
prog_c() {
  case $1 in infer) echo A ;; lat) echo B ;; batch) echo C ;; fitlat) echo D ;;
    fitbatch) echo E ;; lat72) echo F ;; batch72) echo G ;; esac
}
prog_cg() { eval "echo \$CG_$(prog_c "$1")"; }
prog_id() { eval "echo \$ID_$(prog_c "$1")" | cut -c1-12; }
# prog_gives TIER: the optional family groups TIER exports (as TIER_GIVES).
prog_gives() {
  case $1 in
    btf-fentry | btf-kprobe) echo "runlist oversubscription" ;;
    args-kprobe) echo runlist ;;
  esac
}
# prog_experiment CHECK CHECK72 TIER: the users' experiment as TIER's agent
# sees it, the HIP 7.2 pair's too (sim_check programs-experiment), after one
# comparison of every family TIER has (prog_gives; the lifecycle too: a
# record lost to a skipped program shows there) with the simulator's truth.
prog_experiment() {
  local fams="$LIFECYCLE gpuq_queues_by_priority gpuq_queues_cu_masked" g
  g=$(prog_gives "$3")
  case " $g " in *" runlist "*) fams="$fams $RUNLIST" ;; esac
  case " $g " in *" oversubscription "*) fams="$fams $OVERSUB" ;; esac
  rm -f /tmp/truth.txt
  converge "$fams" || sed 's/^/truth: /' $TRUTH > /tmp/truth.txt
  sim_check programs-experiment "$1" "$2" /tmp/m.prom /tmp/cmp.out "families=$fams" "gives=$g" \
    "pair=$PAIR_GPU" "fits=$FITS_GPU" "pair72=$PAIR72_GPU" "lat=$(prog_id lat)" \
    "batch=$(prog_id batch)" "fitlat=$(prog_id fitlat)" "lat72=$(prog_id lat72)" \
    "batch72=$(prog_id batch72)" "missing72=$HIP72_MISSING" \
    "hip72=$(cat /share/hip-7.2/mnt/hip-version 2> /dev/null)" \
    "rocr72=$(cat /share/hip-7.2/mnt/rocr-version 2> /dev/null)" ||
    dump "$1" /tmp/cmp.out /tmp/truth.txt /tmp/m.prom /tmp/ng-lat72.truth /tmp/ng-batch72.truth
}

# prog_report CHECK: the experiment's capture (`record`, stopped while the
# programs hold) through `report` and replayed, against the btf-fentry
# agent and the simulator's truth (sim_check programs-report).
prog_report() {
  local rc rrc lat
  stop_recorder
  rc=$REC_RC
  dump programs-record /tmp/exp-rec.log
  timeout 120 /bin/gpuq-agent report /tmp/exp.cap > /tmp/exp.txt 2> /tmp/exp.err
  rrc=$?
  timeout 120 /bin/gpuq-agent --once -o prometheus --replay /tmp/exp.cap > /tmp/exp.prom 2>> /tmp/exp.err
  lat=$(prog_id lat)
  URL=http://127.0.0.1:$(tier_port btf-fentry)/metrics
  TIER=btf-fentry
  scrape /tmp/m.prom
  ONLY=$lat compare_once "gpuq_queue_preemptions_total gpuq_queue_preempted_seconds_total" /tmp/exp.prom
  sim_check programs-report "$1" "$rc" "$rrc" "$lat" /tmp/m.prom /tmp/exp.prom /tmp/exp.txt \
    /tmp/cmp.out /tmp/exp.cap || dump "$1" /tmp/exp.txt /tmp/exp.err /tmp/exp.prom /tmp/cmp.out
}

# prog_skip_all REASON: every programs check skipped with REASON.
prog_skip_all() {
  for c in reload run report; do skip programs:$c "$1"; done
  for t in $PROG_TIERS; do for c in $PROG_CHECKS; do skip programs-$t:$c "$1"; done; done
}

# start_prog NAME FD GPUS KFD-NODES ARGS...: hip_client ARGS in NAME's
# container, stdin a fifo held open on FD (closing FD ends its hold); the
# children close every program fd so only this shell holds them. HIP 5.2.3
# on the null thunk (ng_run), or for NAME *72 HIP 7.2.4 in its root on the
# KFD null GPU (root_run).
start_prog() {
  local name=$1 fd=$2 gpus=$3 nodes=$4
  shift 4
  rm -rf /tmp/p-$name.in /tmp/p-$name.out /tmp/ng-$name.truth /tmp/ngctl-$name
  mkdir -p /tmp/ngctl-$name
  mkfifo /tmp/p-$name.in
  eval "exec $fd<> /tmp/p-$name.in"
  local run="ng_run" client=/bin/hip_client
  case $name in *72) run="root_run hip-7.2" client=/mnt/hip_client ;; esac
  $run "$(prog_cg $name)" /tmp/ngctl-$name /tmp/ng-$name.truth $gpus $nodes \
    GPUQ_HIP_CLIENT_HOLD=1 $client "$@" < /tmp/p-$name.in > /tmp/p-$name.out 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  eval "PROG_PID_$name=$!"
}

# prog_truths EXITED: every program's thunk truth as truth lines
# (/tmp/ng.lines), its submissions and pending packets as the simulator
# side's driver truth (/tmp/drv.truth).
prog_truths() {
  : > /tmp/ng.lines
  for p in $PROGS; do
    [ "$1" = 0 ] && ng_dump /tmp/ngctl-$p /tmp/ng-$p.truth
    thunk_lines "$1" /tmp/ng-$p.truth "$(prog_cg $p)" >> /tmp/ng.lines
  done
  if [ "$1" = 0 ]; then grep '^submit\|^pending' /tmp/ng.lines; else grep '^submit' /tmp/ng.lines; fi > /tmp/drv.truth
}

# prog_doorbells CHECK: each program's doorbells and dispatches per container
# and GPU against its thunk (sim_check programs-doorbells), scraped again for
# up to 30 s until exact.
prog_doorbells() {
  local t0 p args=""
  for p in $PROGS; do
    client_sums /tmp/ng-$p.truth > /tmp/want-$p
    args="$args $p $(prog_id $p) /tmp/p-$p.out /tmp/want-$p"
  done
  t0=$(up)
  # shellcheck disable=SC2086
  while scrape /tmp/m.prom; ! sim_check programs-doorbells --quiet "$1" /tmp/m.prom "preempts=$PREEMPTS" $args; do
    within 30 "$t0" || break
    sleep 0.3
  done
  # shellcheck disable=SC2086
  sim_check programs-doorbells "$1" /tmp/m.prom "preempts=$PREEMPTS" $args && return
  grep '^gpuq_doorbell\|^gpuq_events_dropped' /tmp/m.prom > /tmp/db.txt
  threads "$AG_PID" > /tmp/db-threads.txt
  dump "$1" /tmp/db.txt $(for p in $PROGS; do echo /tmp/want-$p; done) /tmp/db-threads.txt
}

programs_checks() {
  local t fd p pid alive st
  if [ -f /lib/nullgpu/missing ] || [ -f /lib/nullgpu/hip-missing ]; then
    prog_skip_all "$(cat /lib/nullgpu/missing /lib/nullgpu/hip-missing 2> /dev/null | head -n 1)"
    return
  fi
  ktime programs-start
  # The BTF module with 9 more HWS GPUs: 6 of them and the first two for
  # the inference run, the last for the pair, the one before for the pair
  # that fits, the one before that for the HIP 7.2 pair; 2 CP queue slots
  # per HWS GPU but the second pair's.
  rmmod amdgpu > /tmp/prog-mod.txt 2>&1 && insmod $SIM/amdgpu.ko $SIM_ARGS extra_hws_gpus=9 cp_queue_slots=2 >> /tmp/prog-mod.txt 2>&1
  rc=$?
  n=$(($(ls -d $KFD/topology/nodes/* | wc -l) - 1))
  if [ $rc != 0 ] || [ ! -e /sys/kernel/btf/amdgpu ] || [ $n -lt 12 ]; then
    fail programs:reload "rc=$rc, $n GPU nodes, btf $(ls /sys/kernel/btf/amdgpu 2>&1): $(tr '\n' ' ' < /tmp/prog-mod.txt)"
    return
  fi
  # node 1 (HWS), node 2 (MES) and 6 of the 8 added last; the pair on the last
  nodes=1,2
  for i in $(seq $((n - 8)) $((n - 3))); do nodes="$nodes,$i"; done
  PAIR_NODE=$n
  PAIR_GPU=$(cat $KFD/topology/nodes/$n/gpu_id)
  FITS_NODE=$((n - 1))
  FITS_GPU=$(cat $KFD/topology/nodes/$FITS_NODE/gpu_id)
  PAIR72_NODE=$((n - 2))
  PAIR72_GPU=$(cat $KFD/topology/nodes/$PAIR72_NODE/gpu_id)
  if ! echo "$FITS_GPU" > $SIMPARAM/fits_gpu_id; then
    fail programs:reload "cannot set the simulator's fits_gpu_id to $FITS_GPU"
    return
  fi
  pass programs:reload "simulator reloaded with BTF, extra_hws_gpus=9 and cp_queue_slots=2: $n GPUs;$(case " $PROGS " in *" infer "*) echo " inference on nodes $nodes (HWS and MES)," ;; esac) the pair on node $n (HWS, gpu_id $PAIR_GPU), the pair that fits on node $FITS_NODE (gpu_id $FITS_GPU, 24 CP queue slots)$(case " $PROGS " in *" lat72 "*) echo ", the HIP 7.2 pair on node $PAIR72_NODE (gpu_id $PAIR72_GPU)" ;; esac)"
  mkdir -p $CG_C $CG_D $CG_E $CG_F $CG_G
  {
    qtypes
    echo "CG $(stat -c %i $CG_HOST) -"
    for p in $PROGS; do echo "CG $(stat -c %i "$(prog_cg $p)") $(prog_id $p)"; done
    for d in $KFD/topology/nodes/*; do
      g=$(cat $d/gpu_id)
      [ "$g" != 0 ] && echo "GPU $g"
    done
  } > /tmp/static.in
  # Sampling every 500 ms: the programs hold before anything is compared, so
  # a faster rate would only take the one vCPU from the programs' start
  # (four agents read every live queue at each tick). Four agents load at
  # once: up to 240 s.
  # shellcheck disable=SC2046
  AWAIT_S=240 agents_start "--sample-interval 500ms --doorbells=uprobe --hsa-runtime /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1$(
    case " $PROGS " in *" lat72 "*) echo " --hsa-runtime $(readlink -f /share/hip-7.2/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1)" ;; esac)" \
    $(for t in $PROG_TIERS; do echo "programs-$t:$t"; done)
  ktime programs-agents-up
  # The experiment recorded as a user would, for `report` (prog_report).
  start_recorder /tmp/exp.cap /tmp/exp-rec.log 240
  case " $PROGS " in *" infer "*) start_prog infer 5 8xgfx90a "$nodes" infer 8 2 2 ;; esac
  start_prog lat 6 1xgfx90a $PAIR_NODE latency 0 100 1500 high
  start_prog batch 7 1xgfx90a $PAIR_NODE batch 0 1500 0x0000ffff
  start_prog fitlat 8 1xgfx90a $FITS_NODE latency 0 100 300 high
  start_prog fitbatch 9 1xgfx90a $FITS_NODE batch 0 300
  case " $PROGS " in
    *" lat72 "*)
      start_prog lat72 3 1xgfx90a $PAIR72_NODE latency 0 100 1500 high
      start_prog batch72 4 1xgfx90a $PAIR72_NODE batch 0 1500 0x0000ffff
      ;;
  esac
  t0=$(up)
  # 174 s (6.1) and 244 s (7.3) with the null CP's idle back-off
  # (tests/nullgpu/cp_idle.h); the limit is for a hung program, not a slow
  # host. 849 s on 7.3 from a clean clone (about 40 s of system time per
  # program, much of it its null CP's polling; a khugepaged RCU stall in
  # the same guest): 1200 s, which with the agents' start and the checks
  # after it stays within the guest's 1800 s.
  while within 1200 "$t0"; do
    alive=0
    for p in $PROGS; do
      eval "pid=\$PROG_PID_$p"
      grep -q '^HOLD' /tmp/p-$p.out || { kill -0 $pid 2> /dev/null && alive=1; }
    done
    [ $alive = 0 ] && break
    sleep 0.2
  done
  ktime programs-held
  # Where the guest's one CPU went while the programs ran (the phase is the
  # tier's longest): CPU seconds of each agent and program, and the kernel's.
  {
    for i in $(seq "$CA_N"); do eval "echo agent-\$CA_T_$i \$CA_PID_$i"; done
    for p in $PROGS; do eval "echo prog-$p \$PROG_PID_$p"; done
  } | while read -r who pid; do
    awk -v w="$who" -v hz=100 \
      '{ sub(/^.*\) /, ""); printf "%s %.1f s user %.1f s system\n", w, $12 / hz, $13 / hz }' /proc/$pid/stat 2> /dev/null
  done > /tmp/prog-cpu.txt
  awk '/^cpu / { printf "guest user %.1f s system %.1f s idle %.1f s\n", $2 / 100, $4 / 100, $5 / 100 }' /proc/stat >> /tmp/prog-cpu.txt
  dump programs-cpu /tmp/prog-cpu.txt
  # Why a program never held (sim_check programs-run): where the threads
  # of one still running wait, or how one that died ended.
  for p in $PROGS; do
    eval "pid=\$PROG_PID_$p"
    rm -f /tmp/p-$p.threads /tmp/p-$p.status
    if grep -q '^HOLD' /tmp/p-$p.out; then
      :
    elif kill -0 $pid 2> /dev/null; then
      threads $pid > /tmp/p-$p.threads
      dump programs-$p-threads /tmp/p-$p.threads
    else
      wait $pid
      st=$?
      echo "$st $pid $(dmesg | grep -E "\[$pid\]|[Kk]illed process $pid " | tail -n 2 | tr '\n' ' ')" > /tmp/p-$p.status
    fi
  done
  # shellcheck disable=SC2046
  sim_check programs-run programs:run "$(elapsed "$t0")" $(for p in $PROGS; do
    echo "$p $(prog_id $p) /tmp/p-$p.out /tmp/p-$p.threads /tmp/p-$p.status"
  done) || for p in $PROGS; do dump programs-$p /tmp/p-$p.out; done

  # alive: every family against the simulator and the thunks, per tier
  prog_truths 0
  ca_each prog_live
  prog_report programs:report
  ktime programs-reported

  # the hold ends: each program exits with its queues, KFD tears them down
  for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done
  t0=$(up)
  for p in $PROGS; do
    eval "pid=\$PROG_PID_$p"
    while { kill -0 "$pid" 2> /dev/null || [ -d $KFD/proc/$pid ]; } && within 60 "$t0"; do sleep 0.05; done
  done
  ktime programs-exited
  prog_truths 1
  ca_each prog_teardown
  for p in $PROGS; do
    sed 's/^/thunk: /' /tmp/ng-$p.truth > /tmp/ng.txt
    dump programs-$p /tmp/p-$p.out /tmp/ng.txt
  done
  agents_stop
  ktime programs-done
}
# prog_live / prog_teardown: the current agent's (ca_use) checks while the
# programs hold their queues, and after they exited.
prog_live() {
  expect_both $G:live "$LIFECYCLE $SUBMISSION" "$LIFECYCLE $SUBMISSION"
  prog_experiment $G:experiment $G:experiment-7.2 $TIER
  prog_doorbells $G:doorbells
  ktime checked-$G
}
prog_teardown() {
  expect_both $G:teardown "$LIFECYCLE $SUBMISSION" "$LIFECYCLE $SUBMISSION"
  dump $G-metrics /tmp/m.prom
}
only programs && (programs_checks)

# ---- bench: what the agent's kernel hooks cost an ioctl --------------------------
# bench/kfd_hooks.sh (never a test run: a group that runs only when named).
# One driver with an AQL queue on the HWS GPU times 500 of each ioctl the
# hooks sit on (kfd_sim_driver's "timed"): set-CU-mask and update (each also
# unmaps and maps the runlist), and create + destroy. Per round, with no
# agent and then with each tier's agent alone (started, attached, stopped),
# so every configuration sees the same guest; one GPUQ-BENCH line each.
bench_hooks() {
  local round t op ns
  start_driver bd $CG_A 3
  drv bd create bq $G_HWS aql
  for round in 1 2 3; do
    for t in none btf-fentry btf-kprobe args-kprobe tracepoint; do
      if [ $t != none ]; then
        ATTACH_MIN=$(tier_attach_min $t)
        # shellcheck disable=SC2046
        start_agent bench-$t $(tier_flags $t)
        if [ -z "$AG_UP" ]; then
          echo "GPUQ-BENCH $K round=$round tier=$t error=not-attached"
          stop_agent
          continue
        fi
      fi
      for op in "cumask bq ffff0000" "update bq 100 7" "burst $G_HWS 1"; do
        drv bd timed 500 $op
        ns=$(grep '^DRV [0-9]* TIMED ' /tmp/bd.out | tail -n 1 |
          sed -n 's/.* \(ns_per_op=[0-9]* cpu_ns_per_op=[0-9]*\) bad=0$/\1/p')
        echo "GPUQ-BENCH $K round=$round tier=$t op=${op%% *} ${ns:-error=bad}"
      done
      [ $t != none ] && stop_agent
    done
  done
  exit_driver bd
}
named bench && (bench_hooks)

dump drivers /tmp/drivers.out
sim_check drivers-behaved drivers /tmp/drivers.out /tmp/drv-errors.txt
sed 's/^/truth: /' $TRUTH > /tmp/truth.txt
dump truth /tmp/truth.txt
finish

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
# The skips group forces skips on purpose (sim_check skips-scenario).
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
# verdicts COMMAND ARGS...: a check of sim_check (tests/kernel/sim/check),
# its verdicts on the console and in /tmp/verdicts.txt; false when one failed
# or it could not read its input (its error on the console), for the logs to
# dump.
verdicts() {
  local rc
  sim_check "$@" > /tmp/verdicts.txt
  rc=$?
  cat /tmp/verdicts.txt
  return $rc
}
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
# With CMP_CONTAINER set, that container's series alone.
: > /tmp/drv.past
compare_once() {
  {
    cat /tmp/static.in
    sed 's/^/BASE /' /tmp/base.truth
    sed 's/^/NOW /' $TRUTH /tmp/drv.truth /tmp/drv.past
    sed 's/^/MET /' "$2"
  } > /tmp/cmp.in
  sim_compare --fams "$1" --only "${CMP_CONTAINER:-}" /tmp/cmp.in > /tmp/cmp.out
  grep -q '^RESULT ok' /tmp/cmp.out
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

# dropped: the non-zero gpuq_events_dropped_total series of the last scrape.
dropped() {
  d=$(grep '^gpuq_events_dropped_total{' /tmp/m.prom | grep -v ' 0$' | sed 's/^gpuq_events_dropped_total//' | tr '\n' ' ')
  echo "${d:-none}"
}

# ---- one hook mode -------------------------------------------------------------
# run_mode NAME FLAGS...: the whole scenario with the daemon started with
# FLAGS (sim_check lifecycle, tests/kernel/sim/check/lifecycle.cc). MODE and
# TIER are the labels gpuq_probe_attached must carry for each of PROBES;
# TIER_GIVES lists the optional family groups this tier exports
# (docs/probe-tiers.md "What each tier gives"); SEEDED_EXACT=0: the tier
# cannot see the destroys and exits of what was seeded from sysfs.
MODE=fentry TIER=btf-fentry PROBES=$LIFECYCLE_PROBES TIER_GIVES="runlist eviction oversubscription" SEEDED_EXACT=1
run_mode() {
  local m=$1
  shift
  sim_check lifecycle "$m" mode=$MODE tier=$TIER probes="$PROBES" attach-min=$ATTACH_MIN \
    gives="$TIER_GIVES" seeded-exact=$SEEDED_EXACT cgroups="$CG_A $CG_B $CG_HOST" \
    gpus="$G_HWS $G_MES $G_NOHWS $G_MES12 $G_MES121" contexts=$HAS_CONTEXTS \
    xnack-chain=$HAS_XNACK_CHAIN series=$SERIES -- "$@"
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
# in container A) as truth lines of CGROUP (sim_check thunk-lines).
thunk_lines() { sim_check thunk-lines "$1" "${2:-$NG_TRUTH}" "$(stat -c %i "${3:-$CG_A}")"; }


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
# simulator's truth (its submit/pending lines from the thunk), then compares
# the same scrape with the thunk's truth (sim_check expect-both).
expect_both() {
  rm -f /tmp/cmpt.out
  converge "$2" && compare_thunk "$3"
  verdicts expect-both "$1" "$2" "$3" /tmp/cmp.out /tmp/cmpt.out /tmp/ng.lines "$(dropped)" && return
  if [ -e /tmp/cmpt.out ]; then
    dump "$1" /tmp/cmpt.out /tmp/ng.lines $NG_TRUTH /tmp/m.prom
  else
    sed 's/^/truth: /' $TRUTH > /tmp/truth.txt
    dump "$1" /tmp/cmp.out /tmp/truth.txt /tmp/ng.lines $NG_TRUTH /tmp/m.prom
  fi
}

# rocr_steps / hip_steps / rocblas_steps: the client's queues and packets,
# verdicts by every agent of the run after each step (the CP paused on the
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
  thunk_step_checks rocr "submit r1 30 nowait" "submit r2 12 barrier nowait" -- "drain r1" "drain r2"
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
  thunk_step_checks hip "launch h1 30" "launch h2 12" -- "wait h1" "wait h2"
}

# rocBLAS 6.4.4's sgemm on one stream of GPU 0 (its Tensile kernels loaded
# from the root's code objects for gfx90a; the null CP runs no kernel code).
rocblas_steps() {
  drv rocblas sgemm 256 20
  drv rocblas wait
  thunk_step_checks rocblas "sgemm 128 5" -- wait
}

# thunk_step_checks NAME PENDING-STEP... -- DRAIN-STEP...: after a client's
# steps, its queues, creates and submissions; then the PENDING steps (each a
# drv NAME command) with the null CP paused (their packets stay pending),
# and the DRAIN steps once it runs again.
thunk_step_checks() {
  local cc_client=$1 cc_paused=0 cc_subs="gpuq_submissions_total gpuq_queue_pending_packets" cc_step
  shift
  check_thunk queues "gpuq_queues gpuq_processes"
  check_thunk creates gpuq_queue_creates_total
  check_thunk submissions "$cc_subs"
  paused_cp pending && cc_paused=1
  while [ "$1" != -- ]; do
    [ $cc_paused = 1 ] && drv $cc_client $1
    shift
  done
  shift
  [ $cc_paused = 1 ] && check_thunk pending "$cc_subs"
  rm -f $NG_CTL/pause
  for cc_step; do drv $cc_client $cc_step; done
  check_thunk drained "$cc_subs"
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
# lp_checks P: with /tmp/ng.lines the thunk's truth, P:least-privilege
# once "leastpriv" counts container A's submissions and pending packets as the
# thunk says (or 30 s pass), P:no-ptrace once "noptrace" denies samples.
lp_checks() {
  local P=$1 t0 ok=0 caps denied
  caps=$(awk '/^CapEff:/ { print $2 }' /proc/$LP_PID_leastpriv/status 2> /dev/null)
  : > /tmp/lp.out
  t0=$(up)
  while within 30 "$t0"; do
    timeout 10 wget -q -O /tmp/lp.prom http://127.0.0.1:9481/metrics 2> /dev/null || { sleep 0.3; continue; }
    { cat /tmp/static.in; sed 's/^/NOW /' /tmp/ng.lines; sed 's/^/MET /' /tmp/lp.prom; } > /tmp/lp.in
    sim_compare --fams "gpuq_submissions_total gpuq_queue_pending_packets" /tmp/lp.in > /tmp/lp.out
    grep -q '^RESULT ok' /tmp/lp.out && break
    sleep 0.3
  done
  touch /tmp/lp.prom
  verdicts least-privilege $P:least-privilege "$caps" /tmp/lp.out /tmp/lp.prom ||
    dump $P-leastpriv /tmp/lp.out /tmp/agent-leastpriv.out
  t0=$(up)
  while within 30 "$t0"; do
    timeout 10 wget -q -O /tmp/lp.prom http://127.0.0.1:9482/metrics 2> /dev/null || { sleep 0.3; continue; }
    denied=$(awk '/^gpuq_queue_samples_total\{result="denied"\}/ { print $2 }' /tmp/lp.prom)
    [ "${denied:-0}" -gt 0 ] && ok=1 && break
    sleep 0.3
  done
  touch /tmp/lp.prom
  verdicts no-ptrace $P:no-ptrace $ok /tmp/lp.prom /tmp/agent-noptrace.out ||
    dump $P-noptrace /tmp/agent-noptrace.out /tmp/lp.prom
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
  local name=$1 lead="" a i pid runtime markers checks c
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
  ca_each client_start $name "$pid" "$runtime" > /tmp/start.out
  cat /tmp/start.out
  if [ -z "$pid" ]; then
    dump $lead /tmp/$name.out
    exec 8>&- # its stdin ends: it exits
    lp_stop
    return
  fi
  if grep -q '^GPUQ-KTEST [^ ]* [^ ]* FAIL' /tmp/start.out; then
    exit_driver $name
    run_past
    lp_stop
    return
  fi
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
# client_start NAME PID RUNTIME: the current agent's start check of the run
# (PID "": the client never said READY).
client_start() {
  local up db
  eval "up=\$CA_UP_$CA_I db=\$CA_DB_$CA_I"
  sim_check client-start $G $TIER "$up" "$db" $1 "${STACK:--}" "${2:--}" $THUNK_ONLY "$3" /proc/$2/maps \
    /tmp/$1.out /rocm
}

# client_teardown: after the client's exit (/tmp/ng.lines, /tmp/drv.truth
# its thunk's final truth), the current agent's families against both
# truths, container A's gauges at zero.
client_teardown() {
  expect_both $G:teardown "$LIFECYCLE $SUBMISSION" "$LIFECYCLE $SUBMISSION"
  sim_check client-teardown $G /tmp/m.prom $THUNK_ONLY
  dump $G-metrics /tmp/m.prom
}

# client_run_stops NAME: NAME's client did every command as expected and
# exited, and the current agent serves on for the next run.
client_run_stops() {
  local serves=yes
  scrape /tmp/alive.prom || serves=no
  sim_check client-stops $G $1 $serves /tmp/$1.out
}

# client_doorbells NAME RUNTIME: the current agent's doorbell figures for
# NAME's client against what it rang (its truth dumped: `drv NAME truth`),
# scraped until they pass or 30 s pass.
client_doorbells() {
  local t0
  t0=$(up)
  while scrape /tmp/m.prom
    sim_check client-doorbells $G $1 "$2" $THUNK_ONLY /tmp/m.prom $NG_TRUTH /tmp/$1.out \
      $KFD/topology/nodes > /tmp/db.out
    ! grep -q "^GPUQ-KTEST $K $G:doorbells PASS" /tmp/db.out && within 30 "$t0"; do sleep 0.3; done
  grep '^gpuq_doorbell\|^gpuq_probe_attached' /tmp/m.prom > /tmp/db.txt
  show_verdicts $G-doorbells /tmp/db.out /tmp/db.txt /tmp/$1.out
}
# show_verdicts GROUP OUT FILES...: sim_check's verdicts in OUT, FILES dumped
# under GROUP when one fails or there are none (its input error on stderr).
show_verdicts() {
  local group=$1 out=$2
  shift 2
  cat $out
  if [ ! -s $out ] || grep -q '^GPUQ-KTEST [^ ]* [^ ]* FAIL' $out; then dump $group "$@"; fi
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
# while it runs; then `report hwq-1=... hwq-8=...` compares the captures.
# sim_check max-hw-queues-live and -report check MHQ_CHECKS (check_lists.sh).
max_hw_queues() {
  local n id c rec t0 runs="" rrc
  if [ -f /lib/nullgpu/missing ] || [ -f /lib/nullgpu/hip-missing ]; then
    for c in $MHQ_CHECKS; do skip max-hw-queues:$c "$(cat /lib/nullgpu/missing /lib/nullgpu/hip-missing 2> /dev/null | head -n 1)"; done
    return
  fi
  PORT=$(tier_port btf-fentry) URL=http://127.0.0.1:$(tier_port btf-fentry)/metrics TIER=btf-fentry
  for n in 1 8; do
    id=$(echo "max-hw-queues $n" | sha256sum | cut -c1-64)
    c=$(echo $id | cut -c1-12)
    mkdir -p /sys/fs/cgroup/system.slice/docker-$id.scope /tmp/ngctl-mhq$n
    rm -f /tmp/mhq$n.* /tmp/ngctl-mhq$n/*
    /bin/gpuq-agent record --from "http://127.0.0.1:$PORT" --container $c -o /tmp/mhq$n.cap > /tmp/mhq$n.rec 2>&1 &
    rec=$!
    t0=$(up)
    while ! grep -q 'until Ctrl-C' /tmp/mhq$n.rec && kill -0 $rec 2> /dev/null && within 30 "$t0"; do sleep 0.1; done
    mkfifo /tmp/mhq$n.in
    exec 7<> /tmp/mhq$n.in
    ng_run /sys/fs/cgroup/system.slice/docker-$id.scope /tmp/ngctl-mhq$n /tmp/mhq$n.truth 1xgfx90a 1 GPU_MAX_HW_QUEUES=$n \
      GPUQ_HIP_CLIENT_HOLD=1 /bin/hip_client queues 8 < /tmp/mhq$n.in > /tmp/mhq$n.out 2>&1 7>&- &
    t0=$(up)
    while ! grep -q '^HOLD\|^BAD' /tmp/mhq$n.out 2> /dev/null && within 300 "$t0"; do sleep 0.2; done
    ng_dump /tmp/ngctl-mhq$n /tmp/mhq$n.truth
    # the truth while it holds its streams (it writes its own at exit)
    cp /tmp/mhq$n.truth /tmp/mhq$n.held 2> /dev/null || : > /tmp/mhq$n.held
    t0=$(up)
    while scrape /tmp/mhq$n.prom
      [ "$(sim_check max-hw-queues-live --wait /tmp/mhq $n:$c)" != agrees ] && within 30 "$t0"; do sleep 0.3; done
    kill -INT $rec
    t0=$(up)
    while kill -0 $rec 2> /dev/null && within 60 "$t0"; do sleep 0.1; done
    wait $rec
    runs="$runs $n:$c:$?"
    exec 7>&- # its stdin ends: it exits
  done
  # shellcheck disable=SC2086
  sim_check max-hw-queues-live /tmp/mhq $runs > /tmp/mhq-live.out
  show_verdicts max-hw-queues:live /tmp/mhq-live.out /tmp/mhq1.out /tmp/mhq8.out /tmp/mhq1.truth /tmp/mhq8.truth \
    /tmp/mhq1.held /tmp/mhq8.held /tmp/mhq1.rec /tmp/mhq8.rec
  timeout 120 /bin/gpuq-agent report hwq-1=/tmp/mhq1.cap hwq-8=/tmp/mhq8.cap > /tmp/mhq-report.txt 2> /tmp/mhq-report.err
  rrc=$?
  sim_check max-hw-queues-report /tmp/mhq-report.txt /tmp/mhq-report.err $rrc /tmp/mhq 1 8 > /tmp/mhq-report.out
  show_verdicts max-hw-queues:report /tmp/mhq-report.out /tmp/mhq-report.txt /tmp/mhq-report.err /tmp/mhq1.held /tmp/mhq8.held
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
# sim_check record-scenario (tests/kernel/sim/check/record_scenario.cc):
# `record --container <A> -- COMMAND`, and a bare `record` until SIGINT.
only record && sim_check record-scenario gpus="$G_HWS $G_MES" cgroups="$CG_A $CG_B" \
  containers="$(echo $ID_A | cut -c1-12) $(echo $ID_B | cut -c1-12)"

# ---- short-lived containers keep their names ----------------------------------
# sim_check short-lived-scenario (tests/kernel/sim/check/short_lived_scenario.cc):
# two Kubernetes Job containers, recorded through the daemon's API.
only short-lived && sim_check short-lived-scenario gpus="$G_HWS $G_MES"

# ---- partitioned GPUs: 8 MI300X in CPX mode, 64 KFD nodes ------------------------
# 8 MI300X in CPX mode (64 KFD nodes), then 4 in DPX mode (8 nodes): sim_check
# partitions-scenario (tests/kernel/sim/check/partitions_scenario.cc) says
# what runs and is checked (PART_CHECKS).
if only partitions; then
  for p in "partitions 8 64" "partitions-dpx 2 8"; do
    # shellcheck disable=SC2086
    sim_check partitions-scenario $p module=$SIM/amdgpu.ko sim-args="$SIM_ARGS" cgroups="$CG_A $CG_B"
  done
fi

# ---- skips: the one run that lets the kernel skip programs ---------------------
# sim_check skips-scenario (tests/kernel/sim/check/skips_scenario.cc): every
# other check runs where no program can be skipped (RUNTIME_SCHED above); this
# one makes the kernel skip them, as on a user's host.

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
    sim_check skips-scenario skips:forced gpu=$G_HWS cgroup=$CG_B
    echo 1 > /sys/kernel/debug/kprobes/enabled
  else
    fail kprobes-off "cannot disarm kprobes: $(cat /tmp/kp.txt)"
  fi
else
  fail nobtf-reload "rc=$rc btf=$(ls /sys/kernel/btf/amdgpu 2>&1) kfd=$(ls -l /dev/kfd 2>&1): $(tr '\n' ' ' < /tmp/nobtf.txt)"
fi
fi
ktime nobtf-done

# ---- programs: the users' workloads in containers, every probe tier ------------
# sim_check programs-scenario (tests/kernel/sim/check/programs_scenario.cc):
# real HIP programs (the users' latency/batch experiment on HIP 5.2.3 and
# 7.2.4, GPUQ_INFER=1 an inference run over 8 GPUs) under one agent per
# probe tier at once (PROG_TIERS, PROG_CHECKS: check_lists.sh).
only programs && sim_check programs-scenario module=$SIM/amdgpu.ko sim-args="$SIM_ARGS" \
  fifo="$([ -n "$CP_FIFO" ] && echo 1 || echo 0)" infer="${GPUQ_INFER:-0}" preempts="$PREEMPTS" \
  tiers="$PROG_TIERS" checks="$PROG_CHECKS" probes="$LIFECYCLE_PROBES" tp-probes="$TP_PROBE_NAMES"

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

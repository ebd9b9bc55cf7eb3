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
SIM=/lib/kfd-sim
TRUTH=/sys/kernel/debug/kfd_sim/truth
KFD=/sys/class/kfd/kfd
# The hooks every function tier must attach, and the tracepoint tier's
# (REQUIRED_PROBES, CONTEXT_PROBES, ARGS_CONTEXT_PROBES, TP_PROBE_NAMES):
# generated from the agent's hook table (tests/kernel/guest_hooks.cc).
. /etc/gpuq-hooks.sh
unset PROBES SCHED_PROBES TP_PROBES # the QEMU guest's "probe:function" pairs
LIFECYCLE_PROBES=$REQUIRED_PROBES

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
#  - the runtime clients (ROCr, HIP, rocBLAS: FIFO=1 has sim_check start
#    them SCHED_OTHER, tests/kernel/sim/check/null_gpu.h).
#    ROCr busy-waits for completions and expects a time-shared CPU: as FIFO
#    tasks of one priority on one vCPU its waiting threads starved the rest
#    of the guest. Their null CP thread runs FIFO (GPUQ_NULLGPU_CP_FIFO=1),
#    so it is never preempted inside a program and takes the CPU whenever it
#    wakes. A client's own threads can still preempt one another at ticks,
#    but the KFD calls come from one of them: no run has lost a record
#    there since the rest of the guest went FIFO, and its checks are exact
#    like every other (a lost one fails, naming the drops).
# The skips group forces skips on purpose (sim_check skips-scenario).
FIFO=0
SIM_ARGS=""
if [ -n "$PREEMPTS" ]; then
  if chrt -f -p 1 $$; then
    FIFO=1
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

: > /tmp/drv.past # earlier client runs' submissions (sim_check clients-scenario)

# ---- one hook mode -------------------------------------------------------------
# run_mode NAME FLAGS...: the whole scenario with the daemon started with
# FLAGS (sim_check lifecycle, tests/kernel/sim/check/lifecycle.cc). MODE and
# TIER are the labels gpuq_probe_attached must carry for each of PROBES;
# TIER_GIVES lists the optional family groups this tier exports
# (docs/probe-tiers.md "What each tier gives"); SEEDED_EXACT=0: the tier
# cannot see the destroys and exits of what was seeded from sysfs.
MODE=fentry TIER=btf-fentry PROBES=$LIFECYCLE_PROBES ATTACH_MIN=4 TIER_GIVES="runlist eviction oversubscription" SEEDED_EXACT=1
run_mode() {
  local m=$1
  shift
  sim_check lifecycle "$m" mode=$MODE tier=$TIER probes="$PROBES" attach-min=$ATTACH_MIN \
    gives="$TIER_GIVES" seeded-exact=$SEEDED_EXACT cgroups="$CG_A $CG_B $CG_HOST" \
    gpus="$G_HWS $G_MES $G_NOHWS $G_MES12 $G_MES121" contexts=$HAS_CONTEXTS \
    xnack-chain=$HAS_XNACK_CHAIN series=$SERIES -- "$@"
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

# ---- Debian's real ROCr, HIP and rocBLAS on the null GPU ------------------------
# sim_check clients-scenario (tests/kernel/sim/check/clients_scenario.cc):
# every runtime client run of this guest (Debian 12's ROCr and HIP 5.2.3,
# the ROCm 6.4 and 7.2 stacks, rocBLAS 6.4) in a container of its own under
# one agent per probe tier the guest checks (SUFFIX:TIER), each compared
# with the simulator's truth and with the null GPU's thunk (the checks:
# check_plan.cc).
client_runs() {
  sim_check clients-scenario tiers="$*" clients="$CLIENTS" fifo="$FIFO" \
    probes="$LIFECYCLE_PROBES" tp-probes="$TP_PROBE_NAMES"
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
# what runs and is checked.
if only partitions; then
  for p in "partitions 8 64" "partitions-dpx 2 8"; do
    # shellcheck disable=SC2086
    sim_check partitions-scenario $p module=$SIM/amdgpu.ko sim-args="$SIM_ARGS" cgroups="$CG_A $CG_B"
  done
fi

# ---- skips: the one run that lets the kernel skip programs ---------------------
# sim_check skips-scenario (tests/kernel/sim/check/skips_scenario.cc): every
# other check runs where no program can be skipped (FIFO above); this
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
# probe tier at once.
only programs && sim_check programs-scenario module=$SIM/amdgpu.ko sim-args="$SIM_ARGS" \
  fifo="$FIFO" infer="${GPUQ_INFER:-0}" preempts="$PREEMPTS" probes="$LIFECYCLE_PROBES" \
  tp-probes="$TP_PROBE_NAMES"

# ---- bench: what the agent's kernel hooks cost an ioctl --------------------------
# bench/kfd_hooks.sh (never a test run: a group that runs only when named):
# sim_check bench-hooks (tests/kernel/sim/check/bench_hooks.cc).
named bench && sim_check bench-hooks gpu="$G_HWS" cgroup="$CG_A"

dump drivers /tmp/drivers.out
sim_check drivers-behaved drivers /tmp/drivers.out /tmp/drv-errors.txt
sed 's/^/truth: /' $TRUTH > /tmp/truth.txt
dump truth /tmp/truth.txt
finish

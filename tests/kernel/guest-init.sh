#!/bin/busybox sh
# /init of the QEMU kernel tier's guest (tests/kernel/run_qemu_tier.sh builds
# the initramfs and boots it). Loads the real amdgpu.ko (no GPU: /dev/kfd and a
# CPU-only topology), then runs the real gpuq-agent's checks, record runs and
# daemons: sim_check qemu-guest (tests/kernel/sim/check/qemu_guest.cc) says
# what runs and is checked.
# Every result is one console line the host parses:
#   GPUQ-KTEST <kernel> <check> PASS|FAIL|SKIP <detail>
# Agent output goes to the log as "GPUQ-LOG <kernel> <group>| <line>", dmesg as
# "GPUQ-DMESG <kernel>| <line>", timings as "GPUQ-KTIME <kernel> <step> <uptime>".
# <kernel> comes from GPUQ_KERNEL on the kernel command line (init's env).
# shellcheck shell=dash
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
K=${GPUQ_KERNEL:-$(uname -r)}
# (sim_check prints its verdicts with it)
export GPUQ_KERNEL=$K
# GPUQ_SCOPE=attach (run_qemu_tier.sh, the series a default run does not check
# in full): the attach and verifier checks of every probe tier only, no
# record and no daemon runs (the compatibility table's fired-real cells).
SCOPE=${GPUQ_SCOPE:-full}
# The hooks to judge `check` and gpuq_probe_attached by, generated from the
# agent's hook table (tests/kernel/guest_hooks.cc; run_qemu_tier.sh puts it
# here): PROBES the lifecycle hooks, SCHED_PROBES the scheduler's (runlist,
# MES, eviction, attribution; entry + exit programs each), TP_PROBES the
# tracepoint tier's. "probe:function"; "probe:a|b": the function is a, or b
# on kernels that renamed it (the agent reports the one it attached to).
. /etc/gpuq-hooks.sh

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
mount -t debugfs nodev /sys/kernel/debug 2> /dev/null
mount -t cgroup2 none /sys/fs/cgroup
ip link set lo up
# On a kernel that preempts BPF programs (sched/preempt "full" or "lazy":
# Debian's from 6.16) every process of this guest runs SCHED_FIFO at one
# priority, inherited from init: a FIFO task is never preempted by an equal
# one, so none sits preempted inside a program while another enters it and
# the kernel skips no program (tests/kernel/sim/README.md, "Exact on a
# kernel that preempts programs"). no-drops then holds every drop reason,
# prog_skipped too, to 0. PREEMPT_MODEL: debugfs sched/preempt, "mode" the
# one in parentheses ("voluntary" on Debian's 6.1 and 6.12, "lazy" from 6.16).
PREEMPT_MODEL=$(cat /sys/kernel/debug/sched/preempt 2> /dev/null)
mode=$(echo "$PREEMPT_MODEL" | sed -n 's/.*(\([a-z]*\)).*/\1/p')
case $mode in
  full | lazy | rt) chrt -f -p 1 $$ || echo "GPUQ-LOG $K init| chrt -f -p 1 failed: programs may be skipped" ;;
esac

up() { cut -d' ' -f1 /proc/uptime; }
ktime() { echo "GPUQ-KTIME $K $1 $(up)"; }
result() { echo "GPUQ-KTEST $K $1 $2 $3"; }
pass() { result "$1" PASS "${2:-}"; }
fail() { result "$1" FAIL "${2:-}"; }
# dump GROUP FILE...: the files into the log, prefixed.
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

# ---- amdgpu without a GPU ---------------------------------------------------
modprobe amdgpu > /tmp/modprobe.txt 2>&1
rc=$?
ktime modprobe-done
nodes=$(ls /sys/class/kfd/kfd/topology/nodes 2> /dev/null | tr '\n' ' ')
if [ $rc = 0 ] && [ -c /dev/kfd ] && [ -n "$nodes" ] && [ -e /sys/kernel/btf/amdgpu ]; then
  pass modprobe-amdgpu "rc=0 /dev/kfd present, topology nodes: $nodes, /sys/kernel/btf/amdgpu present"
else
  fail modprobe-amdgpu "rc=$rc kfd=$(ls -l /dev/kfd 2>&1) nodes='$nodes' btf=$(ls /sys/kernel/btf/amdgpu 2>&1)"
  dump modprobe /tmp/modprobe.txt
  finish
fi

sim_check qemu-guest scope="$SCOPE" probes="$PROBES $SCHED_PROBES" sched-probes="$SCHED_PROBES" \
  tp-probes="$TP_PROBES" preempt-model="$PREEMPT_MODEL"
finish

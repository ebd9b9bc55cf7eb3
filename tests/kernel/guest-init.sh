#!/bin/busybox sh
# /init of the QEMU kernel tier's guest (tests/kernel/run_qemu_tier.sh builds
# the initramfs and boots it): mounts what the checks need, then
# `sim_check qemu-guest` (tests/kernel/sim/check/qemu_guest.cc) loads the
# real amdgpu.ko (no GPU: /dev/kfd and a CPU-only topology) and runs the
# real gpuq-agent's checks, record runs and daemons in every probe tier;
# `sim_check kernel-clean` ends the run.
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
echo # the firmware's last line has no newline
echo "GPUQ-KTIME $K userspace-up $(cut -d' ' -f1 /proc/uptime)"
echo "GPUQ-INFO $K uname $(uname -r)"

# GPUQ_SCOPE=attach (run_qemu_tier.sh, the series a default run does not
# check in full): the attach and verifier checks of every probe tier only,
# no record and no daemon runs (the compatibility table's fired-real cells).
sim_check qemu-guest scope="${GPUQ_SCOPE:-full}" probes="$PROBES $SCHED_PROBES" \
  sched-probes="$SCHED_PROBES" tp-probes="$TP_PROBES"
sim_check kernel-clean
sync
poweroff -f

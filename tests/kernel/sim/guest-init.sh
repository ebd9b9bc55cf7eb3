#!/bin/busybox sh
# /init of the KFD simulator tier's guest (tests/kernel/run_sim_tier.sh
# builds the initramfs and boots it): mounts what the checks need and the
# roots the host shares over 9p, then `sim_check sim-guest`
# (tests/kernel/sim/check/sim_guest.cc) loads the simulator (a module named
# amdgpu: tests/kernel/sim) and runs this guest's
# groups of checks, each a scenario that runs the real gpuq-agent against
# driver processes and Debian's real ROCm in docker-style containers and
# compares every metric family it exports with the simulator's ground truth
# (where the kernel preempts BPF programs, every process it starts runs
# SCHED_FIFO: sim/check/guest_schedule.h); `sim_check kernel-clean` ends
# the run.
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
# The hooks every function tier must attach, and the tracepoint tier's
# (REQUIRED_PROBES, CONTEXT_PROBES, ARGS_CONTEXT_PROBES, TP_PROBE_NAMES):
# generated from the agent's hook table (tests/kernel/guest_hooks.cc).
. /etc/gpuq-hooks.sh

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t debugfs nodev /sys/kernel/debug 2> /dev/null
mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
mount -t cgroup2 none /sys/fs/cgroup
ip link set lo up

echo # the firmware's last line has no newline
echo "GPUQ-KTIME $K userspace-up $(cut -d' ' -f1 /proc/uptime)"
echo "GPUQ-INFO $K uname $(uname -r)"

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

# GPUQ_SCOPE: the groups of this guest (run_sim_tier.sh splits a kernel's
# checks over guests side by side: btf, nobtf, programs; unset: all);
# GPUQ_ONLY (GPUQ_KTEST_ONLY on the host): only the groups named;
# GPUQ_CLIENTS: the runtime client groups; GPUQ_INFER=1: the inference
# program too. The hooks from /etc/gpuq-hooks.sh.
sim_check sim-guest scope="${GPUQ_SCOPE:-}" only="${GPUQ_ONLY:-}" clients="${GPUQ_CLIENTS:-}" \
  infer="${GPUQ_INFER:-0}" probes="$REQUIRED_PROBES" context-probes="$CONTEXT_PROBES" \
  args-context-probes="$ARGS_CONTEXT_PROBES" tp-probes="$TP_PROBE_NAMES"
sim_check kernel-clean
sync
poweroff -f

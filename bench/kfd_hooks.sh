#!/usr/bin/env bash
# What the agent's kernel hooks cost the ioctls they sit on, per probe tier:
# set-CU-mask and update (the hooks issue 23 added; each also unmaps and
# maps the simulated runlist, so the runlist hooks run too) and a queue's
# create + destroy (the lifecycle and runlist hooks). Kernel hooks attach
# only in QEMU guests here, so this boots the simulator tier's guest
# (tests/kernel/run_sim_tier.sh) with its `bench` group alone: per round, one
# driver process times 500 of each ioctl with no agent, then with each
# tier's agent alone (sim_check bench-hooks,
# tests/kernel/sim/check/bench_hooks.cc). Prints the medians of three rounds
# and each tier's ratio to no agent.
#
# TCG emulates every instruction, so the absolute times mean little; the
# ratios, measured side by side in one guest, are the figures to read.
# Root, and what the simulator tier needs (it installs it with apt-get).
# Usage: bench/kfd_hooks.sh BUILD_DIR [KERNEL...]   (default kernel: 7.3)
set -u
BUILD=$(cd "$1" && pwd)
shift
KERNELS=${*:-7.3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/gpuq-kfdhooks.XXXXXX)
echo "== kernel hook cost in the simulator guest ($KERNELS), logs in $WORK"
# The tier's own verdict is not ours: every check but the bench group
# reports "no result" and fails. The lines below are what counts.
GPUQ_KTEST_WORKDIR=$WORK GPUQ_KTEST_ONLY=bench GPUQ_KTEST_KERNELS=$KERNELS \
  "$SRC/tests/kernel/run_sim_tier.sh" "$BUILD/gpuq-agent" "$SRC" > "$WORK/tier.log" 2>&1
lines=$(cat "$WORK"/boot-*.log 2> /dev/null | grep -a '^GPUQ-BENCH ')
if [ -z "$lines" ]; then
  echo "no GPUQ-BENCH line from the guest: see $WORK/tier.log" >&2
  exit 1
fi
if grep -q 'error=' <<< "$lines"; then
  echo "some measurements failed:" >&2
  grep 'error' <<< "$lines" >&2
fi
awk '
  {
    delete f
    for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    k = $2; key = k SUBSEP f["tier"] SUBSEP f["op"]
    if (f["ns_per_op"] ~ /^[0-9]+$/) { wall[key] = wall[key] " " f["ns_per_op"]; cpu[key] = cpu[key] " " f["cpu_ns_per_op"] }
    kernels[k]
  }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : ""
  }
  function cell(v, k, t, o,   m, b) {
    m = median(v[k, t, o]); b = median(v[k, "none", o])
    if (m == "" || b == "") return sprintf("%18s", "-")
    return sprintf("%9.1f us %5.2fx", m / 1000, m / b)
  }
  END {
    split("none btf-fentry btf-kprobe args-kprobe tracepoint", order, " ")
    split("cumask update burst", opo, " ")
    name["cumask"] = "set-CU-mask"; name["update"] = "update"; name["burst"] = "create+destroy"
    for (k in kernels) {
      printf "kernel %s: per ioctl, median of the rounds, and the ratio to no agent.\n", k
      printf "elapsed: the agent shares the one vCPU; CPU: the calling thread alone (the hooks)\n"
      printf "  %-15s %-12s %18s %18s\n", "ioctl", "tier", "elapsed", "CPU"
      for (o = 1; o <= 3; o++)
        for (t = 1; t <= 5; t++)
          printf "  %-15s %-12s %s %s\n", name[opo[o]], order[t], cell(wall, k, order[t], opo[o]), cell(cpu, k, order[t], opo[o])
    }
  }' <<< "$lines"

#!/usr/bin/env bash
# Every test tier: install, build, then ctest by tier. Tiers that need what
# this machine lacks skip those checks with a message naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/build.sh
ROOT=$(pwd)
cd "${GPUQ_BUILD_DIR:-build}"
# unit (1), replay goldens and CLI (2), host BPF (3), /metrics e2e (6),
# lint (clang-format), the QEMU tier on Debian 6.1/6.12 kernels (5), and
# deployment: image, compose, Prometheus on every dashboard query (6),
# the HTML report in headless chromium (browser), Debian's real ROCr and
# HIP on the null GPU of tests/nullgpu (rocm), and the unit and replay
# tiers again under ASan+UBSan (sanitize) with a short run of every libFuzzer
# harness (fuzz), both from a clang build in build/asan (docs/fuzzing.md).
# Every process a test starts inherits GPUQ_TEST_RUN: whatever still
# carries it after ctest was left behind, and fails the run.
GPUQ_TEST_RUN=$(cat /proc/sys/kernel/random/uuid)
export GPUQ_TEST_RUN
status=0
failed=$(mktemp)
KLOGS=$(mktemp -d)
# The gate: no kernel tier's guest boots while this file names a live
# process (tests/kernel/guest_slot.sh). It is held while the host tiers run,
# so the kernel tiers prepare (kernel lists, downloads, module and initramfs
# builds: minutes of mostly one core, at nice 10) beside them, and their
# guests boot once those are done.
GPUQ_GUEST_GATE=$(mktemp /tmp/gpuq-guest-gate.XXXXXX)
echo $$ > "$GPUQ_GUEST_GATE"
KPIDS=() KNAMES=() KDIRS=()
cleanup() {
  rm -f "$GPUQ_GUEST_GATE"
  local p
  for p in "${KPIDS[@]}"; do kill -- "-$p" 2> /dev/null || true; done
  rm -rf "$failed" "$KLOGS"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# failed_checks DIR: the failed checks of the TAP-speaking tiers in DIR's
# last ctest log, kept for the end. A long log is cut in the middle where it
# is shown (CI): shown again last, the failure is in sight.
# tests/lib/assert.sh prints a failed check as "FAIL - what" and its
# details indented below it.
failed_checks() {
  if [ -f "$1/Testing/Temporary/LastTest.log" ]; then
    grep -a -A4 '^FAIL - ' "$1/Testing/Temporary/LastTest.log" | cut -c1-400 | head -n 60 |
      sed 's/^/failed check: /' >> "$failed" || true
  fi
}
# run_tier ARGS...: one ctest over the tiers ARGS select; a failure is kept
# for the end.
run_tier() {
  ctest --output-on-failure --timeout 600 "$@" && return 0
  status=1
  failed_checks .
}
# kernel_tier NAME DIR: that kernel tier's ctest in the background, in a
# process group of its own (stopped at exit), run in the build directory
# DIR that registers it (its own Testing/ logs: two ctests at once in one
# directory write the same files), output to KLOGS/NAME.
kernel_tier() {
  GPUQ_GUEST_GATE=$GPUQ_GUEST_GATE setsid bash -c 'cd "$1" && exec ctest --output-on-failure --timeout 600 -R "^$2\$"' \
    kernel_tier "$2" "$1" > "$KLOGS/$1" 2>&1 &
  KPIDS+=("$!")
  KNAMES+=("$1")
  KDIRS+=("$2")
}
# The two kernel tiers, behind the gate: each runs its QEMU guests through
# tests/kernel/guest_slot.sh, which shares the cores between the two.
kernel_tier kernel_qemu tests/kernel
kernel_tier kernel_sim tests/kernel/sim
# Every tier but the kernel ones, as many tests at a time as there are cores:
# most wait on processes, servers and containers more than they compute.
# Measured on 2 cores: docs/test-suite-time.md.
run_tier -j"$(nproc)" -L 'unit|replay|bpf|e2e|lint|deploy|browser|rocm|sanitize|fuzz' -LE kernel
rm -f "$GPUQ_GUEST_GATE"
for i in "${!KPIDS[@]}"; do
  wait "${KPIDS[$i]}" || {
    status=1
    failed_checks "${KDIRS[$i]}"
  }
  cat "$KLOGS/${KNAMES[$i]}"
done
KPIDS=()
cat "$failed"
"$ROOT/tests/lib/survivors.sh" "$GPUQ_TEST_RUN" || status=1
exit "$status"

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
trap 'rm -f "$failed"' EXIT
# run_tier ARGS...: one ctest over the tiers ARGS select; a failure is kept
# for the end.
run_tier() {
  ctest --output-on-failure --timeout 600 "$@" && return 0
  status=1
  # A long log is cut in the middle where it is shown (CI): the failed
  # checks of the TAP-speaking tiers again, last, so the failure is in sight.
  # tests/lib/assert.sh prints a failed check as "FAIL - what" and its
  # details indented below it.
  if [ -f Testing/Temporary/LastTest.log ]; then
    grep -a -A4 '^FAIL - ' Testing/Temporary/LastTest.log | cut -c1-400 | head -n 60 |
      sed 's/^/failed check: /' >> "$failed" || true
  fi
}
# Every tier but the kernel ones, as many tests at a time as there are cores:
# most wait on processes, servers and containers more than they compute
# (one more than cores filled the idle minutes at their end, but the tests
# then took more CPU time than that gave), and the kernel tiers' preparation
# (prepare: kernels, modules, initramfs). Then the two kernel tiers side by
# side, their QEMU guests sharing the cores (tests/kernel/guest_slot.sh)
# from the start. Measured on 2 cores: docs/test-suite-time.md.
run_tier -j"$(nproc)" -L 'unit|replay|bpf|e2e|lint|deploy|browser|rocm|sanitize|fuzz|prepare' -LE kernel
run_tier -j2 -L kernel
cat "$failed"
"$ROOT/tests/lib/survivors.sh" "$GPUQ_TEST_RUN" || status=1
exit "$status"

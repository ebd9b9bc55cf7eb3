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
# lint (clang-format), and
# deployment: image, compose, Prometheus on every dashboard query (6),
# the HTML report in headless chromium (browser), Debian's real ROCr and
# HIP on the null GPU of tests/nullgpu (rocm), and the unit and replay
# tiers again under ASan+UBSan (sanitize) with a short run of every libFuzzer
# harness (fuzz), both from a clang build in build/asan (docs/fuzzing.md);
# then the kernel tiers (QEMU: Debian's kernels with the real amdgpu.ko, and
# the KFD simulator's), side by side.
# Every process a test starts inherits GPUQ_TEST_RUN: whatever still
# carries it after ctest was left behind, and fails the run.
GPUQ_TEST_RUN=$(cat /proc/sys/kernel/random/uuid)
export GPUQ_TEST_RUN
status=0
ctest --output-on-failure --timeout 600 -L 'unit|replay|bpf|e2e|lint|deploy|browser|rocm|sanitize|fuzz' || status=$?
logs=()
if [ -f Testing/Temporary/LastTest.log ]; then
  cp Testing/Temporary/LastTest.log Testing/Temporary/LastTest-other-tiers.log
  logs+=(Testing/Temporary/LastTest-other-tiers.log)
fi
# The two kernel tiers side by side: their guests share the cores
# (tests/kernel/guest_slot.sh), so neither leaves a core idle while its last
# guest runs (the simulator's 7.3 guest runs about 5 minutes past its 6.1
# guest; one after the other the tiers took 33 minutes on 2026-11-27).
ctest --output-on-failure -j2 -L kernel || status=$?
[ -f Testing/Temporary/LastTest.log ] && logs+=(Testing/Temporary/LastTest.log)
# A long log is cut in the middle where it is shown (CI): the failed
# checks of the TAP-speaking tiers again, last, so the failure is in sight.
if [ "$status" != 0 ] && [ ${#logs[@]} -gt 0 ]; then
  # tests/lib/assert.sh prints a failed check as "FAIL - what" and its
  # details indented below it.
  grep -a -h -A4 '^FAIL - ' "${logs[@]}" | cut -c1-400 | head -n 60 |
    sed 's/^/failed check: /' || true
fi
"$ROOT/tests/lib/survivors.sh" "$GPUQ_TEST_RUN" || status=1
exit "$status"

#!/usr/bin/env bash
# Every test tier: install, build, then ctest by tier. Tiers that need what
# this machine lacks skip those checks with a message naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/build.sh
cd "${GPUQ_BUILD_DIR:-build}"
# unit (1), replay goldens and CLI (2), host BPF (3), /metrics e2e (6),
# lint (clang-format), the QEMU tier on Debian 6.1/6.12 kernels (5), and
# deployment: image, compose, Prometheus on every dashboard query (6),
# and the HTML report in headless chromium (browser).
ctest --output-on-failure --timeout 600 -L 'unit|replay|bpf|e2e|lint|kernel|deploy|browser'

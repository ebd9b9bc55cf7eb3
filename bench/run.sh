#!/bin/sh
# Builds the benchmarks if needed and runs them. Prints to stdout only: copy
# the numbers into bench/README.md by hand, with the machine and the date.
# Not run here: bench/kfd_hooks.sh (the kernel hooks' cost, in a QEMU guest
# of the simulator tier: minutes, and the tier's packages).
# BUILD_DIR overrides the build directory (default: build/ at the top).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

# A new build directory is made as scripts/build.sh makes one (its generator).
if [ ! -f "$build/CMakeCache.txt" ]; then
  GPUQ_BUILD_DIR=$build "$root/scripts/build.sh" >/dev/null
fi
cmake --build "$build" -j"$(nproc)" \
  --target gpuq-bench-pipeline gpuq-bench-scale gpuq-bench-doorbell \
  gpuq-bench-sampler gpuq-bench-tracepoint gpuq-bench-rescan >/dev/null

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
  "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
  "kernel $(uname -r), commit $(git -C "$root" rev-parse --short=12 HEAD)"
echo "== gpuq-bench-pipeline"
"$build/bench/gpuq-bench-pipeline"
echo
echo "== gpuq-bench-scale"
"$build/bench/gpuq-bench-scale"
echo
echo "== gpuq-bench-doorbell (root: uprobes)"
"$build/bench/gpuq-bench-doorbell"
if [ -x "$build/bench/gpuq-bench-doorbell-rocr" ] && [ -f "$build/tests/nullgpu/lib/libhsakmt.so.1" ]; then
  echo
  echo "== gpuq-bench-doorbell-rocr (Debian's ROCr 5.2.3 on the null GPU; root: uprobes)"
  LD_LIBRARY_PATH="$build/tests/nullgpu/lib" "$build/bench/gpuq-bench-doorbell-rocr"
fi
echo
echo "== gpuq-bench-sampler (reads its children's memory: root, or ptrace_scope <= 1)"
"$build/bench/gpuq-bench-sampler"
echo
echo "== gpuq-bench-rescan (root: the doorbell BPF object)"
"$build/bench/gpuq-bench-rescan"
echo
echo "== report_bench.sh (report against --once --replay on the scale captures)"
"$root/bench/report_bench.sh" "$build"
echo
echo "== gpuq-bench-tracepoint (root: raw tracepoints)"
"$build/bench/gpuq-bench-tracepoint"

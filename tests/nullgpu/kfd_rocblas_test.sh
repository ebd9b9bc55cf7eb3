#!/usr/bin/env bash
# Debian's rocBLAS 6.4.4 (sid, built for HIP 6.4.3) on the null GPU at the
# KFD interface (kfd_nullgpu.c), in the rocBLAS flavour of the 6.4 root of
# rocm_stacks.sh (`rocm_root 6.4 rocblas`: ROCr, HIP, hipcc and
# librocblas-dev; chrooted in a private mount namespace with /proc, /sys and
# /dev, as a container with its own ROCm). rocblas_client.cc is compiled in
# the root with its hipcc and linked to its librocblas, then, under
# gpuq-agent --doorbells=uprobe --hsa-runtime <the root's ROCr>:
#   - `rocblas_client 256 20`: 20 rocblas_sgemm calls of 256 x 256 matrices
#     on one stream, every status success, exit 0; the null CP consumed at
#     least 20 kernel dispatches on the client's queues, none pending
#     (rocBLAS's Tensile kernels load from the root's code objects; the null
#     CP runs no kernel code, so the product is not checked);
#   - gpuq_doorbell_packets_total by type = the null CP's truth on the
#     client's queues, and the agent exits 0.
# The rocBLAS root is about 2.4 GB (librocblas's kernels for every GPU
# target); built once into the cache like the others.
# Usage: kfd_rocblas_test.sh SRC AGENT KFDNULL_LIB
set -u
SRC=$1 AGENT=$2 LIB=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/doorbell_agent.sh"
use_background_cleanup
. "$SRC/tests/nullgpu/rocm_stacks.sh" # rocm_root, IN_ROOT
. "$SRC/tests/nullgpu/nullgpu_env.sh" # kfdnull_require, sum, truth_packets, truth_of
kfdnull_require "rocBLAS" "$LIB"
t0=$(date +%s)
if ! rocm_root 6.4 rocblas; then
  skip "rocBLAS 6.4: $ROCM_WHY"
  summary
  exit 77
fi
R=$ROCM_ROOT
pass "rocBLAS: Debian's librocblas-dev $ROCM_ROCBLAS_VERSION with HIP $ROCM_HIP_VERSION and ROCr $ROCM_VERSION in $R ($(($(date +%s) - t0)) s to get it)"
kfdnull_workdir "$R" kfdblas "$LIB" "$SRC/tests/nullgpu/rocblas_client.cc"
if ! root_hipcc "$R" rocblas_client "$TMP/hipcc.log" "$D/rocblas_client.cc" -lrocblas; then
  fail "rocblas_client does not build with the root's hipcc and librocblas" "$(head -20 "$TMP/hipcc.log")"
  summary
  exit 1
fi
pass "rocblas_client built in the root with its hipcc, linked to its librocblas"

if [ ! -x "$AGENT" ]; then
  skip "gpuq-agent not built (no doorbell check)"
  agent=0
else
  start_doorbell_agent "$(readlink -f "$R/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")" \
    "by symbol to ROCr $ROCM_VERSION (rocBLAS root)"
  agent=1
fi
run_group "${IN_ROOT[@]}" "$R" env "LD_PRELOAD=$D/libgpuq_kfdnull.so" "HOME=$D" GPUQ_NULLGPU_TRUTH="$D/blas.%p" \
  "$D/rocblas_client" 256 20 > "$TMP/blas.out" 2>&1
t=$(truth_of "$R$D" blas)
if [ "$RUN_RC" = 0 ] && grep -q '^rocblas_client sgemm N=256 calls=20 ok$' "$TMP/blas.out" && [ -n "$t" ]; then
  cp "$t" "$TMP/blas.truth"
  t=$TMP/blas.truth
  d=$(sum "$t" owner=client dispatches)
  [ "$d" -ge 20 ] && [ "$(sum "$t" owner=client pending)" = 0 ] &&
    pass "rocblas_client 256 20: 20 rocblas_sgemm, exit 0; the null CP consumed $d kernel dispatches + $(sum "$t" owner=client barriers) barriers on the client's queues, none pending" ||
    fail "rocblas_client: $d kernel dispatches (want >= 20), $(sum "$t" owner=client pending) pending" "$(cat "$t")"
else
  fail "rocblas_client 256 20: exit $RUN_RC" "$(tail -20 "$TMP/blas.out")"
  t=""
fi
if [ "$agent" = 1 ] && [ -n "$t" ]; then
  check_doorbell_packets "rocBLAS" "$t"
fi
if [ "$agent" = 1 ]; then
  stop_bg "$AGENT_PID"
  [ "$STOP_RC" = 0 ] && pass "the agent exits 0 on SIGTERM" || fail "the agent exited $STOP_RC" "$(cat "$TMP/agent.log")"
fi
summary

// A real rocBLAS client for the null-GPU tests at the KFD interface,
// compiled in the rocBLAS flavour of a ROCm root (tests/nullgpu/
// rocm_stacks.sh) with that root's hipcc and linked to its librocblas: what a
// user's container runs for a GEMM. The null command processor runs no kernel
// code, so the product is not checked; every call's status is, and the
// client prints one summary line "rocblas_client sgemm N=... calls=... ok"
// or an error and exits 1.
//
//   rocblas_client N CALLS   CALLS rocblas_sgemm of N x N matrices on
//                            device 0, one stream, then a stream sync
//
// rocBLAS's own rocblas-bench is not used: it dies in ROCm-SMI's init, which
// wants the amdgpu sysfs the null GPU does not have.
#include <hip/hip_runtime.h>
#include <rocblas/rocblas.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

bool Hip(hipError_t e, const char* what) {
  if (e == hipSuccess) return true;
  std::fprintf(stderr, "rocblas_client: %s: %s\n", what, hipGetErrorString(e));
  return false;
}

bool Blas(rocblas_status s, const char* what) {
  if (s == rocblas_status_success) return true;
  std::fprintf(stderr, "rocblas_client: %s: %s\n", what,
               rocblas_status_to_string(s));
  return false;
}

int Run(int n, int calls) {
  const size_t bytes = static_cast<size_t>(n) * n * sizeof(float);
  std::vector<float> host(static_cast<size_t>(n) * n, 1.0f);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  if (!Hip(hipMalloc(&a, bytes), "hipMalloc A") ||
      !Hip(hipMalloc(&b, bytes), "hipMalloc B") ||
      !Hip(hipMalloc(&c, bytes), "hipMalloc C") ||
      !Hip(hipMemcpy(a, host.data(), bytes, hipMemcpyHostToDevice), "copy A") ||
      !Hip(hipMemcpy(b, host.data(), bytes, hipMemcpyHostToDevice), "copy B"))
    return 1;
  hipStream_t stream;
  rocblas_handle handle;
  if (!Hip(hipStreamCreate(&stream), "hipStreamCreate") ||
      !Blas(rocblas_create_handle(&handle), "rocblas_create_handle") ||
      !Blas(rocblas_set_stream(handle, stream), "rocblas_set_stream"))
    return 1;
  const float alpha = 1.0f, beta = 0.0f;
  for (int i = 0; i < calls; i++) {
    if (!Blas(rocblas_sgemm(handle, rocblas_operation_none,
                            rocblas_operation_none, n, n, n, &alpha, a, n, b, n,
                            &beta, c, n),
              "rocblas_sgemm"))
      return 1;
  }
  if (!Hip(hipStreamSynchronize(stream), "hipStreamSynchronize") ||
      !Blas(rocblas_destroy_handle(handle), "rocblas_destroy_handle") ||
      !Hip(hipStreamDestroy(stream), "hipStreamDestroy") ||
      !Hip(hipFree(a), "hipFree A") || !Hip(hipFree(b), "hipFree B") ||
      !Hip(hipFree(c), "hipFree C"))
    return 1;
  std::printf("rocblas_client sgemm N=%d calls=%d ok\n", n, calls);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::atoi(argv[1]) < 1 || std::atoi(argv[2]) < 1) {
    std::fprintf(stderr, "usage: rocblas_client N CALLS\n");
    return 2;
  }
  return Run(std::atoi(argv[1]), std::atoi(argv[2]));
}

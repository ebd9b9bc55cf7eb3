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
//   rocblas_client serve     commands on stdin, for a test that checks
//                            between steps (the QEMU simulator tier); one
//                            handle on one stream of device 0:
//                              sgemm N CALLS  CALLS rocblas_sgemm of N x N
//                                             (N <= 1024), no sync
//                              wait           hipStreamSynchronize
//                              truth          "BLAS gpu=0 sgemm=CALLS"
//                              sync TAG       prints "SYNC TAG"
//                              exit           exits with every stream and
//                                             queue alive
//                            prints "READY PID gpus=N" once the handle is
//                            made and "BAD ..." for a failed call
//
// rocBLAS's own rocblas-bench is not used: it dies in ROCm-SMI's init, which
// wants the amdgpu sysfs the null GPU does not have.
#include <hip/hip_runtime.h>
#include <rocblas/rocblas.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
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

int Serve() {
  constexpr int kMax = 1024;
  const size_t bytes = static_cast<size_t>(kMax) * kMax * sizeof(float);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  hipStream_t stream;
  rocblas_handle handle;
  int gpus = 0;
  if (!Hip(hipGetDeviceCount(&gpus), "hipGetDeviceCount") ||
      !Hip(hipMalloc(&a, bytes), "hipMalloc A") ||
      !Hip(hipMalloc(&b, bytes), "hipMalloc B") ||
      !Hip(hipMalloc(&c, bytes), "hipMalloc C") ||
      !Hip(hipStreamCreate(&stream), "hipStreamCreate") ||
      !Blas(rocblas_create_handle(&handle), "rocblas_create_handle") ||
      !Blas(rocblas_set_stream(handle, stream), "rocblas_set_stream")) {
    std::printf("BAD setup\n");
    return 1;
  }
  std::printf("READY %d gpus=%d\n", static_cast<int>(getpid()), gpus);
  std::fflush(stdout);
  const float alpha = 1.0f, beta = 0.0f;
  long sgemms = 0;
  char line[256];
  while (std::fgets(line, sizeof(line), stdin)) {
    char cmd[32] = "", arg[64] = "";
    int calls = 0;
    if (std::sscanf(line, "%31s %63s %d", cmd, arg, &calls) < 1) continue;
    const std::string op = cmd;
    if (op == "sgemm") {
      const int n = std::atoi(arg);
      if (n < 1 || n > kMax || calls < 1) {
        std::printf("BAD sgemm %s %d: N 1-%d, CALLS >= 1\n", arg, calls, kMax);
        continue;
      }
      for (int i = 0; i < calls; i++)
        if (!Blas(rocblas_sgemm(handle, rocblas_operation_none,
                                rocblas_operation_none, n, n, n, &alpha, a, n,
                                b, n, &beta, c, n),
                  "rocblas_sgemm")) {
          std::printf("BAD rocblas_sgemm\n");
          break;
        } else {
          sgemms++;
        }
    } else if (op == "truth") {
      std::printf("BLAS gpu=0 sgemm=%ld\n", sgemms);
    } else if (op == "wait") {
      if (!Hip(hipStreamSynchronize(stream), "hipStreamSynchronize"))
        std::printf("BAD hipStreamSynchronize\n");
    } else if (op == "sync") {
      std::printf("SYNC %s\n", arg);
    } else if (op == "exit") {
      std::printf("EXIT\n");
      std::fflush(stdout);
      // Without rocblas_destroy_handle or HIP's teardown: the queues die
      // with the process, as when a job is killed.
      _exit(0);
    } else {
      std::printf("BAD unknown command %s\n", cmd);
    }
    std::fflush(stdout);
  }
  std::printf("EXIT stdin closed\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "serve") return Serve();
  if (argc != 3 || std::atoi(argv[1]) < 1 || std::atoi(argv[2]) < 1) {
    std::fprintf(stderr, "usage: rocblas_client N CALLS\n");
    return 2;
  }
  return Run(std::atoi(argv[1]), std::atoi(argv[2]));
}

// A real HIP client for the null-GPU tests, compiled with Debian's hipcc
// (--offload-arch=gfx90a). Each mode is a workload shape users run; every
// mode checks what it can check without a GPU (the null command processor
// runs no kernel code, so only copies are verified) and prints one summary
// line "hip_client MODE ... ok" or an error and exit 1.
//
//   infer GPUS STREAMS ITERS   inference-like: STREAMS streams on each of GPUS
//                              GPUs, per iteration H2D copy, 3 kernels, D2H
//                              copy, an event; the copied data is checked
//   latency GPU HZ MS [high]   latency-sensitive: one kernel + stream sync
//                              at HZ for MS milliseconds on device GPU;
//                              with `high` on a stream of the greatest
//                              priority (KFD queue priority 15 under ROCr
//                              5.2.3, 11 under 6.4/7.2), kept to the end
//   batch GPU MS [CU_MASK]     batch: 64 kernels then a sync, for MS ms;
//                              with CU_MASK (hex, e.g. 0x0000ffff: CUs
//                              0-15) on a stream fenced to those CUs
//                              (hipExtStreamCreateWithCUMask: ROCr's
//                              AMDKFD_IOC_SET_CU_MASK), kept to the end
//   rings STREAMS N            N launches on each of STREAMS streams of
//                              device 0, one stream sync after each
//   queues STREAMS             STREAMS streams on every device, one kernel
//                              each, a device sync, one copy each way
//                              (HW queue counting)
//   graph NODES LAUNCHES EAGER on device 0, one stream: EAGER launches and
//                              a sync, then a graph of NODES kernels
//                              (stream capture) launched LAUNCHES times,
//                              a sync; prints the launches (hipGraph)
//   (infer, latency and batch hold before exiting under
//    GPUQ_HIP_CLIENT_HOLD=1: see Held)
//   serve                      commands on stdin, for a test that checks
//                              between steps (the QEMU simulator tier):
//                                stream NAME GPU    hipStreamCreate on GPU
//                                launch NAME N      N kernels, no sync
//                                copy NAME          H2D + D2H, async
//                                graph NAME N L     a graph of N kernels
//                                                   (stream capture)
//                                                   launched L times,
//                                                   a stream sync (HIP 7
//                                                   submits a graph in
//                                                   batches)
//                                wait NAME          hipStreamSynchronize
//                                truth              "STREAM NAME gpu=G
//                                                   launches=N copies=N"
//                                sync TAG           prints "SYNC TAG"
//                                exit               exits with every stream
//                                                   and queue alive
//                              prints "READY PID gpus=N" after hipInit and
//                              "BAD ..." for a failed call
#include <hip/hip_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void Scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

bool Check(hipError_t e, const char* what) {
  if (e == hipSuccess) return true;
  std::fprintf(stderr, "hip_client: %s: %s\n", what, hipGetErrorString(e));
  return false;
}

#define CHECK(x)                   \
  do {                             \
    if (!Check((x), #x)) return 1; \
  } while (0)

constexpr int kElems = 4096;

// A graph of `nodes` Scale kernels captured on `s`, launched `launches`
// times, then, once the stream has run them (HIP may free what the launches
// use before), destroyed. The first failed call's status, with its name in
// *what; the launches made in *launched.
hipError_t RunGraph(hipStream_t s, float* buf, int nodes, int launches,
                    const char** what, int* launched) {
  *launched = 0;
  hipError_t e = hipSuccess;
  const auto failed = [&](hipError_t status, const char* call) {
    e = status;
    *what = call;
    return e != hipSuccess;
  };
  hipGraph_t graph = nullptr;
  hipGraphExec_t exec = nullptr;
  if (failed(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal),
             "hipStreamBeginCapture"))
    return e;
  for (int i = 0; i < nodes; i++)
    hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s, buf, buf,
                       kElems);
  if (failed(hipStreamEndCapture(s, &graph), "hipStreamEndCapture") ||
      failed(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0),
             "hipGraphInstantiate"))
    return e;
  for (int l = 0; l < launches; l++) {
    if (failed(hipGraphLaunch(exec, s), "hipGraphLaunch")) return e;
    ++*launched;
  }
  if (failed(hipStreamSynchronize(s), "hipStreamSynchronize") ||
      failed(hipGraphExecDestroy(exec), "hipGraphExecDestroy") ||
      failed(hipGraphDestroy(graph), "hipGraphDestroy"))
    return e;
  return hipSuccess;
}

int Infer(int gpus, int streams, int iters) {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  if (gpus > count) {
    std::fprintf(stderr, "hip_client: %d GPUs asked, %d present\n", gpus,
                 count);
    return 1;
  }
  struct Lane {
    int device;
    hipStream_t stream;
    hipEvent_t done;
    float* in;
    float* out;
    std::vector<float> host_in, host_back;
  };
  std::vector<Lane> lanes;
  for (int d = 0; d < gpus; d++) {
    CHECK(hipSetDevice(d));
    for (int s = 0; s < streams; s++) {
      Lane l;
      l.device = d;
      CHECK(hipStreamCreate(&l.stream));
      CHECK(hipEventCreate(&l.done));
      CHECK(hipMalloc(&l.in, kElems * sizeof(float)));
      CHECK(hipMalloc(&l.out, kElems * sizeof(float)));
      l.host_in.resize(kElems);
      l.host_back.assign(kElems, 0.0f);
      lanes.push_back(std::move(l));
    }
  }
  long launches = 0, copies = 0;
  for (int it = 0; it < iters; it++) {
    for (size_t i = 0; i < lanes.size(); i++) {
      Lane& l = lanes[i];
      for (int e = 0; e < kElems; e++)
        l.host_in[e] = static_cast<float>(it * 100000 + i * 1000 + e);
      CHECK(hipSetDevice(l.device));
      CHECK(hipMemcpyAsync(l.in, l.host_in.data(), kElems * sizeof(float),
                           hipMemcpyHostToDevice, l.stream));
      for (int k = 0; k < 3; k++) {
        hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, l.stream,
                           l.in, l.out, kElems);
        CHECK(hipGetLastError());
        launches++;
      }
      CHECK(hipMemcpyAsync(l.host_back.data(), l.in, kElems * sizeof(float),
                           hipMemcpyDeviceToHost, l.stream));
      CHECK(hipEventRecord(l.done, l.stream));
      copies += 2;
    }
    for (Lane& l : lanes) {
      CHECK(hipEventSynchronize(l.done));
      if (std::memcmp(l.host_back.data(), l.host_in.data(),
                      kElems * sizeof(float)) != 0) {
        std::fprintf(stderr, "hip_client: round trip differs (device %d)\n",
                     l.device);
        return 1;
      }
    }
  }
  for (Lane& l : lanes) {
    CHECK(hipSetDevice(l.device));
    CHECK(hipFree(l.in));
    CHECK(hipFree(l.out));
    CHECK(hipEventDestroy(l.done));
    CHECK(hipStreamDestroy(l.stream));
  }
  std::printf(
      "hip_client infer gpus=%d streams=%d iters=%d launches=%ld "
      "copies=%ld ok\n",
      gpus, streams, iters, launches, copies);
  return 0;
}

int Latency(int device, int hz, int ms, bool high) {
  CHECK(hipSetDevice(device));
  // With `high`, the users' experiment: the latency-sensitive process on a
  // high-priority stream beside a batch one (HIP's numerically lowest
  // priority is the greatest).
  int least = 0, greatest = 0;
  hipStream_t s;
  if (high) {
    CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(hipStreamCreateWithPriority(&s, hipStreamDefault, greatest));
  } else {
    CHECK(hipStreamCreate(&s));
  }
  float* buf;
  CHECK(hipMalloc(&buf, kElems * sizeof(float)));
  using Clock = std::chrono::steady_clock;
  auto period = std::chrono::microseconds(1000000 / hz);
  auto start = Clock::now(), next = start;
  long launches = 0;
  double worst_us = 0;
  while (Clock::now() - start < std::chrono::milliseconds(ms)) {
    auto t0 = Clock::now();
    hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s, buf, buf,
                       kElems);
    CHECK(hipGetLastError());
    CHECK(hipStreamSynchronize(s));
    double us =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (us > worst_us) worst_us = us;
    launches++;
    next += period;
    std::this_thread::sleep_until(next);
  }
  CHECK(hipFree(buf));
  // A priority stream is not destroyed: HIP 5.2.3 destroys its queue with
  // it (HIP 7.2 keeps it pooled); the process's end takes it.
  if (!high) CHECK(hipStreamDestroy(s));
  std::printf(
      "hip_client latency device=%d hz=%d priority=%d launches=%ld "
      "worst_us=%.0f ok\n",
      device, hz, greatest, launches, worst_us);
  return 0;
}

// The batch process, optionally fenced to a set of CUs as a
// CU-partitioning scheduler experiment does: HIP gives such a stream a
// queue of its own and ROCr sets the mask on it (hsa_amd_queue_cu_set_mask:
// AMDKFD_IOC_SET_CU_MASK). That stream is not destroyed: its queue stays
// until the process ends (a held program still shows it); HIP 7.2 deletes
// it at hipStreamDestroy, and on the KFD null GPU that delete hung in 3 of
// 6 runs side by side (not understood yet).
int Batch(int device, int ms, const char* cu_mask) {
  CHECK(hipSetDevice(device));
  hipStream_t s;
  uint32_t mask = 0;
  if (cu_mask != nullptr) {
    mask = static_cast<uint32_t>(std::strtoul(cu_mask, nullptr, 16));
    CHECK(hipExtStreamCreateWithCUMask(&s, 1, &mask));
  } else {
    CHECK(hipStreamCreate(&s));
  }
  float* buf;
  CHECK(hipMalloc(&buf, kElems * sizeof(float)));
  auto start = std::chrono::steady_clock::now();
  long launches = 0;
  while (std::chrono::steady_clock::now() - start <
         std::chrono::milliseconds(ms)) {
    for (int i = 0; i < 64; i++) {
      hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s, buf, buf,
                         kElems);
      launches++;
    }
    CHECK(hipGetLastError());
    CHECK(hipStreamSynchronize(s));
  }
  CHECK(hipFree(buf));
  if (cu_mask == nullptr) CHECK(hipStreamDestroy(s));
  std::printf("hip_client batch device=%d cu_mask=0x%08x launches=%ld ok\n",
              device, mask, launches);
  return 0;
}

int Rings(int streams, int n) {
  CHECK(hipSetDevice(0));
  std::vector<hipStream_t> ss(streams);
  for (auto& s : ss) CHECK(hipStreamCreate(&s));
  float* buf;
  CHECK(hipMalloc(&buf, kElems * sizeof(float)));
  long launches = 0;
  for (int i = 0; i < n; i++) {
    for (auto& s : ss) {
      hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s, buf, buf,
                         kElems);
      CHECK(hipGetLastError());
      CHECK(hipStreamSynchronize(s));
      launches++;
    }
  }
  CHECK(hipFree(buf));
  for (auto& s : ss) CHECK(hipStreamDestroy(s));
  std::printf("hip_client rings streams=%d launches=%ld ok\n", streams,
              launches);
  return 0;
}

int Held(int rc);

int Queues(int streams) {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  std::vector<hipStream_t> all;
  std::vector<float*> bufs;
  for (int d = 0; d < count; d++) {
    CHECK(hipSetDevice(d));
    float* buf;
    CHECK(hipMalloc(&buf, kElems * sizeof(float)));
    bufs.push_back(buf);
    for (int i = 0; i < streams; i++) {
      hipStream_t s;
      CHECK(hipStreamCreate(&s));
      hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s, buf, buf,
                         kElems);
      CHECK(hipGetLastError());
      all.push_back(s);
    }
    CHECK(hipDeviceSynchronize());
    // One copy each way: what makes ROCr set up its copy engines (SDMA
    // queues, or blit kernels on its internal queues).
    std::vector<float> h(kElems, 1.0f), back(kElems, 0.0f);
    CHECK(hipMemcpy(buf, h.data(), kElems * sizeof(float),
                    hipMemcpyHostToDevice));
    CHECK(hipMemcpy(back.data(), buf, kElems * sizeof(float),
                    hipMemcpyDeviceToHost));
    if (back != h) {
      std::fprintf(stderr, "hip_client: round trip differs (device %d)\n", d);
      return 1;
    }
  }
  std::printf("hip_client queues devices=%d streams=%d ok\n", count, streams);
  // Held with its streams (and their hardware queues) alive: what the
  // agent's sampler reads while a test compares it with the truth.
  if (std::getenv("GPUQ_HIP_CLIENT_HOLD")) return Held(0);
  for (auto& s : all) CHECK(hipStreamDestroy(s));
  for (float* b : bufs) CHECK(hipFree(b));
  return 0;
}

int Graph(int nodes, int launches, int eager) {
  CHECK(hipSetDevice(0));
  float* buf;
  CHECK(hipMalloc(&buf, kElems * sizeof(float)));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  for (int i = 0; i < eager; i++)
    hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s, buf, buf,
                       kElems);
  CHECK(hipGetLastError());
  CHECK(hipStreamSynchronize(s));
  const char* what = "";
  int launched = 0;
  if (!Check(RunGraph(s, buf, nodes, launches, &what, &launched), what))
    return 1;
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(buf));
  std::printf("hip_client graph nodes=%d launches=%d eager=%d kernels=%d ok\n",
              nodes, launches, eager, eager + nodes * launches);
  return 0;
}

int Serve() {
  int count = 0;
  if (!Check(hipGetDeviceCount(&count), "hipGetDeviceCount")) {
    std::printf("BAD hipGetDeviceCount\n");
    return 1;
  }
  std::printf("READY %d gpus=%d\n", static_cast<int>(getpid()), count);
  struct Stream {
    std::string name;
    int device;
    hipStream_t stream;
    float* buf;
    std::vector<float> host;
    long launches, copies;
  };
  std::vector<Stream> streams;
  auto find = [&](const std::string& name) -> Stream* {
    for (Stream& s : streams)
      if (s.name == name) return &s;
    std::printf("BAD no stream %s\n", name.c_str());
    return nullptr;
  };
  auto ok = [](hipError_t e, const char* what, const std::string& name) {
    if (e == hipSuccess) return true;
    std::printf("BAD %s %s: %s\n", what, name.c_str(), hipGetErrorString(e));
    return false;
  };
  char line[256];
  while (std::fgets(line, sizeof(line), stdin)) {
    char cmd[32] = "", a[64] = "";
    int n = 0, n2 = 1;
    if (std::sscanf(line, "%31s %63s %d %d", cmd, a, &n, &n2) < 1) continue;
    std::string c = cmd, name = a;
    if (c == "stream") {
      Stream s{name, n, nullptr, nullptr, std::vector<float>(kElems, 1.0f),
               0,    0};
      if (ok(hipSetDevice(n), "hipSetDevice", name) &&
          ok(hipStreamCreate(&s.stream), "hipStreamCreate", name) &&
          ok(hipMalloc(&s.buf, kElems * sizeof(float)), "hipMalloc", name))
        streams.push_back(std::move(s));
    } else if (c == "launch") {
      Stream* s = find(name);
      if (!s || !ok(hipSetDevice(s->device), "hipSetDevice", name)) continue;
      for (int i = 0; i < n; i++) {
        hipLaunchKernelGGL(Scale, dim3(kElems / 256), dim3(256), 0, s->stream,
                           s->buf, s->buf, kElems);
        if (!ok(hipGetLastError(), "hipLaunchKernelGGL", name)) break;
        s->launches++;
      }
    } else if (c == "graph") {
      Stream* s = find(name);
      if (!s || !ok(hipSetDevice(s->device), "hipSetDevice", name)) continue;
      const char* what = "";
      int launched = 0;
      const hipError_t e = RunGraph(s->stream, s->buf, n, n2, &what, &launched);
      s->launches += static_cast<long>(n) * launched;
      ok(e, what, name);
    } else if (c == "copy") {
      Stream* s = find(name);
      if (!s || !ok(hipSetDevice(s->device), "hipSetDevice", name)) continue;
      if (ok(hipMemcpyAsync(s->buf, s->host.data(), kElems * sizeof(float),
                            hipMemcpyHostToDevice, s->stream),
             "hipMemcpyAsync H2D", name) &&
          ok(hipMemcpyAsync(s->host.data(), s->buf, kElems * sizeof(float),
                            hipMemcpyDeviceToHost, s->stream),
             "hipMemcpyAsync D2H", name))
        s->copies += 2;
    } else if (c == "wait") {
      Stream* s = find(name);
      if (s) ok(hipStreamSynchronize(s->stream), "hipStreamSynchronize", name);
    } else if (c == "truth") {
      for (const Stream& s : streams)
        std::printf("STREAM %s gpu=%d launches=%ld copies=%ld\n",
                    s.name.c_str(), s.device, s.launches, s.copies);
    } else if (c == "sync") {
      std::printf("SYNC %s\n", a);
    } else if (c == "exit") {
      std::printf("EXIT\n");
      std::fflush(stdout);
      // Without hipStreamDestroy or HIP's teardown: the queues die with
      // the process, as when a job is killed.
      _exit(0);
    } else {
      std::printf("BAD unknown command %s\n", cmd);
    }
  }
  std::printf("EXIT stdin closed\n");
  return 0;
}

int Arg(char** argv, int argc, int i, int def) {
  return i < argc ? std::atoi(argv[i]) : def;
}

// GPUQ_HIP_CLIENT_HOLD=1: after a one-shot mode's work, prints "HOLD PID
// rc=RC" and waits for stdin to end, then _exit(RC) without HIP's teardown.
// A test compares the agent with the thunk while the queues are alive (the
// sampler has read their last packets), then sees KFD tear them down at the
// exit.
int Held(int rc) {
  if (!std::getenv("GPUQ_HIP_CLIENT_HOLD")) return rc;
  std::printf("HOLD %d rc=%d\n", static_cast<int>(getpid()), rc);
  std::fflush(stdout);
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {
  }
  _exit(rc);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "infer")
    return Held(Infer(Arg(argv, argc, 2, 1), Arg(argv, argc, 3, 2),
                      Arg(argv, argc, 4, 10)));
  if (mode == "latency")
    return Held(Latency(Arg(argv, argc, 2, 0), Arg(argv, argc, 3, 100),
                        Arg(argv, argc, 4, 1000),
                        argc > 5 && std::string(argv[5]) == "high"));
  if (mode == "batch")
    return Held(Batch(Arg(argv, argc, 2, 0), Arg(argv, argc, 3, 1000),
                      argc > 4 ? argv[4] : nullptr));
  if (mode == "rings")
    return Rings(Arg(argv, argc, 2, 2), Arg(argv, argc, 3, 10));
  if (mode == "queues") return Queues(Arg(argv, argc, 2, 1));
  if (mode == "graph")
    return Graph(Arg(argv, argc, 2, 300), Arg(argv, argc, 3, 2),
                 Arg(argv, argc, 4, 10));
  if (mode == "serve") {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    return Serve();
  }
  std::fprintf(
      stderr,
      "usage: hip_client infer GPUS STREAMS ITERS | latency GPU HZ "
      "MS [high] | batch GPU MS [CU_MASK] | rings STREAMS N | queues STREAMS | "
      "graph NODES LAUNCHES EAGER | serve\n");
  return 2;
}

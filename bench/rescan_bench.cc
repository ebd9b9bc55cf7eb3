// What finding new libhsa-runtime64 files costs the doorbell poller every
// SubmissionReaders::kRescanEvery rounds, with processes whose maps are long
// (a HIP process maps thousands of regions: HIP, comgr, LLVM, its buffers).
// Two ways, interleaved per repetition so both see the same noise:
//
//   every: FindHsaRuntimes over procfs, which reads every process's maps
//          (what each rescan did before it became incremental);
//   new:   RuntimeScanner::Rescan (what DoorbellCounter::Rescan asks) in
//          steady state: it reads only the maps of processes that may hold
//          a library not found in them yet (new, exec'ed, or grown).
//
// CPU time is this thread's (CLOCK_THREAD_CPUTIME_ID): the kernel's work
// generating /proc/<pid>/maps is system time charged to the reader. The
// machine's other processes are read too, as the agent would. See
// bench/README.md.
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "bench_args.h"
#include "bench_stats.h"
#include "submissions/runtime_scanner.h"

namespace {

using gpuq::bench::Median;
using gpuq::bench::ThreadCpuSeconds;

/// A child holding `regions` separate mappings (alternating protections, so
/// the kernel cannot merge them) until it is killed. -1 if it cannot start.
pid_t StartHolder(int regions) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    const long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < regions; ++i) {
      mmap(nullptr, static_cast<size_t>(page),
           i % 2 == 0 ? PROT_READ : PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    for (;;) pause();
  }
  close(ready[1]);
  char c;
  const bool up = pid > 0 && read(ready[0], &c, 1) == 1;
  close(ready[0]);
  if (!up && pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return up ? pid : -1;
}

size_t MapsLines(pid_t pid) {
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  gpuq::bench::Args args{
      "Doorbell library rescan cost: every process's maps vs new ones"};
  int processes = 20, regions = 3000, reps = 7;
  args.Add("--processes", processes, 1, 500, "holder processes");
  args.Add("--regions", regions, 1, 60000, "mappings per holder");
  args.Add("--reps", reps, 1, 100, "interleaved repetitions");
  if (const auto status = args.Parse(argc, argv)) return *status;

  std::vector<pid_t> holders;
  for (int i = 0; i < processes; ++i) {
    const pid_t h = StartHolder(regions);
    if (h < 0) {
      fmt::print(stderr, "cannot start holder process {}\n", i);
      break;
    }
    holders.push_back(h);
  }
  int status = 0;
  gpuq::RuntimeScanner scanner;
  scanner.Rescan({});  // the first read of every process, as at Open
  if (holders.size() != static_cast<size_t>(processes)) {
    status = 1;
  } else {
    fmt::print("{} holder processes, {} maps lines each, {} reps\n", processes,
               MapsLines(holders.front()), reps);
    std::vector<double> every, fresh;
    uint64_t new_reads = 0;
    for (int r = 0; r < reps; ++r) {
      double t0 = ThreadCpuSeconds();
      const size_t found = gpuq::FindHsaRuntimes("/proc").size();
      every.push_back(ThreadCpuSeconds() - t0);
      const uint64_t reads = scanner.maps_read();
      t0 = ThreadCpuSeconds();
      scanner.Rescan({});
      fresh.push_back(ThreadCpuSeconds() - t0);
      new_reads += scanner.maps_read() - reads;
      if (r == 0) fmt::print("libraries found by the full read: {}\n", found);
    }
    const double e = Median(every), n = Median(fresh);
    fmt::print("every process's maps: {:.3f} ms CPU per rescan (median)\n",
               e * 1e3);
    fmt::print("new processes only:   {:.3f} ms CPU per rescan (median)\n",
               n * 1e3);
    fmt::print("maps files the incremental rescans read: {} in {} rescans\n",
               new_reads, reps);
    fmt::print("ratio every/new: {:.1f}x\n", n > 0 ? e / n : 0.0);
  }
  for (const pid_t h : holders) {
    kill(h, SIGKILL);
    waitpid(h, nullptr, 0);
  }
  return status;
}

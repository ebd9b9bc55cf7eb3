// Cost of the tracepoint tier (bpf/tracepoint_tier.bpf.h) on everything
// else: its raw sys_enter/sys_exit programs run for every syscall of the
// host, and filter. Measured side by side in one process, interleaved
// (detached, attached, detached, ...), medians of --reps rounds:
//   - a non-KFD ioctl (FIONREAD on /dev/null): passes the syscall-number
//     check, stops at the command check;
//   - a non-ioctl syscall (getppid): stops at the syscall-number check.
// kfd_major is that of a device that is not touched here (it only matters
// for 'K' ioctls), so nothing is decoded. Target: under 50 ns per ioctl.
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bench_args.h"
#include "bench_stats.h"
#include "feature_probe.skel.h"
#include "gpuq.skel.h"
#include "loader/bpf_loader.h"
#include "loader/hooks.h"
#include "loader/kernel_features.h"

namespace {

using gpuq::bench::Median;

using Clock = std::chrono::steady_clock;

double NsPerCall(int n, int fd, bool ioctl_call) {
  int avail = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    if (ioctl_call) {
      ioctl(fd, FIONREAD, &avail);
    } else {
      syscall(SYS_getppid);
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
         n;
}

}  // namespace

int main(int argc, char** argv) {
  gpuq::bench::Args args("gpuq tracepoint-tier overhead per syscall");
  int calls = 200000, reps = 7;
  args.Add("--calls", calls, "syscalls per measurement");
  args.Add("--reps", reps, "rounds (medians reported)");
  if (const auto status = args.Parse(argc, argv)) return *status;
  if (!gpuq::HasBpfPrivileges()) {
    fmt::print("SKIP: needs root to load BPF programs\n");
    return 0;
  }
  gpuq::InstallLibbpfLogger();
  gpuq_bpf* skel = gpuq_bpf__open();
  if (skel == nullptr) {
    fmt::print("SKIP: cannot open the BPF object\n");
    return 0;
  }
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, skel->obj) {
    bpf_program__set_autoload(prog, false);
  }
  std::vector<bpf_program*> programs;
  for (const gpuq::HookSpec& spec : gpuq::Hooks()) {
    for (const std::string& name :
         gpuq::ProgramsOf(spec, gpuq::ProbeTier::kTracepoint)) {
      programs.push_back(
          bpf_object__find_program_by_name(skel->obj, name.c_str()));
      bpf_program__set_autoload(programs.back(), true);
    }
  }
  skel->rodata->kfd_major = 4095;  // no such device: nothing is decoded
  if (gpuq_bpf__load(skel) != 0) {
    fmt::print("SKIP: the tracepoint programs do not load here\n");
    gpuq_bpf__destroy(skel);
    return 0;
  }
  // The floor: one empty raw sys_enter program (the planner's feature
  // probe), i.e. what any syscall tracepoint costs before any filtering.
  feature_probe_bpf* floor_skel = feature_probe_bpf__open();
  if (floor_skel != nullptr) {
    bpf_program__set_autoload(floor_skel->progs.probe_fentry, false);
    bpf_program__set_autoload(floor_skel->progs.probe_kprobe, false);
    if (feature_probe_bpf__load(floor_skel) != 0) {
      feature_probe_bpf__destroy(floor_skel);
      floor_skel = nullptr;
    }
  }
  const int fd = open("/dev/null", O_RDONLY);
  std::vector<double> off_ioctl, on_ioctl, off_getppid, on_getppid;
  std::vector<double> floor_ioctl;
  NsPerCall(calls / 10, fd, true);  // warm up
  for (int r = 0; r < reps; ++r) {
    off_ioctl.push_back(NsPerCall(calls, fd, true));
    off_getppid.push_back(NsPerCall(calls, fd, false));
    std::vector<bpf_link*> links;
    for (bpf_program* p : programs) links.push_back(bpf_program__attach(p));
    on_ioctl.push_back(NsPerCall(calls, fd, true));
    on_getppid.push_back(NsPerCall(calls, fd, false));
    for (bpf_link* l : links) bpf_link__destroy(l);
    if (floor_skel != nullptr) {
      bpf_link* l = bpf_program__attach(floor_skel->progs.probe_tracepoint);
      floor_ioctl.push_back(NsPerCall(calls, fd, true));
      bpf_link__destroy(l);
    }
  }
  if (floor_skel != nullptr) feature_probe_bpf__destroy(floor_skel);
  close(fd);
  gpuq_bpf__destroy(skel);
  const double ioctl_off = Median(off_ioctl), ioctl_on = Median(on_ioctl);
  const double gp_off = Median(off_getppid), gp_on = Median(on_getppid);
  fmt::print(
      "non-KFD ioctl (FIONREAD /dev/null): detached {:.1f} ns, "
      "attached {:.1f} ns: +{:.1f} ns per call, ratio {:.2f}\n",
      ioctl_off, ioctl_on, ioctl_on - ioctl_off, ioctl_on / ioctl_off);
  fmt::print(
      "non-ioctl syscall (getppid):        detached {:.1f} ns, "
      "attached {:.1f} ns: +{:.1f} ns per call, ratio {:.2f}\n",
      gp_off, gp_on, gp_on - gp_off, gp_on / gp_off);
  if (!floor_ioctl.empty()) {
    const double fl = Median(floor_ioctl);
    fmt::print(
        "floor, one empty raw sys_enter program: +{:.1f} ns per ioctl "
        "(the tier's filters add {:.1f} ns on top)\n",
        fl - ioctl_off, ioctl_on - fl);
  }
  fmt::print("{} target: under 50 ns added per non-KFD ioctl\n",
             ioctl_on - ioctl_off < 50 ? "PASS" : "MISS");
  return 0;
}

#include "export/health.h"

#include <fmt/format.h>

namespace gpuq {

HealthStatus JudgeHealth(const HealthFacts& f) {
  if (f.stopping) return {false, "stopping"};
  // A finished replay keeps serving its final state: nothing is left to
  // read, and nothing can go wrong with it any more.
  if (f.replay && f.replay_finished) return {true, ""};
  if (!f.since_last_pass) {
    return {false, "starting: the event loop has not started yet"};
  }
  if (!f.loop_running) return {false, "the event loop has ended"};
  if (*f.since_last_pass >= kEventLoopStalledAfter) {
    return {
        false,
        fmt::format("the event loop is stuck: it has not gone round for "
                    "{:.1f} s",
                    std::chrono::duration<double>(*f.since_last_pass).count())};
  }
  if (!f.replay && !f.bpf_source && !f.kfd_sysfs) {
    return {false, fmt::format("no event source: no kernel hook is attached "
                               "and amdkfd's sysfs ({}) is absent",
                               f.kfd_sysfs_path)};
  }
  return {true, ""};
}

}  // namespace gpuq

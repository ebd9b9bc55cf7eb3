// Attribution on cgroup v1 hosts: every task is in the v2 root there, so the
// cgroup id a kernel event carries names no container. The owner's v1
// container cgroup (/proc/<pid>/cgroup) stands in, under a stable synthetic
// id the attributor learns.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "resolver/attributor.h"

namespace gpuq {

class V1CgroupIds {
 public:
  explicit V1CgroupIds(std::string procfs) : procfs_(std::move(procfs)) {}

  /// The synthetic id of `hdr`'s process, learned by `attributor` with its
  /// v1 path, or nullopt where the event's own id stands: a resolved cgroup
  /// other than the v2 root (a v2 host), tgid 0, a process in no container.
  std::optional<uint64_t> Of(const gpuq_event_header& hdr,
                             Attributor* attributor);

 private:
  std::string procfs_;
  /// tgid -> synthetic id: later events of the process (teardown in a
  /// kworker, after the pid is gone) keep its attribution.
  std::unordered_map<uint32_t, uint64_t> of_tgid_;
};

}  // namespace gpuq

// Attribution on cgroup v1 hosts: every task is in the v2 root there, so the
// cgroup id a kernel event carries names no container. The owner's v1
// container cgroup (/proc/<pid>/cgroup) stands in, under a stable synthetic
// id the attributor learns.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "resolver/attributor.h"

namespace gpuq {

class V1CgroupIds {
 public:
  /// Owners remembered at most; the oldest is forgotten first (a live one
  /// is looked up again, a reaped one's late teardown falls to the host).
  static constexpr size_t kMaxOwners = 65536;

  explicit V1CgroupIds(std::string procfs) : procfs_(std::move(procfs)) {}

  /// The synthetic id of `hdr`'s process, learned by `attributor` with its
  /// v1 path, or nullopt where the event's own id stands: a resolved cgroup
  /// other than the v2 root (a v2 host), tgid 0, a process in no container.
  /// Once the pid is gone, an unknown process key gets the pid's last
  /// owner's id.
  std::optional<uint64_t> Of(const gpuq_event_header& hdr,
                             Attributor* attributor);

 private:
  /// A process by its pid and its KFD process (hdr.process_key): a pid the
  /// kernel reuses for a new process is a new owner.
  using Owner = std::pair<uint32_t, uint64_t>;
  struct Known {
    uint64_t id = 0;   ///< the synthetic cgroup id
    uint64_t seq = 0;  ///< order learned: the pid's last owner wins
  };
  std::string procfs_;
  /// Owner -> synthetic id: later events of the process (teardown in a
  /// kworker, after the pid is gone) keep its attribution.
  std::map<Owner, Known> of_owner_;
  std::deque<Owner> oldest_first_;
  uint64_t next_seq_ = 0;
};

}  // namespace gpuq

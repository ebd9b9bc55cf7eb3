// Which libhsa-runtime64 files processes map, found by reading their
// /proc/<pid>/maps as rarely as finding a new file allows.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpuq {

/// libhsa-runtime64 files mapped by the processes under `procfs`, as paths
/// this process can open: `<procfs>/<pid>/root<path>` (the process's mount
/// namespace, so containers work), else `<path>` itself. One path per file
/// (device, inode), sorted. Reads every process's maps.
std::vector<std::string> FindHsaRuntimes(const std::string& procfs);

/// Remembers whose maps it read. /proc/<pid>/maps of a HIP process runs to
/// thousands of lines and reading it takes that process's mmap lock: read at
/// every rescan, it cost the agent more than sampling (bench/README.md,
/// gpuq-bench-rescan). Not thread-safe.
class RuntimeScanner {
 public:
  explicit RuntimeScanner(std::string procfs = "/proc")
      : procfs_(std::move(procfs)) {}

  /// The libhsa-runtime64 files (as FindHsaRuntimes) in the maps of the
  /// processes under procfs that may hold one not found yet: a process not
  /// read before, or whose program changed (exec), or whose size changed
  /// (dlopen) while no libhsa-runtime64 was found in its maps. Those of
  /// `queue_owners` read here count as read as owners.
  std::vector<std::string> Rescan(const std::set<uint32_t>& queue_owners);

  /// The files in the maps of `queue_owners` that hold no libhsa-runtime64
  /// as last read and were not read since they owned queues: a process that
  /// dlopen()ed ROCr is found without waiting for the next Rescan.
  std::vector<std::string> ScanQueueOwners(
      const std::set<uint32_t>& queue_owners);

  /// How many maps files were read so far (tests, benchmarks).
  uint64_t maps_read() const { return maps_read_; }

 private:
  struct Stamp {
    std::pair<dev_t, ino_t> exe{0, 0};  // its program
    uint64_t pages = 0;                 // its size, /proc/<pid>/statm
  };
  struct Known {
    Stamp stamp;                 // when last read or checked
    bool maps_runtime = false;   // its maps held a libhsa-runtime64
    bool read_as_owner = false;  // read since it owned queues
  };
  using Found = std::map<std::pair<dev_t, ino_t>, std::string>;

  Stamp StampOf(const std::string& pid) const;
  bool Read(const std::string& pid, Found* found);

  std::string procfs_;
  std::map<uint32_t, Known> known_;  // a pid absent here was not read
  uint64_t maps_read_ = 0;
};

}  // namespace gpuq

// Doorbell uprobes (opt-in, --doorbells=uprobe): bpf/doorbell.bpf.c attached
// to libhsa-runtime64's hsa_signal_store_screlease / hsa_signal_store_relaxed
// (and hsa_signal_store_release where it is not an alias), counted in the
// kernel per (process, doorbell signal). This class owns the skeleton and its
// links, finds the runtime libraries, and reads the counts. DoorbellPoller
// (doorbell_poller.h) turns them into records for the model.
#pragma once

#include <gpuq/abi.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/doorbell_tally.h"
#include "common/host_paths.h"
#include "submissions/runtime_scanner.h"

struct doorbell_bpf;
struct bpf_link;
struct bpf_program;

namespace gpuq {

/// Counts of one doorbell signal of one process, as the kernel keeps them
/// (the DoorbellTally part: rings, packets by class, barrier-bit dispatches).
struct DoorbellCount : DoorbellTally {
  uint32_t tgid = 0;
  uint64_t handle = 0;     ///< hsa_signal_t.handle (amd_signal_t address)
  uint64_t cgroup_id = 0;  ///< cgroup v2 id of the ringer at its 1st doorbell
};

/// A defined function of an ELF file's .dynsym, at its file offset (what a
/// uprobe attaches to).
struct ElfFunction {
  std::string name;
  uint64_t file_offset = 0;
};

/// Reads the .dynsym of the 64-bit little-endian ELF file `path` and returns
/// every defined function named in `names` (versioned names such as
/// `f@@ROCR_1` match `f`: .dynsym holds the bare name). Returns false and
/// sets *error if the file cannot be read or is not such an ELF file.
bool ReadElfFunctions(const std::string& path,
                      const std::vector<std::string>& names,
                      std::vector<ElfFunction>* out, std::string* error);

/// What became of one libhsa-runtime64 file.
struct DoorbellLibrary {
  std::string path;
  bool attached = false;
  /// One line per symbol: "name@0xoffset", "name: alias of other", or why
  /// attaching failed.
  std::vector<std::string> details;
};

/// Owns the doorbell skeleton and its uprobe links. Not copyable or movable
/// (hold it by unique_ptr). Thread-safety: not thread-safe.
class DoorbellCounter {
 public:
  struct Options {
    HostPaths paths;
    /// Explicit library paths (--hsa-runtime), attached at Open.
    std::vector<std::string> libraries;
    /// Also attach to every libhsa-runtime64 mapped under paths.procfs.
    bool scan_processes = true;
    /// Size of the count map, (process, doorbell) entries; 0 keeps the
    /// object's 16384. Tests make it small to see map-full drops.
    uint32_t max_doorbells = 0;
    /// Loads the plain store programs even where the kernel has the
    /// preemption kfuncs: for the benchmark's side-by-side cost of the
    /// guard only (with a single ringer; bpf/doorbell.bpf.c says why more
    /// ringers must not run them on 6.13+).
    bool plain_programs = false;
  };

  /// Loads the programs and attaches to the libraries of `options`. Returns
  /// nullptr with *error if the BPF object cannot be loaded; finding no
  /// library is not an error (Rescan later).
  static std::unique_ptr<DoorbellCounter> Open(const Options& options,
                                               std::string* error);

  ~DoorbellCounter();
  DoorbellCounter(const DoorbellCounter&) = delete;
  DoorbellCounter& operator=(const DoorbellCounter&) = delete;

  /// Attaches to one more library file (all processes). Returns true if it
  /// is attached now or already was; false with *error otherwise.
  bool AttachLibrary(const std::string& path, std::string* error);

  /// Attaches to library files not seen before, from the processes
  /// RuntimeScanner::Rescan reads. Returns how many new files were attached.
  int Rescan(const std::set<uint32_t>& queue_owners);

  /// Attaches to library files not seen before, from the queue owners
  /// RuntimeScanner::ScanQueueOwners reads.
  int ScanQueueOwners(const std::set<uint32_t>& queue_owners);

  /// Every counted doorbell signal, sorted by (tgid, handle).
  std::vector<DoorbellCount> Read() const;

  /// Doorbells the kernel could not count (the count map was full).
  uint64_t Drops() const;

  /// Marks (tgid, handle) as a doorbell whatever its amd_signal_t.kind says
  /// (ROCr's InterceptQueue rings a doorbell of kind USER).
  bool AddKnownDoorbell(uint32_t tgid, uint64_t handle);

  /// Undoes AddKnownDoorbell. False if it was not known.
  bool RemoveKnownDoorbell(uint32_t tgid, uint64_t handle);

  /// Deletes the counts of one doorbell signal (its process exited and the
  /// final counts were read). False if there were none.
  bool DeleteCount(uint32_t tgid, uint64_t handle);

  const std::vector<DoorbellLibrary>& Libraries() const { return libraries_; }

  /// The loaded programs hold preemption off while they count (the kernel
  /// has bpf_preempt_disable, Linux 6.10; bpf/doorbell.bpf.c says why).
  bool HoldsPreemptionOff() const { return guarded_; }

  /// The fds of the uprobe programs (for run-time statistics, e.g. the
  /// doorbell benchmark's BPF_ENABLE_STATS figures).
  std::vector<int> ProgramFds() const;

 private:
  DoorbellCounter() = default;
  HostPaths paths_;
  bool scan_ = true;
  doorbell_bpf* skel_ = nullptr;
  bool guarded_ = false;  // HoldsPreemptionOff
  // The loaded pair: plain or guarded (Open).
  bpf_program* screlease_ = nullptr;
  bpf_program* relaxed_ = nullptr;
  mutable std::atomic<uint64_t> last_drops_{0};  // Drops
  std::vector<bpf_link*> links_;
  // library files tried -> index in libraries_
  std::map<std::pair<dev_t, ino_t>, size_t> files_;
  std::vector<DoorbellLibrary> libraries_;
  RuntimeScanner scanner_;

  int AttachNew(const std::vector<std::string>& paths);
};

}  // namespace gpuq

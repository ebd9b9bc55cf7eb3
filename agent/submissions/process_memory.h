// Reads small ranges out of another process's memory: the write and read
// indexes of its queues (kfd-probe-points.md section 3). Batched: one
// process_vm_readv per process for up to kMaxIovecs ranges.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/host_paths.h"

namespace gpuq {

enum class MemoryAccess {
  /// process_vm_readv when procfs is /proc, else <procfs>/<pid>/mem: pids
  /// are init-namespace pids, which only a host procfs mounted elsewhere
  /// (--host-root) resolves when the agent has its own pid namespace.
  kAuto,
  kProcessVmReadv,
  kProcMem,  ///< pread of <procfs>/<pid>/mem, one call per range
};

/// `len` bytes at user VA `addr`.
struct MemoryRange {
  uint64_t addr = 0;
  uint32_t len = 0;
};

/// What one or more reads cost and found (benchmarks and tests).
struct MemoryReadStats {
  uint64_t syscalls = 0;  ///< process_vm_readv, open, pread calls
  uint64_t ranges = 0;
  uint64_t unreadable = 0;  ///< ranges
  /// Ranges process_vm_readv faulted on that <procfs>/<pid>/mem read.
  uint64_t read_through_mem = 0;
  /// Reads refused as a whole: no ptrace access to the process.
  uint64_t denied = 0;
};

/// Thread-safety: not thread-safe (one per sampler thread).
class ProcessMemoryReader {
 public:
  /// Linux's UIO_MAXIOV: most remote iovecs one process_vm_readv takes.
  static constexpr size_t kMaxIovecs = 1024;

  ProcessMemoryReader(HostPaths paths, MemoryAccess access);

  /// Reads each ranges[i] of process `pid` into `data`, back to back in
  /// order, and sets ok[i] to 1 when the whole range could be read, 0 when
  /// not (the process is gone, a page is not mapped, no ptrace access).
  /// Never fails as a whole. data is resized to the sum of the lengths
  /// (zeros where unreadable), ok to ranges.size(). A range
  /// process_vm_readv faults on is read again from <procfs>/<pid>/mem:
  /// memory with no pages to pin (VM_IO | VM_PFNMAP, such as ROCr's queues
  /// in GTT on MES GPUs) is read there through the mapping's access hook.
  void Read(uint32_t pid, const std::vector<MemoryRange>& ranges,
            std::vector<uint8_t>* data, std::vector<uint8_t>* ok);
  /// Whether the last Read() was refused as a whole for want of ptrace
  /// access (CAP_SYS_PTRACE, or Yama), not because the process is gone.
  bool last_denied() const { return last_denied_; }

  /// The access in use (kAuto resolved; kProcMem after the kernel refused
  /// process_vm_readv with ENOSYS).
  MemoryAccess access() const { return access_; }
  const MemoryReadStats& stats() const { return stats_; }

 private:
  /// Returns false when process_vm_readv is refused as a whole (EPERM from
  /// a seccomp filter or missing ptrace access, ENOSYS), so the caller tries
  /// <procfs>/<pid>/mem.
  bool ReadVm(uint32_t pid, const std::vector<MemoryRange>& ranges,
              std::vector<uint8_t>* data, std::vector<uint8_t>* ok);
  /// Reads the ranges not read yet (ok[i] == 0). Returns the errno of a
  /// failed open, else 0.
  int ReadProcMem(uint32_t pid, const std::vector<MemoryRange>& ranges,
                  std::vector<uint8_t>* data, std::vector<uint8_t>* ok);

  HostPaths paths_;
  MemoryAccess access_;
  MemoryReadStats stats_;
  std::vector<iovec> remote_;  // reused across calls
  bool vm_denied_ = false;     // the last ReadVm's EPERM
  bool last_denied_ = false;
};

}  // namespace gpuq

#include "submissions/process_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace gpuq {

ProcessMemoryReader::ProcessMemoryReader(HostPaths paths, MemoryAccess access)
    : paths_(std::move(paths)), access_(access) {
  if (access_ == MemoryAccess::kAuto) {
    access_ = paths_.procfs == "/proc" ? MemoryAccess::kProcessVmReadv
                                       : MemoryAccess::kProcMem;
  }
}

void ProcessMemoryReader::Read(uint32_t pid,
                               const std::vector<MemoryRange>& ranges,
                               std::vector<uint8_t>* data,
                               std::vector<uint8_t>* ok) {
  size_t bytes = 0;
  for (const MemoryRange& r : ranges) bytes += r.len;
  data->assign(bytes, 0);
  ok->assign(ranges.size(), 0);
  last_denied_ = false;
  if (ranges.empty()) return;
  vm_denied_ = false;
  int open_error = 0;
  if (access_ != MemoryAccess::kProcessVmReadv ||
      !ReadVm(pid, ranges, data, ok)) {
    open_error = ReadProcMem(pid, ranges, data, ok);
    // Refused both ways (or the only way tried): no ptrace access.
    last_denied_ = (open_error == EACCES || open_error == EPERM) &&
                   (access_ != MemoryAccess::kProcessVmReadv || vm_denied_);
  } else if (const auto unread = std::count(ok->begin(), ok->end(), 0);
             unread > 0) {
    ReadProcMem(pid, ranges, data, ok);
    stats_.read_through_mem +=
        static_cast<uint64_t>(unread - std::count(ok->begin(), ok->end(), 0));
  }
  if (last_denied_) ++stats_.denied;
  stats_.ranges += ranges.size();
  stats_.unreadable +=
      static_cast<uint64_t>(std::count(ok->begin(), ok->end(), 0));
}

bool ProcessMemoryReader::ReadVm(uint32_t pid,
                                 const std::vector<MemoryRange>& ranges,
                                 std::vector<uint8_t>* data,
                                 std::vector<uint8_t>* ok) {
  const size_t n = ranges.size();
  size_t i = 0, offset = 0;  // first range of the batch, its offset in data
  while (i < n) {
    const size_t batch = std::min(n - i, kMaxIovecs);
    remote_.resize(batch);
    size_t bytes = 0;
    for (size_t j = 0; j < batch; ++j) {
      remote_[j].iov_base = reinterpret_cast<void*>(ranges[i + j].addr);
      remote_[j].iov_len = ranges[i + j].len;
      bytes += ranges[i + j].len;
    }
    // The ranges land back to back in `data`: one local iovec.
    iovec local{data->data() + offset, bytes};
    ++stats_.syscalls;
    const ssize_t got = process_vm_readv(static_cast<pid_t>(pid), &local, 1,
                                         remote_.data(), batch, 0);
    if (got < 0) {
      const int err = errno;
      if (err == EFAULT) {  // the first range of the batch is not mapped
        offset += ranges[i].len;
        ++i;
        continue;
      }
      if (err == ENOSYS) {
        // No CONFIG_CROSS_MEMORY_ATTACH, or a seccomp filter that says so:
        // /proc/<pid>/mem from now on.
        access_ = MemoryAccess::kProcMem;
        return false;
      }
      // EPERM: a seccomp filter (Docker's default without CAP_SYS_PTRACE)
      // or no ptrace access; /proc/<pid>/mem may still be open to us.
      if (err == EPERM && i == 0) {
        vm_denied_ = true;
        return false;
      }
      // ESRCH: the process is gone (or a zombie without mm). Anything else:
      // the rest of this process is unreadable this round.
      return true;
    }
    // Transfers stop at the first remote iovec that faults: the ranges
    // before it are whole, the one it stopped in is unreadable.
    size_t done = 0, j = 0;
    for (; j < batch && done + ranges[i + j].len <= static_cast<size_t>(got);
         ++j) {
      (*ok)[i + j] = 1;
      done += ranges[i + j].len;
    }
    if (j < batch) {
      std::fill(data->begin() + static_cast<ptrdiff_t>(offset + done),
                data->begin() +
                    static_cast<ptrdiff_t>(offset + done + ranges[i + j].len),
                0);
      done += ranges[i + j].len;  // skip the range that faulted
      ++j;
    }
    i += j;
    offset += done;
  }
  return true;
}

int ProcessMemoryReader::ReadProcMem(uint32_t pid,
                                     const std::vector<MemoryRange>& ranges,
                                     std::vector<uint8_t>* data,
                                     std::vector<uint8_t>* ok) {
  const std::string path = paths_.procfs + "/" + std::to_string(pid) + "/mem";
  ++stats_.syscalls;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  // Gone (ENOENT) or no ptrace access (EACCES).
  if (fd < 0) return errno;
  size_t offset = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const MemoryRange& r = ranges[i];
    uint8_t* out = data->data() + offset;
    offset += r.len;
    if ((*ok)[i] != 0) continue;  // read already
    // Offsets of /proc/<pid>/mem are user VAs; those above 2^63 do not fit
    // off_t, and no user mapping lives there.
    if (r.addr > static_cast<uint64_t>(INT64_MAX)) continue;
    ++stats_.syscalls;
    if (pread(fd, out, r.len, static_cast<off_t>(r.addr)) ==
        static_cast<ssize_t>(r.len)) {
      (*ok)[i] = 1;
    } else {
      std::fill(out, out + r.len, 0);
    }
  }
  close(fd);
  return 0;
}

}  // namespace gpuq

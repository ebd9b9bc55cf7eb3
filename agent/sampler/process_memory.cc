#include "sampler/process_memory.h"

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

void ProcessMemoryReader::Read(uint32_t pid, const std::vector<uint64_t>& addrs,
                               std::vector<uint64_t>* values,
                               std::vector<uint8_t>* ok) {
  values->assign(addrs.size(), 0);
  ok->assign(addrs.size(), 0);
  if (addrs.empty()) return;
  if (access_ != MemoryAccess::kProcessVmReadv ||
      !ReadVm(pid, addrs, values, ok)) {
    ReadProcMem(pid, addrs, values, ok);
  }
  stats_.words += addrs.size();
  stats_.unreadable +=
      static_cast<uint64_t>(std::count(ok->begin(), ok->end(), 0));
}

bool ProcessMemoryReader::ReadVm(uint32_t pid,
                                 const std::vector<uint64_t>& addrs,
                                 std::vector<uint64_t>* values,
                                 std::vector<uint8_t>* ok) {
  const size_t n = addrs.size();
  size_t i = 0;
  while (i < n) {
    const size_t batch = std::min(n - i, kMaxIovecs);
    remote_.resize(batch);
    for (size_t j = 0; j < batch; ++j) {
      remote_[j].iov_base = reinterpret_cast<void*>(addrs[i + j]);
      remote_[j].iov_len = sizeof(uint64_t);
    }
    // The words land back to back in `values`: one local iovec.
    iovec local{&(*values)[i], batch * sizeof(uint64_t)};
    ++stats_.syscalls;
    const ssize_t got = process_vm_readv(static_cast<pid_t>(pid), &local, 1,
                                         remote_.data(), batch, 0);
    if (got < 0) {
      const int err = errno;
      if (err == EFAULT) {  // the first word of the batch is not mapped
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
      if (err == EPERM && i == 0) return false;
      // ESRCH: the process is gone (or a zombie without mm). Anything else:
      // the rest of this process is unreadable this round.
      return true;
    }
    // Transfers stop at the first remote iovec that faults; the words before
    // it are whole (8-byte aligned words never straddle a page).
    const size_t whole = static_cast<size_t>(got) / sizeof(uint64_t);
    std::fill(ok->begin() + static_cast<ptrdiff_t>(i),
              ok->begin() + static_cast<ptrdiff_t>(i + whole), 1);
    i += whole;
    if (whole < batch) ++i;  // skip the word that faulted
  }
  return true;
}

void ProcessMemoryReader::ReadProcMem(uint32_t pid,
                                      const std::vector<uint64_t>& addrs,
                                      std::vector<uint64_t>* values,
                                      std::vector<uint8_t>* ok) {
  const std::string path = paths_.procfs + "/" + std::to_string(pid) + "/mem";
  ++stats_.syscalls;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // gone (ENOENT) or no ptrace access (EACCES)
  for (size_t i = 0; i < addrs.size(); ++i) {
    ++stats_.syscalls;
    // Offsets of /proc/<pid>/mem are user VAs; those above 2^63 do not fit
    // off_t, and no user mapping lives there.
    if (addrs[i] > static_cast<uint64_t>(INT64_MAX)) continue;
    uint64_t word = 0;
    if (pread(fd, &word, sizeof(word), static_cast<off_t>(addrs[i])) ==
        static_cast<ssize_t>(sizeof(word))) {
      (*values)[i] = word;
      (*ok)[i] = 1;
    }
  }
  close(fd);
}

}  // namespace gpuq

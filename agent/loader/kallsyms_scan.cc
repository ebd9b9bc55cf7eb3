#include "loader/kallsyms_scan.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpuq {
namespace {

// "name.constprop.0" / "name.isra.0": a copy GCC made with some arguments
// removed or changed, which callers call instead of `name` (".cold" and
// ".part" parts are entered through `name` itself). `name` if so, else "".
std::string_view CloneOf(std::string_view symbol) {
  for (std::string_view kind : {".constprop.", ".isra."}) {
    const size_t at = symbol.find(kind);
    if (at != std::string_view::npos && at > 0) return symbol.substr(0, at);
  }
  return {};
}

// The next field of `line` from `*at` (split on spaces and tabs).
std::string_view NextField(std::string_view line, size_t* at) {
  size_t begin = line.find_first_not_of(" \t", *at);
  if (begin == std::string_view::npos) {
    *at = line.size();
    return {};
  }
  size_t end = line.find_first_of(" \t", begin);
  if (end == std::string_view::npos) end = line.size();
  *at = end;
  return line.substr(begin, end - begin);
}

class Scanner {
 public:
  explicit Scanner(const std::vector<std::string>& wanted)
      : want_(wanted.begin(), wanted.end()) {}

  // "ffffffffc0a01230 t kfd_procfs_add_queue\t[amdgpu]"
  void Line(std::string_view line) {
    size_t at = 0;
    NextField(line, &at);  // address
    const std::string_view type = NextField(line, &at);
    const std::string_view name = NextField(line, &at);
    const std::string_view module = NextField(line, &at);
    const bool amdgpu = module == "[amdgpu]";
    out_.amdgpu_loaded |= amdgpu;
    if (type != "t" && type != "T") return;
    if (want_.find(name) != want_.end()) out_.present.emplace(name);
    if (amdgpu && name == "kfd_ioctl_create_process") {
      out_.kfd_create_process = true;
    }
    if (name.find('.') == std::string_view::npos) return;
    const std::string_view cloned = CloneOf(name);
    if (!cloned.empty() && want_.find(cloned) != want_.end()) {
      out_.clones[std::string(cloned)] = std::string(name);
    }
  }

  KallsymsScan Result() { return std::move(out_); }

 private:
  const std::set<std::string, std::less<>> want_;
  KallsymsScan out_;
};

}  // namespace

KallsymsScan ScanKallsyms(const std::string& path,
                          const std::vector<std::string>& wanted) {
  Scanner scanner(wanted);
  // O_NONBLOCK: a FIFO in its place reads as empty instead of hanging.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return scanner.Result();
  // A symbol name is at most KSYM_NAME_LEN (512) bytes; a "line" longer
  // than the buffer is not kallsyms' and is cut where the buffer ends.
  constexpr size_t kBuffer = 256 * 1024;
  std::string buffer(kBuffer, '\0');
  size_t filled = 0;
  for (;;) {
    const ssize_t got = read(fd, buffer.data() + filled, kBuffer - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    filled += static_cast<size_t>(got);
    std::string_view rest(buffer.data(), filled);
    for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos;) {
      scanner.Line(rest.substr(0, nl));
      rest.remove_prefix(nl + 1);
    }
    if (rest.size() == kBuffer) {
      scanner.Line(rest);
      rest.remove_prefix(rest.size());
    }
    if (!rest.empty()) std::memmove(buffer.data(), rest.data(), rest.size());
    filled = rest.size();
  }
  close(fd);
  if (filled > 0) scanner.Line(std::string_view(buffer.data(), filled));
  return scanner.Result();
}

}  // namespace gpuq

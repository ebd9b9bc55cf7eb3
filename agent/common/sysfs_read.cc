#include "common/sysfs_read.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <limits>

namespace gpuq {

bool PathExists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

int ReadWholeFile(const std::string& path, std::string* out) {
  // O_NONBLOCK: a FIFO under a --sysfs-root/--procfs-root tree reads as
  // empty instead of blocking; the cap ends a device or an endless file.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return errno;
  out->clear();
  char buf[4096];
  int err = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      if (out->size() + static_cast<size_t>(n) > kMaxAttributeBytes) {
        err = EFBIG;
        break;
      }
      out->append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      err = errno;
      break;
    }
  }
  close(fd);
  return err;
}

bool IsVanished(int err) { return err == ENOENT || err == ENODEV; }

std::string_view TrimTrailingSpace(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\n' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

bool ParseDecimal(std::string_view text, uint64_t* value) {
  // from_chars reads digits only (no sign, blank or 0x) and reports overflow.
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return false;
  *value = v;
  return true;
}

bool ParseU32(std::string_view text, uint32_t* value) {
  uint64_t v = 0;
  if (!ParseDecimal(text, &v) || v > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  *value = static_cast<uint32_t>(v);
  return true;
}

int ListNumericEntries(const std::string& dir, std::vector<uint32_t>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return errno;
  out->clear();
  int err = 0;
  for (;;) {
    errno = 0;  // readdir(3) signals errors only through errno
    const dirent* entry = readdir(d);
    if (entry == nullptr) {
      err = errno;
      break;
    }
    uint32_t n = 0;
    if (ParseU32(entry->d_name, &n)) out->push_back(n);
  }
  closedir(d);
  std::sort(out->begin(), out->end());
  return err;
}

}  // namespace gpuq

#include "common/bounded_read.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace gpuq {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

/// Opens `path` without blocking (a FIFO with no writer would block open())
/// and checks it is a regular file of at most `max_bytes`.
int OpenRegular(const std::string& path, uint64_t max_bytes, uint64_t* size,
                std::string* error) {
  const int fd =
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = fmt::format("cannot open it: {}", std::strerror(errno));
    return -1;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = fmt::format("cannot stat it: {}", std::strerror(errno));
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = fmt::format("it is {}, not a regular file", KindOf(st.st_mode));
    close(fd);
    return -1;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *error = fmt::format("it is {} bytes, more than the {} this reads",
                         st.st_size, max_bytes);
    close(fd);
    return -1;
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

bool ReadRegularFile(const std::string& path, uint64_t max_bytes,
                     std::string* out, std::string* error) {
  uint64_t size = 0;
  const int fd = OpenRegular(path, max_bytes, &size, error);
  if (fd < 0) return false;
  out->clear();
  try {
    out->resize(size);
  } catch (const std::bad_alloc&) {
    *error = fmt::format("cannot allocate {} bytes to read it", size);
    close(fd);
    return false;
  }
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = read(fd, out->data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = fmt::format("cannot read it: {}", std::strerror(errno));
      close(fd);
      return false;
    }
    if (n == 0) break;  // shrank while read: keep what was there
    done += static_cast<uint64_t>(n);
  }
  out->resize(done);
  close(fd);
  return true;
}

int OpenRegularFile(const std::string& path, uint64_t max_bytes, uint64_t* size,
                    std::string* error) {
  return OpenRegular(path, max_bytes, size, error);
}

bool CheckRegularFile(const std::string& path, uint64_t max_bytes,
                      std::string* error) {
  uint64_t size = 0;
  const int fd = OpenRegular(path, max_bytes, &size, error);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace gpuq

#include "submissions/process_environ.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "sources/runtime_knobs.h"

namespace gpuq {

bool ReadRuntimeKnobs(const std::string& procfs, uint32_t pid,
                      gpuq_process_knobs_record* out) {
  const std::string path = procfs + "/" + std::to_string(pid) + "/environ";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  RuntimeKnobsParser parser;
  char buf[16384];
  bool ok = true;
  size_t total = 0;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;  // EACCES (lost access), ESRCH (gone)
    if (n <= 0) break;
    total += static_cast<size_t>(n);
    parser.Feed(buf, static_cast<size_t>(n));
  }
  close(fd);
  // Nothing at all: an exiting process whose memory is gone reads empty, as
  // a process started with no environment does; neither is told as read.
  if (!ok || total == 0) return false;
  *out = parser.Finish();
  return true;
}

}  // namespace gpuq

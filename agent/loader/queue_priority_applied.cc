#include "loader/queue_priority_applied.h"

#include <sys/utsname.h>

#include <cstdio>

#include "common/sysfs_read.h"

namespace gpuq {

const char* QueuePriorityAppliedLabel(QueuePriorityApplied a) {
  switch (a) {
    case QueuePriorityApplied::kProgrammed:
      return "programmed";
    case QueuePriorityApplied::kIgnored:
      return "ignored";
    case QueuePriorityApplied::kUnknown:
      break;
  }
  return "unknown";
}

QueuePriorityFact QueuePriorityOfRelease(const std::string& release) {
  QueuePriorityFact f;
  f.release = release;
  unsigned major = 0;
  unsigned minor = 0;
  if (std::sscanf(release.c_str(), "%u.%u", &major, &minor) != 2) {
    f.why = "kernel release '" + release + "' not understood";
    return f;
  }
  if (major >= 7) {
    f.applied = QueuePriorityApplied::kIgnored;
    f.why = "kernel " + release +
            " (7.0 and later: amdkfd programs only the pipe priority)";
  } else {
    f.applied = QueuePriorityApplied::kProgrammed;
    f.why = "kernel " + release +
            " (before 7.0: amdkfd programs the queue and pipe priority)";
  }
  return f;
}

QueuePriorityFact LoadQueuePriorityFact(const HostPaths& paths) {
  utsname u{};
  uname(&u);
  QueuePriorityFact f = QueuePriorityOfRelease(u.release);
  if (PathExists(paths.sysfs + "/module/amdgpu/version") ||
      PathExists(paths.sysfs + "/module/amdkcl")) {
    f.applied = QueuePriorityApplied::kUnknown;
    f.why = std::string("an out-of-tree amdgpu on kernel ") + u.release +
            " (it follows its own amdkfd, not the kernel's release)";
  }
  return f;
}

}  // namespace gpuq

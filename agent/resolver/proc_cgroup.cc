#include "resolver/proc_cgroup.h"

#include <sys/stat.h>

#include <fstream>

namespace gpuq {

std::optional<std::string> CgroupPathOfPid(const std::string& procfs,
                                           uint32_t pid) {
  std::ifstream in(procfs + "/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // cgroup v2 (and the unified part of a hybrid host) is hierarchy 0 with
    // no controllers: "0::/path" (Documentation/admin-guide/cgroup-v2.rst).
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return std::nullopt;
}

std::optional<std::string> V1CgroupPathOfPid(const std::string& procfs,
                                             uint32_t pid) {
  std::ifstream in(procfs + "/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "4:memory:/docker/<id>": hierarchy id, controllers, path.
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    if (line.compare(0, first, "0") == 0) continue;  // the v2 line
    const std::string path = line.substr(second + 1);
    if (!path.empty() && path != "/") return path;
  }
  return std::nullopt;
}

std::optional<uint64_t> CgroupIdOfPath(const std::string& v2_root,
                                       const std::string& path) {
  if (v2_root.empty()) return std::nullopt;
  struct stat st {};
  const std::string dir = path == "/" ? v2_root : v2_root + path;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  return static_cast<uint64_t>(st.st_ino);
}

std::string CommOfPid(const std::string& procfs, uint32_t pid) {
  std::ifstream in(procfs + "/" + std::to_string(pid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

}  // namespace gpuq

#include "submissions/runtime_scanner.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpuq {
namespace {

constexpr const char* kLibraryPrefix = "libhsa-runtime64.so";

bool IsLibraryName(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  return base.rfind(kLibraryPrefix, 0) == 0;
}

bool IsPid(const std::string& name) {
  return !name.empty() &&
         name.find_first_not_of("0123456789") == std::string::npos;
}

/// Adds the libhsa-runtime64 files process `pid` maps to `found`; true if
/// it maps any.
bool AddHsaRuntimesOf(const std::string& procfs, const std::string& pid,
                      std::map<std::pair<dev_t, ino_t>, std::string>* found) {
  bool any = false;
  std::ifstream maps(procfs + "/" + pid + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // address perms offset dev inode path; the path may hold spaces
    std::istringstream fields(line);
    std::string skip;
    for (int i = 0; i < 5; ++i) fields >> skip;
    std::string path;
    std::getline(fields >> std::ws, path);
    if (path.empty() || path[0] != '/' || !IsLibraryName(path)) continue;
    if (path.size() > 10 &&
        path.compare(path.size() - 10, 10, " (deleted)") == 0)
      continue;
    struct stat st;
    std::string usable = procfs + "/" + pid + "/root" + path;
    if (stat(usable.c_str(), &st) != 0) {
      usable = path;
      if (stat(usable.c_str(), &st) != 0) continue;
    }
    found->emplace(std::make_pair(st.st_dev, st.st_ino), usable);
    any = true;
  }
  return any;
}

std::vector<std::string> SortedPaths(
    const std::map<std::pair<dev_t, ino_t>, std::string>& found) {
  std::vector<std::string> paths;
  for (const auto& [id, path] : found) paths.push_back(path);
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

std::vector<std::string> FindHsaRuntimes(const std::string& procfs) {
  std::map<std::pair<dev_t, ino_t>, std::string> found;
  DIR* dir = opendir(procfs.c_str());
  if (dir == nullptr) return {};
  while (dirent* entry = readdir(dir)) {
    if (IsPid(entry->d_name)) AddHsaRuntimesOf(procfs, entry->d_name, &found);
  }
  closedir(dir);
  return SortedPaths(found);
}

RuntimeScanner::Stamp RuntimeScanner::StampOf(const std::string& pid) const {
  Stamp stamp;
  struct stat st;
  if (stat((procfs_ + "/" + pid + "/exe").c_str(), &st) == 0)
    stamp.exe = {st.st_dev, st.st_ino};
  std::ifstream statm(procfs_ + "/" + pid + "/statm");
  statm >> stamp.pages;
  return stamp;
}

bool RuntimeScanner::Read(const std::string& pid, Found* found) {
  ++maps_read_;
  return AddHsaRuntimesOf(procfs_, pid, found);
}

std::vector<std::string> RuntimeScanner::Rescan(
    const std::set<uint32_t>& queue_owners) {
  Found found;
  std::map<uint32_t, Known> present;
  if (DIR* dir = opendir(procfs_.c_str())) {
    while (dirent* entry = readdir(dir)) {
      if (!IsPid(entry->d_name)) continue;
      const auto pid =
          static_cast<uint32_t>(std::strtoul(entry->d_name, nullptr, 10));
      Known now;
      now.stamp = StampOf(entry->d_name);
      const auto seen = known_.find(pid);
      if (seen != known_.end() && seen->second.stamp.exe == now.stamp.exe &&
          (seen->second.maps_runtime ||
           seen->second.stamp.pages == now.stamp.pages)) {
        now.maps_runtime = seen->second.maps_runtime;  // nothing new there
        now.read_as_owner = seen->second.read_as_owner;
      } else {
        now.maps_runtime = Read(entry->d_name, &found);
        now.read_as_owner = queue_owners.count(pid) != 0;
      }
      present.emplace(pid, now);
    }
    closedir(dir);
  }
  // Processes that are gone leave: a new one with a reused pid is read.
  known_ = std::move(present);
  return SortedPaths(found);
}

std::vector<std::string> RuntimeScanner::ScanQueueOwners(
    const std::set<uint32_t>& queue_owners) {
  Found found;
  for (const uint32_t pid : queue_owners) {
    Known& p = known_[pid];
    if (p.maps_runtime || p.read_as_owner) continue;
    const std::string name = std::to_string(pid);
    p.stamp = StampOf(name);
    p.maps_runtime = Read(name, &found);
    p.read_as_owner = true;
  }
  return SortedPaths(found);
}

}  // namespace gpuq

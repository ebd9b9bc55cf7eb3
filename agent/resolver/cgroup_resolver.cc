// cgroup id -> path by walking the cgroup v2 hierarchy. On v2 the id that
// bpf_get_current_cgroup_id() returns is the kernfs node id of the cgroup,
// which is also the inode number of its directory, so one walk with stat()
// maps every live cgroup.
#include "resolver/cgroup_resolver.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

namespace gpuq {
namespace {

bool IsNonDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// The directory whose inodes are v2 cgroup ids. Only the root of a cgroup2
// mount has `cgroup.controllers` there; v1 hierarchies never do.
//  - unified (pure v2) hosts mount cgroup2 at the mount point itself;
//  - hybrid hosts (systemd's default before v247 on many distros) mount
//    tmpfs there with v1 hierarchies in it and cgroup2 at `unified/`;
//  - legacy (v1 only) hosts have neither, and ids cannot be resolved.
std::string FindV2Root(const std::string& cgroup_mount) {
  const std::string mount = StripTrailingSlashes(cgroup_mount);
  if (IsNonDirectory(mount + "/cgroup.controllers")) return mount;
  const std::string unified = mount + "/unified";
  if (IsNonDirectory(unified + "/cgroup.controllers")) return unified;
  return "";
}

// Opens a directory for reading; `follow` is false below the root so a
// symlink never leads the walk out of the hierarchy.
DIR* OpenDirectory(const std::string& path, bool follow) {
  const int flags =
      O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return nullptr;  // vanished mid-walk, EACCES, ...
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) ::close(fd);
  return dir;
}

}  // namespace

CgroupResolver::CgroupResolver(std::string cgroup_mount,
                               std::chrono::milliseconds min_rescan_interval,
                               Clock clock)
    : v2_root_(FindV2Root(cgroup_mount)),
      min_rescan_interval_(min_rescan_interval),
      clock_(std::move(clock)) {}

std::optional<std::string> CgroupResolver::PathOf(uint64_t cgroup_id) {
  // Hot path: one hash lookup for every id seen before.
  if (auto it = paths_.find(cgroup_id); it != paths_.end()) return it->second;
  auto pin = [&](std::string path) -> std::optional<std::string> {
    unresolved_.erase(cgroup_id);
    return paths_.emplace(cgroup_id, std::move(path)).first->second;
  };
  if (auto it = walked_.find(cgroup_id); it != walked_.end()) {
    return pin(it->second);
  }
  // Learned at creation: also answers cgroups already removed.
  if (learned_ != nullptr) {
    if (auto path = learned_->Find(cgroup_id)) return pin(std::move(*path));
  }
  if (v2_root_.empty()) return std::nullopt;

  // A miss rescans at most once per interval. Within it, ids in the negative
  // cache (missed right after a walk: usually cgroups removed before we saw
  // them) and ids created since the last walk both wait for the next one.
  const auto now = clock_();
  if (last_rescan_ && now - *last_rescan_ < min_rescan_interval_) {
    return std::nullopt;
  }
  last_rescan_ = now;
  Rescan();
  if (auto it = walked_.find(cgroup_id); it != walked_.end()) {
    return pin(it->second);
  }
  unresolved_.insert(cgroup_id);
  return std::nullopt;
}

void CgroupResolver::Learn(uint64_t cgroup_id, std::string path) {
  paths_[cgroup_id] = std::move(path);
  unresolved_.erase(cgroup_id);
}

void CgroupResolver::Rescan() {
  ++rescans_;
  struct stat root_stat;
  if (::stat(v2_root_.c_str(), &root_stat) != 0 ||
      !S_ISDIR(root_stat.st_mode)) {
    return;
  }
  // The walk replaces the previous one; answers given are pinned in paths_
  // (kernfs does not reuse 64-bit node ids), and learned paths take
  // precedence there.
  walked_.clear();
  walked_.emplace(root_stat.st_ino, "/");

  // Iterative depth-first walk holding one directory open at a time, so the
  // hierarchy's depth cannot exhaust file descriptors.
  struct Pending {
    std::string absolute;
    std::string relative;  // "" for the root, so children get "/<name>"
  };
  std::vector<Pending> stack{{v2_root_, ""}};
  bool is_root = true;
  while (!stack.empty()) {
    Pending dir_entry = std::move(stack.back());
    stack.pop_back();
    DIR* dir = OpenDirectory(dir_entry.absolute, /*follow=*/is_root);
    is_root = false;
    if (dir == nullptr) continue;
    while (const dirent* entry = ::readdir(dir)) {
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) {
        continue;
      }
      // Skip the many interface files without a stat() when d_type says so.
      if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
      struct stat st;
      if (::fstatat(::dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        continue;  // removed since readdir
      }
      // Another filesystem mounted inside the tree is not part of it.
      if (!S_ISDIR(st.st_mode) || st.st_dev != root_stat.st_dev) continue;
      std::string relative = dir_entry.relative + "/" + name;
      walked_.emplace(st.st_ino, relative);
      stack.push_back({dir_entry.absolute + "/" + name, std::move(relative)});
    }
    ::closedir(dir);
  }
}

}  // namespace gpuq

// Filesystem helpers shared by the unit tests: a scratch directory that
// stands in for a kernel tree (KFD sysfs, a cgroup2 mount) or holds capture
// files, and whole-file read/write.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "common/host_paths.h"

namespace gpuq {

/// Writes `content` to `path` as a file's whole content (binary, truncating),
/// creating missing parent directories: a sysfs or cgroupfs attribute file,
/// or a capture on disk.
inline void WriteFile(const std::string& path, const std::string& content) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

/// The whole content of `path`, or "" if it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

/// A fresh directory under $TMPDIR (/tmp if unset), removed with everything
/// in it at scope exit. Tests build fake kernel trees in it (KFD sysfs, cgroup
/// mounts) so inode numbers and directory races are real. If mkdtemp fails,
/// the test fails and path() is empty (Write and MakeDir then do nothing).
class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
        "/gpuq_test_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) {
      path_ = pattern;
    } else {
      ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
    }
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  /// path()/rel.
  std::string File(const std::string& rel) const { return path_ + "/" + rel; }

  /// Writes `content` to path()/rel, creating parent directories.
  void Write(const std::string& rel, const std::string& content) const {
    if (!path_.empty()) WriteFile(File(rel), content);
  }

  /// Creates path()/rel and any missing parents.
  void MakeDir(const std::string& rel) const {
    if (!path_.empty()) std::filesystem::create_directories(File(rel));
  }

 private:
  std::string path_;
};

/// The inode number of `path` (a cgroup directory's is its cgroup id);
/// fails the test if it cannot be stat'ed.
inline uint64_t InodeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

/// The KFD sysfs directory of the fixture host (tests/fixtures/root).
inline std::string FixtureKfd() {
  return HostPaths::FromHostRoot(GPUQ_FIXTURE_ROOT).Kfd();
}

}  // namespace gpuq

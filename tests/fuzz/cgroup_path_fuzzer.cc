// libFuzzer harness: the cgroup path parser (resolver/cgroup_path.cc) and
// the /proc/<pid>/cgroup reader (resolver/proc_cgroup.cc). Input: the
// content of a /proc/<pid>/cgroup file (also parsed whole, as one path).
// Whatever the path, an identity is either the host's (all empty) or a
// 64-hex container id with its runtime; a pod UID is 32 hex digits or a
// dashed UUID.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "resolver/cgroup_path.h"
#include "resolver/proc_cgroup.h"

namespace {

std::string g_procfs;
constexpr uint32_t kPid = 4242;

void RemoveDir() {
  std::error_code ignored;
  std::filesystem::remove_all(g_procfs, ignored);
}

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void Check(std::string_view path) {
  const gpuq::ContainerIdentity id = gpuq::ParseCgroupPath(path);
  bool ok = true;
  if (id.InContainer()) {
    ok = id.container_id.size() == 64 && IsLowerHex(id.container_id) &&
         !id.runtime.empty() && id.ShortId() == id.container_id.substr(0, 12);
  } else {
    ok = id.runtime.empty() && id.ShortId().empty();
  }
  if (!id.pod_uid.empty()) {
    const std::string& uid = id.pod_uid;
    const bool dashed = uid.size() == 36 && uid[8] == '-' && uid[13] == '-' &&
                        uid[18] == '-' && uid[23] == '-';
    ok = ok && (dashed || (uid.size() == 32 && IsLowerHex(uid)));
  }
  if (!ok) {
    std::fprintf(
        stderr, "bad identity of '%.*s': id '%s' runtime '%s' pod '%s'\n",
        static_cast<int>(path.size()), path.data(), id.container_id.c_str(),
        id.runtime.c_str(), id.pod_uid.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/gpuq-cgroup-fuzz.XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_procfs = templ;
  std::atexit(RemoveDir);
  std::filesystem::create_directory(g_procfs + "/" + std::to_string(kPid));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(text);
  {
    std::ofstream out(g_procfs + "/" + std::to_string(kPid) + "/cgroup",
                      std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  if (const auto v2 = gpuq::CgroupPathOfPid(g_procfs, kPid)) Check(*v2);
  if (const auto v1 = gpuq::V1CgroupPathOfPid(g_procfs, kPid)) Check(*v1);
  return 0;
}

// `check`'s hook table (cli/probe_table.h): hooks not attached for the same
// reason fold into one line where none is attached; otherwise a row each.
#include "cli/probe_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuq {
namespace {

ProbeStatus HookStatus(const std::string& probe, const std::string& function,
                       bool attached, const std::string& detail) {
  return {probe,  function,    attached ? "fentry" : "none",    attached,
          detail, "lifecycle", attached ? "btf-fentry" : "none"};
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(ProbeTableTest, NoneAttachedFoldsTheHooksAlike) {
  std::vector<ProbeStatus> status;
  for (int i = 0; i < 29; ++i) {
    status.push_back(HookStatus("hook_" + std::to_string(i),
                                "function_" + std::to_string(i), false,
                                "amdgpu is not loaded"));
  }
  status.push_back(HookStatus("exit_read", "exit_mm_release", false,
                              "not needed: no function hook carries creates"));
  const std::string out = RenderProbeTable(status);
  EXPECT_EQ(Occurrences(out, "amdgpu is not loaded"), 1u) << out;
  EXPECT_NE(out.find("29 hooks: not attached (mode none, tier none): amdgpu "
                     "is not loaded\n"),
            std::string::npos)
      << out;
  // Each hook and its function once; the odd one out keeps its row.
  for (int i = 0; i < 29; ++i) {
    const std::string hook =
        "hook_" + std::to_string(i) + " (function_" + std::to_string(i) + ")";
    EXPECT_EQ(Occurrences(out, hook), 1u) << hook << "\n" << out;
  }
  EXPECT_NE(out.find("PROBE      FUNCTION         MODE  ATTACHED  TIER  "
                     "DETAIL\nexit_read  exit_mm_release  none  no        "
                     "none  not needed"),
            std::string::npos)
      << out;
  size_t start = 0;
  for (size_t end = out.find('\n'); end != std::string::npos;
       start = end + 1, end = out.find('\n', start)) {
    EXPECT_LE(end - start, 120u) << out.substr(start, end - start);
  }
}

TEST(ProbeTableTest, FewAlikeStayRows) {
  const std::vector<ProbeStatus> status = {
      HookStatus("a", "fa", false, "needs root"),
      HookStatus("b", "fb", false, "needs root")};
  const std::string out = RenderProbeTable(status);
  EXPECT_EQ(Occurrences(out, "needs root"), 2u) << out;
  EXPECT_EQ(out.find("hooks:"), std::string::npos) << out;
}

// Where one is attached each hook keeps its row: what it attached to, or
// why it did not, is what check answers (and the kernel tier reads).
TEST(ProbeTableTest, AnyAttachedKeepsEveryRow) {
  std::vector<ProbeStatus> status = {
      HookStatus("queue_create", "kfd_procfs_add_queue", true, "")};
  for (int i = 0; i < 5; ++i) {
    status.push_back(HookStatus("mes_" + std::to_string(i), "f", false,
                                "not in this kernel"));
  }
  const std::string out = RenderProbeTable(status);
  EXPECT_EQ(Occurrences(out, "not in this kernel"), 5u) << out;
  EXPECT_EQ(out.find("hooks:"), std::string::npos) << out;
  EXPECT_NE(out.find("\nqueue_create  kfd_procfs_add_queue  fentry  yes"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace gpuq

// What the planner reads from /proc/kallsyms (loader/kallsyms_scan.cc):
// text symbols only, compiler clones by the function they copy, amdgpu's
// symbols by their module, and the file read in blocks, so a symbol split
// across two reads, a last line without a newline and a line longer than a
// block are all read as the kernel wrote them.
#include "loader/kallsyms_scan.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test_support.h"

namespace gpuq {
namespace {

const std::vector<std::string> kWanted = {
    "kfd_procfs_add_queue", "unmap_queues_cpsch", "kfd_ioctl_create_queue",
    "exit_mm_release", "uninit_queue"};

KallsymsScan Scan(const std::string& text) {
  TempDir dir;
  const std::string path = dir.path() + "/kallsyms";
  WriteFile(path, text);
  return ScanKallsyms(path, kWanted);
}

TEST(KallsymsScanTest, TextSymbolsClonesAndTheModule) {
  const KallsymsScan scan = Scan(
      "ffffffff81000000 T _stext\n"
      "ffffffffc0a01230 t kfd_procfs_add_queue\t[amdgpu]\n"
      "ffffffffc0a01240 t unmap_queues_cpsch.constprop.0\t[amdgpu]\n"
      "ffffffffc0a01250 d kfd_ioctl_create_queue\t[amdgpu]\n"
      "ffffffffc0a01260 t kfd_ioctl_create_process\t[amdgpu]\n"
      "ffffffffc0a01270 t uninit_queue.isra.0\t[amdgpu]\n"
      "ffffffffc0a01280 t uninit_queue.cold\t[amdgpu]\n"
      "0000000000000000 T exit_mm_release");
  EXPECT_EQ(scan.present,
            (std::set<std::string>{"kfd_procfs_add_queue", "exit_mm_release"}))
      << "a data symbol (d) or a clone alone is not the function";
  EXPECT_EQ(scan.clones,
            (std::map<std::string, std::string>{
                {"unmap_queues_cpsch", "unmap_queues_cpsch.constprop.0"},
                {"uninit_queue", "uninit_queue.isra.0"}}));
  EXPECT_TRUE(scan.amdgpu_loaded);
  EXPECT_TRUE(scan.kfd_create_process);
}

TEST(KallsymsScanTest, WithoutAmdgpu) {
  const KallsymsScan scan = Scan(
      "ffffffff81000000 T exit_mm_release\n"
      "ffffffff81000010 T kfd_ioctl_create_process\n"
      "ffffffffc0001000 t kfd_procfs_add_queue\t[notamdgpu]\n");
  EXPECT_FALSE(scan.amdgpu_loaded);
  EXPECT_FALSE(scan.kfd_create_process) << "only amdgpu's counts";
  EXPECT_EQ(scan.present,
            (std::set<std::string>{"exit_mm_release", "kfd_procfs_add_queue"}));
}

// The scanner reads 256 KiB at a time: a symbol line across that boundary,
// and one just after a line longer than a whole block, are still read.
TEST(KallsymsScanTest, LinesAcrossReadsAndAnOverlongLine) {
  constexpr size_t kBlock = 256 * 1024;
  std::string text;
  const std::string filler = "ffffffff81000000 t some_function_name\n";
  while (text.size() + filler.size() < kBlock - 10) text += filler;
  text += "ffffffffc0a01230 t kfd_procfs_add_queue\t[amdgpu]\n";
  ASSERT_GT(text.size(), kBlock);
  text += std::string(kBlock + 100, 'x') + "\n";
  text += "ffffffffc0a01240 t uninit_queue\t[amdgpu]\n";
  const KallsymsScan scan = Scan(text);
  EXPECT_EQ(scan.present,
            (std::set<std::string>{"kfd_procfs_add_queue", "uninit_queue"}));
}

TEST(KallsymsScanTest, UnreadableScansAsEmpty) {
  TempDir dir;
  KallsymsScan scan = ScanKallsyms(dir.path() + "/missing", kWanted);
  EXPECT_TRUE(scan.present.empty());
  EXPECT_FALSE(scan.amdgpu_loaded);
  // A FIFO with no writer reads as empty rather than hanging.
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  scan = ScanKallsyms(fifo, kWanted);
  EXPECT_TRUE(scan.present.empty());
  scan = ScanKallsyms(dir.path(), kWanted);  // a directory
  EXPECT_TRUE(scan.present.empty());
}

}  // namespace
}  // namespace gpuq

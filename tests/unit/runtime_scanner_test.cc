// RuntimeScanner on a procfs fixture: which processes' maps it reads again.
// The real /proc is covered by tests/bpf/doorbell_test.cc (the stand-in
// library mapped and dlopen()ed by real processes).
#include "submissions/runtime_scanner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.h"

namespace gpuq {
namespace {

class RuntimeScannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.MakeDir("proc");
    dir_.Write("lib/libhsa-runtime64.so.1", "");
    dir_.Write("lib/libc.so.6", "");
    dir_.Write("bin/python3", "");
    dir_.Write("bin/sh", "");
  }

  /// A process under the fixture's procfs: its program, size and maps.
  void Process(int pid, const std::string& exe, int pages, bool runtime) {
    const std::string p = "proc/" + std::to_string(pid);
    dir_.MakeDir(p);
    std::filesystem::remove(dir_.File(p + "/exe"));
    std::filesystem::create_symlink(dir_.File("bin/" + exe),
                                    dir_.File(p + "/exe"));
    dir_.Write(p + "/statm", std::to_string(pages) + " 10 5 1 0 20 0\n");
    std::string maps = "7f0000000000-7f0000001000 r-xp 00000000 08:01 44 " +
                       dir_.File("lib/libc.so.6") + "\n";
    if (runtime) {
      maps += "7f0000002000-7f0000003000 r-xp 00000000 08:01 42 " +
              dir_.File("lib/libhsa-runtime64.so.1") + "\n";
    }
    dir_.Write(p + "/maps", maps);
  }

  std::string Runtime() const { return dir_.File("lib/libhsa-runtime64.so.1"); }

  TempDir dir_;
};

TEST_F(RuntimeScannerTest, ReadsAProcessOnceWhileNothingNewCanBeInItsMaps) {
  Process(10, "python3", 100, true);  // ROCr linked: found at the first read
  Process(11, "sh", 50, false);       // no ROCr
  RuntimeScanner scanner(dir_.File("proc"));
  EXPECT_EQ(scanner.Rescan({}), std::vector<std::string>{Runtime()});
  EXPECT_EQ(scanner.maps_read(), 2u);
  EXPECT_TRUE(scanner.Rescan({}).empty());
  EXPECT_EQ(scanner.maps_read(), 2u) << "unchanged processes read again";
  // A process whose maps held ROCr is not read when it grows; one whose
  // maps did not is (it may have dlopen()ed ROCr).
  Process(10, "python3", 900, true);
  Process(11, "sh", 60, false);
  EXPECT_TRUE(scanner.Rescan({}).empty());
  EXPECT_EQ(scanner.maps_read(), 3u);
}

TEST_F(RuntimeScannerTest, FindsALibraryDlopenedOrExeced) {
  Process(20, "python3", 100, false);
  Process(21, "sh", 50, false);
  RuntimeScanner scanner(dir_.File("proc"));
  EXPECT_TRUE(scanner.Rescan({}).empty());
  Process(20, "python3", 400, true);  // dlopen: it grew
  Process(21, "python3", 50, true);   // exec: same size, another program
  EXPECT_EQ(scanner.Rescan({}), std::vector<std::string>{Runtime()});
  EXPECT_EQ(scanner.maps_read(), 4u);
}

TEST_F(RuntimeScannerTest, AQueueOwnerIsReadOnceMoreWithoutWaitingForARescan) {
  Process(30, "python3", 100, false);
  RuntimeScanner scanner(dir_.File("proc"));
  EXPECT_TRUE(scanner.Rescan({}).empty());
  // It dlopen()ed ROCr and created a queue before its size was seen again
  // (the stamp cannot tell: same size here).
  Process(30, "python3", 100, true);
  EXPECT_TRUE(scanner.Rescan({}).empty());
  EXPECT_EQ(scanner.ScanQueueOwners({30}), std::vector<std::string>{Runtime()});
  EXPECT_TRUE(scanner.ScanQueueOwners({30}).empty());
  EXPECT_EQ(scanner.maps_read(), 2u);
  // An owner read by Rescan is not read by ScanQueueOwners again.
  Process(31, "sh", 10, false);
  EXPECT_TRUE(scanner.Rescan({31}).empty());
  EXPECT_TRUE(scanner.ScanQueueOwners({31}).empty());
  EXPECT_EQ(scanner.maps_read(), 3u);
}

TEST_F(RuntimeScannerTest, AReusedPidIsReadAgain) {
  Process(40, "python3", 100, false);
  RuntimeScanner scanner(dir_.File("proc"));
  EXPECT_TRUE(scanner.Rescan({}).empty());
  std::filesystem::remove_all(dir_.File("proc/40"));
  EXPECT_TRUE(scanner.Rescan({}).empty());  // gone: forgotten
  Process(40, "python3", 100, true);        // same program and size
  EXPECT_EQ(scanner.Rescan({}), std::vector<std::string>{Runtime()});
  EXPECT_EQ(scanner.maps_read(), 2u);
}

TEST_F(RuntimeScannerTest, FindHsaRuntimesReadsEveryProcess) {
  Process(50, "python3", 100, true);
  Process(51, "sh", 50, false);
  EXPECT_EQ(FindHsaRuntimes(dir_.File("proc")),
            std::vector<std::string>{Runtime()});
  EXPECT_TRUE(FindHsaRuntimes(dir_.File("missing")).empty());
}

}  // namespace
}  // namespace gpuq

// Doorbell uprobes (bpf/doorbell.bpf.c via DoorbellCounter) on this host,
// against the stand-in libhsa-runtime64.so.1 of tests/bpf/hsa_standin and a
// caller that lays out amd_signal_t / amd_queue_t as ROCr does. Uprobes
// attach here; the tests need root and skip with a message without it.
//
// The probes attach for all processes, so tests running in parallel see each
// other's callers: every assertion is about the callers a test started (by
// tgid), which is exact whatever else runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "loader/kernel_features.h"
#include "sources/doorbell_counter.h"

namespace gpuq {
namespace {

#define REQUIRE_BPF_PRIVILEGES()                                            \
  if (!HasBpfPrivileges()) {                                                \
    GTEST_SKIP() << "needs root (CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN) to " \
                    "load BPF programs and attach uprobes";                 \
  }

using Fields = std::map<std::string, std::string>;

/// One output line of the caller, "k=v k=v ...", as a map.
Fields ParseLine(const std::string& line) {
  Fields f;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

uint64_t Num(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? ~0ull : std::stoull(it->second, nullptr, 0);
}

/// A running hsa_standin_caller, its stdout and stdin as pipes.
class Caller {
 public:
  /// Starts the caller with `args`; if `cgroup_dir` is set the child moves
  /// itself into it before exec.
  explicit Caller(const std::vector<std::string>& args,
                  const std::string& cgroup_dir = "") {
    int out[2];
    int in[2];
    if (pipe(out) != 0 || pipe(in) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(in[0], 0);
      close(out[0]);
      close(in[1]);
      if (!cgroup_dir.empty()) {
        std::ofstream procs(cgroup_dir + "/cgroup.procs");
        procs << "0" << std::flush;
        if (!procs) _exit(90);
      }
      std::vector<char*> argv;
      std::string exe = GPUQ_HSA_CALLER;
      argv.push_back(exe.data());
      std::vector<std::string> copy = args;
      for (std::string& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(exe.c_str(), argv.data());
      _exit(91);
    }
    close(out[1]);
    close(in[0]);
    out_ = fdopen(out[0], "r");
    in_ = in[1];
  }
  ~Caller() {
    if (in_ >= 0) close(in_);
    if (out_ != nullptr) fclose(out_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }

  /// Reads lines until one starting with `prefix` (or EOF); returns them all.
  std::vector<Fields> ReadUntil(const std::string& prefix) {
    std::vector<Fields> lines;
    char buf[4096];
    while (out_ != nullptr && fgets(buf, sizeof(buf), out_) != nullptr) {
      lines.push_back(ParseLine(buf));
      if (std::strncmp(buf, prefix.c_str(), prefix.size()) == 0) break;
    }
    return lines;
  }
  /// Lets a wait_stdin=1 caller ring.
  void Go() {
    const char c = 'g';
    EXPECT_EQ(write(in_, &c, 1), 1);
  }
  /// Reads the rest of the output and waits; returns the exit status.
  int Finish(std::vector<Fields>* lines) {
    std::vector<Fields> rest = ReadUntil("\x01");  // i.e. to EOF
    if (lines != nullptr) lines->insert(lines->end(), rest.begin(), rest.end());
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  int in_ = -1;
  bool reaped_ = false;
};

/// What one caller run said it did.
struct CallerRun {
  uint32_t pid = 0;
  Fields summary;                     // the pid=... line
  std::map<uint64_t, uint64_t> rung;  // doorbell handle -> doorbells
  uint64_t completion_handle = 0;
};

CallerRun RunCaller(const std::vector<std::string>& args,
                    const std::string& cgroup_dir = "") {
  Caller caller(args, cgroup_dir);
  std::vector<Fields> lines;
  EXPECT_EQ(caller.Finish(&lines), 0);
  CallerRun run;
  run.pid = static_cast<uint32_t>(caller.pid());
  for (const Fields& f : lines) {
    if (f.count("pid") && f.count("doorbells")) {
      run.summary = f;
      run.completion_handle = Num(f, "completion_handle");
    }
    if (f.count("queue") && f.count("doorbells"))  // the "rung ..." lines
      run.rung[Num(f, "handle")] = Num(f, "doorbells");
  }
  EXPECT_EQ(Num(run.summary, "pid"), run.pid);
  return run;
}

std::vector<DoorbellCount> CountsOf(const DoorbellCounter& counter,
                                    uint32_t tgid) {
  std::vector<DoorbellCount> out;
  for (const DoorbellCount& c : counter.Read()) {
    if (c.tgid == tgid) out.push_back(c);
  }
  return out;
}

std::unique_ptr<DoorbellCounter> OpenOnStandIn(std::string* error) {
  DoorbellCounter::Options options;
  options.libraries = {GPUQ_HSA_STANDIN};
  options.scan_processes = false;
  return DoorbellCounter::Open(options, error);
}

/// Checks a process's counts against what it said it rang: one entry per
/// doorbell handle with exactly its doorbells, none for the completion
/// signal, and packet types summing as rung.
void ExpectCountsMatch(const DoorbellCounter& counter, const CallerRun& run) {
  const std::vector<DoorbellCount> counts = CountsOf(counter, run.pid);
  ASSERT_EQ(counts.size(), run.rung.size()) << "pid " << run.pid;
  uint64_t dispatch = 0, barrier = 0, other = 0, unreadable = 0;
  for (const DoorbellCount& c : counts) {
    ASSERT_TRUE(run.rung.count(c.handle)) << std::hex << c.handle;
    EXPECT_EQ(c.doorbells, run.rung.at(c.handle)) << std::hex << c.handle;
    EXPECT_NE(c.handle, run.completion_handle);
    EXPECT_EQ(c.dispatch + c.barrier + c.other + c.unreadable, c.doorbells);
    dispatch += c.dispatch;
    barrier += c.barrier;
    other += c.other;
    unreadable += c.unreadable;
  }
  EXPECT_EQ(dispatch, Num(run.summary, "dispatch"));
  EXPECT_EQ(barrier, Num(run.summary, "barrier"));
  EXPECT_EQ(other, Num(run.summary, "vendor"));
  EXPECT_EQ(unreadable, 0u);
}

uint64_t Inode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(DoorbellElfTest, ResolvesVersionedExportsAndTheReleaseAlias) {
  std::vector<ElfFunction> functions;
  std::string error;
  ASSERT_TRUE(
      ReadElfFunctions(GPUQ_HSA_STANDIN,
                       {"hsa_signal_store_screlease",
                        "hsa_signal_store_relaxed", "hsa_signal_store_release"},
                       &functions, &error))
      << error;
  std::map<std::string, uint64_t> offset;
  for (const ElfFunction& f : functions) offset[f.name] = f.file_offset;
  ASSERT_EQ(offset.size(), 3u);
  EXPECT_EQ(offset["hsa_signal_store_release"],
            offset["hsa_signal_store_screlease"]);
  EXPECT_NE(offset["hsa_signal_store_relaxed"],
            offset["hsa_signal_store_screlease"]);

  // The stand-in exports them versioned, as libhsa-runtime64 does.
  const std::string cmd =
      std::string("readelf -W --dyn-syms ") + GPUQ_HSA_STANDIN + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) text += buf;
  pclose(p);
  for (const char* name : {"hsa_signal_store_screlease@@ROCR_1",
                           "hsa_signal_store_relaxed@@ROCR_1",
                           "hsa_signal_store_release@@ROCR_1"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name << "\n" << text;
  }
}

TEST(DoorbellElfTest, RefusesANonElfFile) {
  std::vector<ElfFunction> functions;
  std::string error;
  EXPECT_FALSE(
      ReadElfFunctions("/proc/self/status", {"x"}, &functions, &error));
  EXPECT_NE(error.find("not an ELF"), std::string::npos) << error;
}

TEST(DoorbellScanTest, FindsLibrariesInAProcfsFixture) {
  char tmpl[] = "/tmp/gpuq-doorbell-procXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  ASSERT_EQ(mkdir((root + "/123").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/self").c_str(), 0755), 0);
  {
    std::ofstream maps(root + "/123/maps");
    maps << "7f0000000000-7f0000001000 r-xp 00000000 08:01 42 "
         << GPUQ_HSA_STANDIN << "\n"
         << "7f0000002000-7f0000003000 r--p 00000000 08:01 42 "
         << GPUQ_HSA_STANDIN << "\n"
         << "7f0000004000-7f0000005000 r-xp 00000000 08:01 43 "
            "/opt/rocm/lib/libhsa-runtime64.so.1.2 (deleted)\n"
         << "7f0000006000-7f0000007000 r-xp 00000000 08:01 44 "
            "/usr/lib/x86_64-linux-gnu/libc.so.6\n"
         << "7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0 [stack]\n";
  }
  const std::vector<std::string> found = FindHsaRuntimes(root);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], GPUQ_HSA_STANDIN);  // no 123/root: the path itself
  std::remove((root + "/123/maps").c_str());
  rmdir((root + "/123").c_str());
  rmdir((root + "/self").c_str());
  rmdir(root.c_str());
}

TEST(DoorbellScanTest, FindsTheLibraryAProcessMapped) {
  Caller caller({"wait_stdin=1"});
  caller.ReadUntil("ready");
  bool seen = false;
  for (const std::string& path : FindHsaRuntimes("/proc")) {
    seen |= Inode(path) == Inode(GPUQ_HSA_STANDIN);
  }
  EXPECT_TRUE(seen);
  caller.Go();
  EXPECT_EQ(caller.Finish(nullptr), 0);
}

TEST(DoorbellTest, CountsExactlyTheDoorbellsRungPerProcess) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  ASSERT_EQ(counter->Libraries().size(), 1u);
  ASSERT_TRUE(counter->Libraries()[0].attached);

  // Two processes, different counts; ring wraps (> 64 packets a queue),
  // the three entry points mixed, completion stores in between.
  const CallerRun a = RunCaller({"dispatch=150", "barrier=40", "vendor=9",
                                 "completions=77", "queues=2", "via=mix"});
  const CallerRun b =
      RunCaller({"dispatch=7", "barrier=3", "completions=11", "via=screlease"});
  // gfx7/8 LEGACY_DOORBELL signals are doorbells too.
  const CallerRun c =
      RunCaller({"dispatch=5", "barrier=2", "kind=-2", "via=relaxed"});
  ASSERT_EQ(a.rung.size(), 2u);
  EXPECT_EQ(Num(a.summary, "doorbells"), 199u);
  EXPECT_EQ(Num(a.summary, "completions"), 77u);
  ExpectCountsMatch(*counter, a);
  ExpectCountsMatch(*counter, b);
  ExpectCountsMatch(*counter, c);
  EXPECT_EQ(counter->Drops(), 0u);
}

TEST(DoorbellTest, CompletionSignalStoresAreIgnored) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  const CallerRun run = RunCaller({"completions=500"});
  EXPECT_EQ(Num(run.summary, "completions"), 500u);
  EXPECT_TRUE(CountsOf(*counter, run.pid).empty());
}

TEST(DoorbellTest, TheReleaseAliasIsProbedOnceAndNotDoubleCounted) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  std::string details;
  for (const std::string& d : counter->Libraries()[0].details)
    details += d + "\n";
  EXPECT_NE(details.find("hsa_signal_store_release: alias of "
                         "hsa_signal_store_screlease"),
            std::string::npos)
      << details;

  const CallerRun release =
      RunCaller({"dispatch=20", "barrier=5", "via=release"});
  const CallerRun screlease =
      RunCaller({"dispatch=20", "barrier=5", "via=screlease"});
  ExpectCountsMatch(*counter, release);
  ExpectCountsMatch(*counter, screlease);
  ASSERT_EQ(CountsOf(*counter, release.pid).size(), 1u);
  EXPECT_EQ(CountsOf(*counter, release.pid)[0].doorbells, 25u);
}

TEST(DoorbellTest, AttachingTheSameFileTwiceDoesNotDoubleCount) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  // Another path to the same inode (as /proc/<pid>/root/... would be).
  EXPECT_TRUE(counter->AttachLibrary(
      std::string("/proc/self/root") + GPUQ_HSA_STANDIN, &error))
      << error;
  EXPECT_EQ(counter->Libraries().size(), 1u);
  const CallerRun run = RunCaller({"dispatch=10", "via=mix"});
  ExpectCountsMatch(*counter, run);
}

TEST(DoorbellTest, KnownDoorbellsCountWhateverTheirKind) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  // InterceptQueue: a doorbell whose amd_signal_t says USER. Only the queue
  // user space declared is counted; its packet type is not read.
  Caller caller(
      {"dispatch=12", "barrier=4", "queues=2", "kind=1", "wait_stdin=1"});
  std::vector<Fields> lines = caller.ReadUntil("ready");
  uint64_t known = 0;
  uint64_t unknown = 0;
  for (const Fields& f : lines) {
    if (f.count("queue"))
      (Num(f, "queue") == 0 ? known : unknown) = Num(f, "handle");
  }
  ASSERT_NE(known, 0u);
  ASSERT_NE(unknown, 0u);
  const uint32_t pid = static_cast<uint32_t>(caller.pid());
  ASSERT_TRUE(counter->AddKnownDoorbell(pid, known));
  caller.Go();
  std::vector<Fields> rest;
  ASSERT_EQ(caller.Finish(&rest), 0);
  const std::vector<DoorbellCount> counts = CountsOf(*counter, pid);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].handle, known);
  EXPECT_EQ(counts[0].doorbells, 8u);  // 16 packets round-robin on 2 queues
  EXPECT_EQ(counts[0].unreadable, 8u);

  counter->ForgetProcess(pid);
  EXPECT_TRUE(CountsOf(*counter, pid).empty());
}

TEST(DoorbellTest, RescanAttachesToALibraryAProcessMapped) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  DoorbellCounter::Options options;  // no explicit path: /proc only
  auto counter = DoorbellCounter::Open(options, &error);
  ASSERT_NE(counter, nullptr) << error;
  Caller caller({"dispatch=30", "barrier=6", "completions=9", "wait_stdin=1"});
  std::vector<Fields> lines = caller.ReadUntil("ready");
  counter->Rescan();
  bool attached = false;
  for (const DoorbellLibrary& lib : counter->Libraries()) {
    if (Inode(lib.path) == Inode(GPUQ_HSA_STANDIN)) attached = lib.attached;
  }
  ASSERT_TRUE(attached);
  caller.Go();
  ASSERT_EQ(caller.Finish(&lines), 0);
  const std::vector<DoorbellCount> counts =
      CountsOf(*counter, static_cast<uint32_t>(caller.pid()));
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].doorbells, 36u);
  EXPECT_EQ(counts[0].dispatch, 30u);
  EXPECT_EQ(counts[0].barrier, 6u);
}

/// The cgroup v2 directory of this process (hybrid hosts: the unified mount).
std::string OwnCgroupV2Dir(std::string* root) {
  for (const char* r : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    std::ifstream controllers(std::string(r) + "/cgroup.controllers");
    if (!controllers) continue;
    std::ifstream self("/proc/self/cgroup");
    std::string line;
    while (std::getline(self, line)) {
      if (line.rfind("0::", 0) == 0) {
        *root = r;
        return std::string(r) + line.substr(3);
      }
    }
  }
  return "";
}

TEST(DoorbellTest, CountsCarryTheRingersCgroup) {
  REQUIRE_BPF_PRIVILEGES();
  std::string root;
  const std::string own = OwnCgroupV2Dir(&root);
  if (own.empty()) GTEST_SKIP() << "no cgroup v2 hierarchy mounted";
  const std::string child =
      root + "/gpuq-doorbell-test-" + std::to_string(getpid());
  if (mkdir(child.c_str(), 0755) != 0) {
    GTEST_SKIP() << "cannot create a child cgroup " << child << ": "
                 << std::strerror(errno);
  }
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  const CallerRun inside = RunCaller({"dispatch=13", "completions=3"}, child);
  const CallerRun outside = RunCaller({"dispatch=4", "barrier=1"});
  ExpectCountsMatch(*counter, inside);
  ExpectCountsMatch(*counter, outside);
  const auto in_counts = CountsOf(*counter, inside.pid);
  const auto out_counts = CountsOf(*counter, outside.pid);
  ASSERT_EQ(in_counts.size(), 1u);
  ASSERT_EQ(out_counts.size(), 1u);
  // A cgroup v2 id is its directory's inode number.
  EXPECT_EQ(in_counts[0].cgroup_id, Inode(child));
  EXPECT_EQ(out_counts[0].cgroup_id, Inode(own));
  EXPECT_NE(in_counts[0].cgroup_id, out_counts[0].cgroup_id);
  EXPECT_EQ(rmdir(child.c_str()), 0) << std::strerror(errno);
}

}  // namespace
}  // namespace gpuq

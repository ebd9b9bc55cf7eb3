// Doorbell uprobes (bpf/doorbell.bpf.c via DoorbellCounter) on this host,
// against the stand-in libhsa-runtime64.so.1 of tests/bpf/hsa_standin and a
// caller that lays out amd_signal_t / amd_queue_t as ROCr does. Uprobes
// attach here; the tests need root and skip with a message without it.
//
// The probes attach for all processes, so tests running in parallel see each
// other's callers: every assertion is about the callers a test started (by
// tgid), which is exact whatever else runs.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "loader/kernel_features.h"
#include "submissions/doorbell_counter.h"
#include "submissions/doorbell_poller.h"

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
  /// Starts the caller `exe` with `args`; if `cgroup_dir` is set the child
  /// moves itself into it before exec.
  explicit Caller(const std::vector<std::string>& args,
                  const std::string& cgroup_dir = "",
                  const std::string& exe = GPUQ_HSA_CALLER) {
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
      std::string exe_copy = exe;
      argv.push_back(exe_copy.data());
      std::vector<std::string> copy = args;
      for (std::string& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(exe_copy.c_str(), argv.data());
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
  Fields summary;                        // the pid=... line
  std::map<uint64_t, uint64_t> rung;     // doorbell handle -> rings
  std::map<uint64_t, uint64_t> packets;  // doorbell handle -> packets
  uint64_t completion_handle = 0;
};

/// Parses a caller's output lines.
CallerRun ParseRun(uint32_t pid, const std::vector<Fields>& lines) {
  CallerRun run;
  run.pid = pid;
  for (const Fields& f : lines) {
    if (f.count("pid") && f.count("doorbells")) {
      run.summary = f;
      run.completion_handle = Num(f, "completion_handle");
    }
    if (f.count("queue") && f.count("doorbells")) {  // the "rung ..." lines
      run.rung[Num(f, "handle")] = Num(f, "doorbells");
      run.packets[Num(f, "handle")] = Num(f, "packets");
    }
  }
  EXPECT_EQ(Num(run.summary, "pid"), run.pid);
  return run;
}

CallerRun RunCaller(const std::vector<std::string>& args,
                    const std::string& cgroup_dir = "") {
  Caller caller(args, cgroup_dir);
  std::vector<Fields> lines;
  EXPECT_EQ(caller.Finish(&lines), 0);
  return ParseRun(static_cast<uint32_t>(caller.pid()), lines);
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
/// doorbell handle with exactly its rings and packets, none for the
/// completion signal, and packet types as written.
void ExpectCountsMatch(const DoorbellCounter& counter, const CallerRun& run) {
  const std::vector<DoorbellCount> counts = CountsOf(counter, run.pid);
  ASSERT_EQ(counts.size(), run.rung.size()) << "pid " << run.pid;
  uint64_t dispatch = 0, barrier = 0, other = 0, unreadable = 0, ext = 0;
  uint64_t barrier_dispatches = 0;
  for (const DoorbellCount& c : counts) {
    ASSERT_TRUE(run.rung.count(c.handle)) << std::hex << c.handle;
    EXPECT_EQ(c.doorbells, run.rung.at(c.handle)) << std::hex << c.handle;
    EXPECT_NE(c.handle, run.completion_handle);
    uint64_t typed = 0;
    for (uint64_t n : c.by_packet) typed += n;
    EXPECT_EQ(typed, run.packets.at(c.handle)) << std::hex << c.handle;
    dispatch += c.by_packet[GPUQ_PACKET_DISPATCH];
    barrier += c.by_packet[GPUQ_PACKET_BARRIER];
    other += c.by_packet[GPUQ_PACKET_OTHER];
    unreadable += c.by_packet[GPUQ_PACKET_UNREADABLE];
    ext += c.by_packet[GPUQ_PACKET_EXT_DISPATCH];
    barrier_dispatches += c.barrier_dispatches;
  }
  EXPECT_EQ(dispatch, Num(run.summary, "dispatch"));
  EXPECT_EQ(barrier, Num(run.summary, "barrier"));
  EXPECT_EQ(other, Num(run.summary, "other"));
  EXPECT_EQ(ext, Num(run.summary, "ext"));
  EXPECT_EQ(barrier_dispatches, Num(run.summary, "barrier_dispatches"));
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
  const CallerRun a =
      RunCaller({"dispatch=150", "barrier=40", "vendor=9", "ext=21",
                 "completions=77", "queues=2", "via=mix"});
  const CallerRun b =
      RunCaller({"dispatch=7", "barrier=3", "completions=11", "via=screlease"});
  // gfx7/8 LEGACY_DOORBELL signals are doorbells too.
  const CallerRun c =
      RunCaller({"dispatch=5", "barrier=2", "kind=-2", "via=relaxed"});
  ASSERT_EQ(a.rung.size(), 2u);
  EXPECT_EQ(Num(a.summary, "doorbells"), 220u);
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

// The probe trusts a doorbell's cached queue until a queue is destroyed
// (bpf/doorbell.bpf.c): after hsa_queue_destroy or hsa_shut_down returns, a
// store on the doorbell signal's memory, handed out again as a completion
// signal, reads the signal again and is no doorbell. The control, memory
// reused with neither call (no ROCr frees a doorbell signal that way), shows
// what the return probes prevent: the cache counts those stores.
TEST(DoorbellTest, ADestroyedQueuesSignalReusedForCompletionsIsNoDoorbell) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  for (const char* retire : {"retire=destroy", "retire=shutdown"}) {
    const CallerRun run = RunCaller({"dispatch=9", "barrier=4", "queues=2",
                                     "completions=3", "reuse=25", retire});
    EXPECT_EQ(Num(run.summary, "reused"), 50u) << retire;
    ExpectCountsMatch(*counter, run);
  }
  const CallerRun bad = RunCaller(
      {"dispatch=9", "barrier=4", "queues=2", "reuse=25", "retire=none"});
  const std::vector<DoorbellCount> counts = CountsOf(*counter, bad.pid);
  uint64_t doorbells = 0;
  for (const DoorbellCount& c : counts) doorbells += c.doorbells;
  EXPECT_EQ(doorbells, 13u + 50u);
  EXPECT_EQ(counter->Drops(), 0u);
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
  EXPECT_EQ(counts[0].by_packet[GPUQ_PACKET_UNREADABLE], 8u);

  // What the agent does once an exited process's final counts are read.
  EXPECT_TRUE(counter->DeleteCount(pid, known));
  EXPECT_TRUE(counter->RemoveKnownDoorbell(pid, known));
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
  counter->Rescan({});
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
  EXPECT_EQ(counts[0].by_packet[GPUQ_PACKET_DISPATCH], 30u);
  EXPECT_EQ(counts[0].by_packet[GPUQ_PACKET_BARRIER], 6u);
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

// ---- DoorbellPoller: records for the model -------------------------------

/// A temporary directory, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gpuq-doorbell-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A private copy of the stand-in (its own inode): no other process maps
/// it, so everything its probes see comes from the test's own callers.
std::string CopyStandIn(const TempDir& dir) {
  const std::string copy = dir.path() + "/libhsa-runtime64.so.1";
  std::filesystem::copy_file(GPUQ_HSA_STANDIN, copy);
  return copy;
}

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

using Records = std::vector<gpuq_doorbell_count_record>;
using FindFn = std::function<std::optional<DoorbellOwner>(uint32_t, uint64_t)>;

std::optional<DoorbellOwner> FindNothing(uint32_t, uint64_t) {
  return std::nullopt;
}

/// One Poll; the records of process `tgid` (other tests' callers may ring
/// the same library concurrently), keyed by handle. Every record is checked
/// for the fields that do not depend on the scenario.
std::map<uint64_t, gpuq_doorbell_count_record> PollFor(
    DoorbellPoller& poller, uint32_t tgid, const FindFn& find = FindNothing) {
  std::map<uint64_t, gpuq_doorbell_count_record> out;
  const uint64_t before = NowNs();
  poller.Poll(find, [&](const Event& event) {
    const auto* r = std::get_if<gpuq_doorbell_count_record>(&event);
    ASSERT_NE(r, nullptr) << "Poll emitted another event type";
    EXPECT_EQ(r->hdr.type, GPUQ_EV_DOORBELL_COUNT);
    EXPECT_EQ(r->hdr.size, sizeof(*r));
    if (r->hdr.tgid != tgid) return;
    EXPECT_GE(r->hdr.ts_ns, before);
    EXPECT_LE(r->hdr.ts_ns, NowNs());
    // Every ring of these single-threaded callers publishes at least the
    // packet it rings.
    uint64_t sum = 0;
    for (uint64_t n : r->by_packet) sum += n;
    EXPECT_GE(sum, r->doorbells);
    EXPECT_TRUE(out.emplace(r->doorbell_handle, *r).second)
        << "two records for one doorbell in one Poll";
  });
  return out;
}

std::unique_ptr<DoorbellPoller> OpenPoller(
    const std::vector<std::string>& libraries, bool scan, std::string* error) {
  DoorbellPoller::Options options;
  options.libraries = libraries;
  options.scan_processes = scan;
  return DoorbellPoller::Open(options, error);
}

/// Handles a caller printed before ringing ("queue=N handle=0x...").
std::vector<uint64_t> Handles(const std::vector<Fields>& lines) {
  std::vector<uint64_t> handles;
  for (const Fields& f : lines) {
    if (f.count("queue") && !f.count("doorbells"))
      handles.push_back(Num(f, "handle"));
  }
  return handles;
}

/// A child cgroup v2 directory for one test, removed at the end.
class TestCgroup {
 public:
  explicit TestCgroup(const std::string& name) {
    std::string root;
    if (OwnCgroupV2Dir(&root).empty()) {
      why_ = "no cgroup v2 hierarchy mounted";
      return;
    }
    const std::string dir =
        root + "/gpuq-doorbell-" + name + "-" + std::to_string(getpid());
    if (mkdir(dir.c_str(), 0755) != 0) {
      why_ = "cannot create the cgroup " + dir + ": " + std::strerror(errno);
      return;
    }
    path_ = dir;
  }
  ~TestCgroup() {
    if (!path_.empty()) rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  const std::string& why() const { return why_; }

 private:
  std::string path_;
  std::string why_;
};

TEST(DoorbellPollerTest, EmitsExactCumulativeCountsPerProcessAndCgroup) {
  REQUIRE_BPF_PRIVILEGES();
  TestCgroup cg_a("a");
  TestCgroup cg_b("b");
  if (cg_a.path().empty()) GTEST_SKIP() << cg_a.why();
  if (cg_b.path().empty()) GTEST_SKIP() << cg_b.why();
  std::string error;
  auto poller = OpenPoller({GPUQ_HSA_STANDIN}, false, &error);
  ASSERT_NE(poller, nullptr) << error;

  // A: two rounds on two queues, alive between them; all five packet
  // types, the three entry points, completion stores in between.
  Caller a(
      {"dispatch=70", "barrier=20", "vendor=5", "agent=2", "invalid=3",
       "completions=40", "queues=2", "via=mix", "rounds=2", "wait_stdin=1"},
      cg_a.path());
  std::vector<Fields> a_lines = a.ReadUntil("ready");
  const std::vector<uint64_t> a_handles = Handles(a_lines);
  ASSERT_EQ(a_handles.size(), 2u);
  const uint32_t a_pid = static_cast<uint32_t>(a.pid());
  // The model knows A's first queue (learned at its creation), not the 2nd.
  DoorbellOwner owner;
  owner.owner.tgid = a_pid;
  owner.owner.process_key = 0xfeedf00d;
  owner.owner.cgroup_id = 1;  // the owner's: the record carries the ringer's
  owner.gpu_id = 0x1234;
  owner.queue_id = 7;
  int finds = 0;
  const FindFn find = [&](uint32_t tgid,
                          uint64_t handle) -> std::optional<DoorbellOwner> {
    if (tgid != a_pid) return std::nullopt;
    ++finds;
    if (handle == a_handles[0]) return owner;
    return std::nullopt;
  };

  EXPECT_TRUE(PollFor(*poller, a_pid, find).empty());  // nothing rung yet
  a.Go();
  std::vector<Fields> more = a.ReadUntil("ready");  // round 0 rung
  a_lines.insert(a_lines.end(), more.begin(), more.end());
  auto first = PollFor(*poller, a_pid, find);
  ASSERT_EQ(first.size(), 2u);
  // 100 packets round-robin on 2 queues: 50 each, exact per type below.
  EXPECT_EQ(first[a_handles[0]].doorbells, 50u);
  EXPECT_EQ(first[a_handles[1]].doorbells, 50u);
  EXPECT_EQ(first[a_handles[0]].by_packet[GPUQ_PACKET_DISPATCH] +
                first[a_handles[1]].by_packet[GPUQ_PACKET_DISPATCH],
            70u);
  // Unchanged counts are not emitted again; the live process keeps its
  // entries.
  EXPECT_TRUE(PollFor(*poller, a_pid, find).empty());
  uint64_t a_entries = 0;
  for (const DoorbellCount& c : poller->Read()) a_entries += c.tgid == a_pid;
  EXPECT_EQ(a_entries, 2u);

  a.Go();
  std::vector<Fields> rest;
  ASSERT_EQ(a.Finish(&rest), 0);  // exited and reaped
  a_lines.insert(a_lines.end(), rest.begin(), rest.end());
  const CallerRun a_run = ParseRun(a_pid, a_lines);
  finds = 0;
  auto final_a = PollFor(*poller, a_pid, find);
  EXPECT_EQ(finds, 2);
  ASSERT_EQ(final_a.size(), 2u);
  uint64_t dispatch = 0, barrier = 0, other = 0;
  for (const auto& [handle, r] : final_a) {
    ASSERT_TRUE(a_run.rung.count(handle)) << std::hex << handle;
    EXPECT_NE(handle, a_run.completion_handle);
    EXPECT_EQ(r.doorbells, a_run.rung.at(handle));  // cumulative: both rounds
    EXPECT_EQ(r.by_packet[GPUQ_PACKET_UNREADABLE], 0u);
    EXPECT_EQ(r.hdr.cgroup_id, Inode(cg_a.path()));  // the ringer's cgroup
    dispatch += r.by_packet[GPUQ_PACKET_DISPATCH];
    barrier += r.by_packet[GPUQ_PACKET_BARRIER];
    other += r.by_packet[GPUQ_PACKET_OTHER];
  }
  EXPECT_EQ(dispatch, 140u);
  EXPECT_EQ(barrier, 40u);
  EXPECT_EQ(other, 20u);  // vendor + agent + invalid
  EXPECT_EQ(Num(a_run.summary, "completions"), 40u);
  // gpu_id/queue_id/process_key from `find` where it knew the handle.
  EXPECT_EQ(final_a[a_handles[0]].gpu_id, 0x1234u);
  EXPECT_EQ(final_a[a_handles[0]].queue_id, 7u);
  EXPECT_EQ(final_a[a_handles[0]].hdr.process_key, 0xfeedf00du);
  EXPECT_EQ(final_a[a_handles[1]].gpu_id, 0u);
  EXPECT_EQ(final_a[a_handles[1]].queue_id, 0u);
  EXPECT_EQ(final_a[a_handles[1]].hdr.process_key, 0u);
  // The exited process's entries are gone from the kernel map after their
  // final counts were emitted, and nothing more is emitted for it.
  for (const DoorbellCount& c : poller->Read()) EXPECT_NE(c.tgid, a_pid);
  EXPECT_TRUE(PollFor(*poller, a_pid, find).empty());

  // B, in another cgroup: its own counts and cgroup.
  const CallerRun b =
      RunCaller({"dispatch=7", "barrier=3", "completions=11", "via=relaxed"},
                cg_b.path());
  auto b_records = PollFor(*poller, b.pid);
  ASSERT_EQ(b_records.size(), 1u);
  const gpuq_doorbell_count_record& rb = b_records.begin()->second;
  EXPECT_EQ(rb.doorbell_handle, b.rung.begin()->first);
  EXPECT_EQ(rb.doorbells, 10u);
  EXPECT_EQ(rb.by_packet[GPUQ_PACKET_DISPATCH], 7u);
  EXPECT_EQ(rb.by_packet[GPUQ_PACKET_BARRIER], 3u);
  EXPECT_EQ(rb.hdr.cgroup_id, Inode(cg_b.path()));
  EXPECT_NE(rb.hdr.cgroup_id, Inode(cg_a.path()));
  for (const DoorbellCount& c : poller->Read()) EXPECT_NE(c.tgid, b.pid);
  EXPECT_EQ(poller->MapFullDrops(), 0u);
}

TEST(DoorbellPollerTest, KeepsCountsWhenProcfsIsNotTheHostPidNamespace) {
  REQUIRE_BPF_PRIVILEGES();
  // A procfs of a pid namespace other than the host's (an agent container
  // without the host's /proc): an absent <procfs>/<tgid> says nothing about
  // the kernel's tgid, so nothing may be deleted as exited.
  TempDir fake;
  ASSERT_EQ(mkdir((fake.path() + "/self").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((fake.path() + "/self/ns").c_str(), 0755), 0);
  ASSERT_EQ(symlink("pid:[4026532999]", (fake.path() + "/self/ns/pid").c_str()),
            0);
  std::ofstream(fake.path() + "/self/status") << "Name:\tgpuq\nNStgid:\t7\n";
  DoorbellPoller::Options options;
  options.paths.procfs = fake.path();
  options.libraries = {GPUQ_HSA_STANDIN};
  options.scan_processes = false;
  std::string error;
  auto poller = DoorbellPoller::Open(options, &error);
  ASSERT_NE(poller, nullptr) << error;
  const CallerRun run = RunCaller({"dispatch=9"});
  auto records = PollFor(*poller, run.pid);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records.begin()->second.doorbells, 9u);
  uint64_t kept = 0;
  for (const DoorbellCount& c : poller->Read()) kept += c.tgid == run.pid;
  EXPECT_EQ(kept, 1u);
  EXPECT_TRUE(PollFor(*poller, run.pid).empty());  // unchanged: not emitted
  EXPECT_NE(poller->Probes()[0].detail.find("not the host pid namespace"),
            std::string::npos)
      << poller->Probes()[0].detail;
}

TEST(DoorbellPollerTest, ClassifiesEveryPacketTypeExactly) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto poller = OpenPoller({GPUQ_HSA_STANDIN}, false, &error);
  ASSERT_NE(poller, nullptr) << error;
  struct Case {
    std::vector<std::string> args;
    uint64_t dispatch, barrier, other, unreadable, ext = 0;
  };
  const Case cases[] = {
      // BARRIER_AND and BARRIER_OR alternate; VENDOR_SPECIFIC (PM4-IB),
      // AGENT_DISPATCH and INVALID are "other"; a ring that wraps 3 times.
      {{"dispatch=50", "barrier=61", "vendor=40", "agent=30", "invalid=20"},
       50,
       61,
       90,
       0},
      // AMD's extended kernel dispatches (gfx1250: VENDOR_SPECIFIC with
      // AmdFormat 3) among the others, one ring each and in batches.
      {{"dispatch=20", "barrier=10", "vendor=7", "ext=33"}, 20, 10, 7, 0, 33},
      {{"dispatch=20", "barrier=10", "vendor=7", "ext=33", "batch=16"},
       20,
       10,
       7,
       0,
       33},
      // gfx7/8 LEGACY_DOORBELL signals classify the same way.
      {{"dispatch=5", "barrier=4", "vendor=1", "kind=-2", "via=relaxed"},
       5,
       4,
       1,
       0},
      // The signal moves to another queue between rounds (its memory
      // reused), the old ring consumed: classified from the new ring, not
      // from what the probe cached of the old one.
      {{"dispatch=10", "barrier=6", "vendor=3", "rounds=2", "requeue=1"},
       20,
       12,
       6,
       0},
      // The doorbell keeps its amd_queue_t, whose ring moves (ROCr 5.2.3
      // recreating a queue after a destroy), the old ring consumed: the
      // ring is read again, not trusted because queue_ptr is the same.
      {{"dispatch=10", "barrier=6", "vendor=3", "rounds=2", "requeue=2"},
       20,
       12,
       6,
       0},
      // A doorbell signal without queue_ptr: counted, type unreadable.
      {{"dispatch=6", "barrier=2", "noqueue=1"}, 0, 0, 0, 8},
      // HIP 7's graph replay: one ring per batch of 16 packets, stored
      // with the batch's last index; every packet classified by its own
      // slot, the first batch counted from index 0.
      {{"dispatch=50", "barrier=61", "vendor=40", "agent=30", "invalid=20",
        "batch=16"},
       50,
       61,
       90,
       0},
      // Batches across a requeue: the new queue starts at index 0.
      {{"dispatch=10", "barrier=6", "vendor=3", "rounds=2", "requeue=2",
        "batch=5"},
       20,
       12,
       6,
       0},
  };
  for (const Case& c : cases) {
    const CallerRun run = RunCaller(c.args);
    auto records = PollFor(*poller, run.pid);
    ASSERT_EQ(records.size(), 1u) << c.args[0];
    const gpuq_doorbell_count_record& r = records.begin()->second;
    EXPECT_EQ(r.by_packet[GPUQ_PACKET_DISPATCH], c.dispatch) << c.args[0];
    EXPECT_EQ(r.by_packet[GPUQ_PACKET_BARRIER], c.barrier) << c.args[0];
    EXPECT_EQ(r.by_packet[GPUQ_PACKET_OTHER], c.other) << c.args[0];
    EXPECT_EQ(r.by_packet[GPUQ_PACKET_UNREADABLE], c.unreadable) << c.args[0];
    EXPECT_EQ(r.by_packet[GPUQ_PACKET_EXT_DISPATCH], c.ext) << c.args[0];
    // every other packet has the barrier bit (the caller's own count of
    // the kernel dispatches among them; 0 when the headers are unreadable)
    EXPECT_EQ(r.barrier_dispatches,
              c.unreadable ? 0u : Num(run.summary, "barrier_dispatches"))
        << c.args[0];
    if (c.dispatch + c.ext > 1) {
      EXPECT_GT(r.barrier_dispatches, 0u) << c.args[0];
      EXPECT_LT(r.barrier_dispatches, c.dispatch + c.ext) << c.args[0];
    }
    EXPECT_EQ(r.doorbells, Num(run.summary, "doorbells")) << c.args[0];
  }
}

// A process that rang before the probes were attached: what it published
// then is not the agent's to count, and the first ring seen cannot tell
// where its batch began. It counts the packet it rings; the rings after it
// count their batches exactly.
TEST(DoorbellPollerTest, AQueueRungBeforeTheAttachCountsFromItsNextRing) {
  REQUIRE_BPF_PRIVILEGES();
  Caller caller({"dispatch=8", "rounds=2", "batch=4", "wait_stdin=1"});
  caller.ReadUntil("ready");
  caller.Go();  // round 0: 2 rings of 4, no probe yet
  caller.ReadUntil("round=0");
  std::string error;
  auto poller = OpenPoller({GPUQ_HSA_STANDIN}, false, &error);
  ASSERT_NE(poller, nullptr) << error;
  caller.ReadUntil("ready");
  caller.Go();  // round 1: indexes 8-11, then 12-15
  std::vector<Fields> lines;
  ASSERT_EQ(caller.Finish(&lines), 0);
  const CallerRun run = ParseRun(static_cast<uint32_t>(caller.pid()), lines);
  EXPECT_EQ(Num(run.summary, "doorbells"), 4u);
  EXPECT_EQ(Num(run.summary, "packets"), 16u);
  auto records = PollFor(*poller, run.pid);
  ASSERT_EQ(records.size(), 1u);
  const gpuq_doorbell_count_record& r = records.begin()->second;
  EXPECT_EQ(r.doorbells, 2u);
  EXPECT_EQ(r.by_packet[GPUQ_PACKET_DISPATCH], 1u + 4u);
}

TEST(DoorbellPollerTest, InterceptStyleDoorbellsCountOnlyWhileKnown) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto poller = OpenPoller({GPUQ_HSA_STANDIN}, false, &error);
  ASSERT_NE(poller, nullptr) << error;
  // kind USER doorbells on 2 queues, 3 rounds of 6 packets: 3 per queue a
  // round. Round 0: nothing known; round 1: queue 0 known; round 2: queue 1
  // known instead.
  Caller caller({"dispatch=4", "barrier=2", "queues=2", "kind=1",
                 "completions=5", "rounds=3", "wait_stdin=1"});
  const std::vector<uint64_t> h = Handles(caller.ReadUntil("ready"));
  ASSERT_EQ(h.size(), 2u);
  const uint32_t pid = static_cast<uint32_t>(caller.pid());

  caller.Go();
  caller.ReadUntil("ready");
  EXPECT_TRUE(PollFor(*poller, pid).empty());

  poller->SyncKnown({{pid, h[0]}});
  caller.Go();
  caller.ReadUntil("ready");
  auto round1 = PollFor(*poller, pid);
  ASSERT_EQ(round1.size(), 1u);
  ASSERT_TRUE(round1.count(h[0]));
  EXPECT_EQ(round1[h[0]].doorbells, 3u);
  // A USER-kind signal has no queue_ptr to trust: counted, not classified.
  EXPECT_EQ(round1[h[0]].by_packet[GPUQ_PACKET_UNREADABLE], 3u);

  poller->SyncKnown({{pid, h[1]}});  // h[0] deleted, h[1] added
  caller.Go();
  ASSERT_EQ(caller.Finish(nullptr), 0);
  auto round2 = PollFor(*poller, pid);
  ASSERT_EQ(round2.size(), 1u);  // h[0] unchanged: not emitted
  ASSERT_TRUE(round2.count(h[1]));
  EXPECT_EQ(round2[h[1]].doorbells, 3u);
  for (const DoorbellCount& c : poller->Read()) EXPECT_NE(c.tgid, pid);
  poller->SyncKnown({});
}

// The process's maps are read before and after its dlopen (its size
// changed); RuntimeScanner's own tests say when they are not read again.
TEST(DoorbellPollerTest, RescanAttachesToALibraryDlopenedAfterOpen) {
  REQUIRE_BPF_PRIVILEGES();
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string copy = CopyStandIn(dir);
  std::string error;
  auto poller = OpenPoller({}, true, &error);  // scan only
  ASSERT_NE(poller, nullptr) << error;
  auto mentions_copy = [&] {
    bool attached = false;
    for (const ProbeStatus& p : poller->Probes())
      attached |= p.attached && p.detail.find(copy) != std::string::npos;
    return attached;
  };
  Caller caller({"lib=" + copy, "dispatch=20", "barrier=5", "completions=4",
                 "wait_stdin=1"},
                "", GPUQ_HSA_DLOPEN_CALLER);
  caller.ReadUntil("ready");  // started, library not loaded
  poller->Rescan();
  EXPECT_FALSE(mentions_copy());
  caller.Go();
  std::vector<Fields> lines = caller.ReadUntil("ready");  // loaded
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(lines.front().count("loaded")) << "dlopen failed";
  EXPECT_EQ(poller->Rescan(), 1);
  ASSERT_TRUE(mentions_copy());
  const uint32_t pid = static_cast<uint32_t>(caller.pid());
  caller.Go();
  ASSERT_EQ(caller.Finish(nullptr), 0);
  auto records = PollFor(*poller, pid);
  ASSERT_EQ(records.size(), 1u);
  const gpuq_doorbell_count_record& r = records.begin()->second;
  EXPECT_EQ(r.doorbells, 25u);
  EXPECT_EQ(r.by_packet[GPUQ_PACKET_DISPATCH], 20u);
  EXPECT_EQ(r.by_packet[GPUQ_PACKET_BARRIER], 5u);
}

TEST(DoorbellPollerTest, ProbesNameEachSymbolInUprobeMode) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto poller = OpenPoller({GPUQ_HSA_STANDIN}, false, &error);
  ASSERT_NE(poller, nullptr) << error;
  const std::vector<ProbeStatus> probes = poller->Probes();
  ASSERT_EQ(probes.size(), 4u);
  EXPECT_EQ(probes[0].probe, "doorbell_store_screlease");
  EXPECT_EQ(probes[0].function, "hsa_signal_store_screlease");
  EXPECT_EQ(probes[1].probe, "doorbell_store_relaxed");
  EXPECT_EQ(probes[1].function, "hsa_signal_store_relaxed");
  EXPECT_EQ(probes[2].probe, "doorbell_queue_destroy");
  EXPECT_EQ(probes[2].function, "hsa_queue_destroy");
  EXPECT_EQ(probes[3].probe, "doorbell_shut_down");
  EXPECT_EQ(probes[3].function, "hsa_shut_down");
  for (const ProbeStatus& p : probes) {
    EXPECT_EQ(p.mode, "uprobe");
    EXPECT_TRUE(p.attached) << p.detail;
    EXPECT_NE(p.detail.find(GPUQ_HSA_STANDIN), std::string::npos) << p.detail;
  }
  // The destroys are probed at their return, when the signal memory is free.
  EXPECT_NE(probes[2].detail.find("hsa_queue_destroy@0x"), std::string::npos)
      << probes[2].detail;
  EXPECT_NE(probes[2].detail.find("(return)"), std::string::npos)
      << probes[2].detail;

  auto idle = OpenPoller({}, false, &error);
  ASSERT_NE(idle, nullptr) << error;
  for (const ProbeStatus& p : idle->Probes()) {
    EXPECT_FALSE(p.attached);
    EXPECT_FALSE(p.detail.empty());
  }
}

TEST(DoorbellPollerTest, OpenRefusesABadHsaRuntimePath) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  EXPECT_EQ(OpenPoller({"/nonexistent/libhsa-runtime64.so.1"}, false, &error),
            nullptr);
  EXPECT_NE(error.find("/nonexistent/libhsa-runtime64.so.1"), std::string::npos)
      << error;
  TempDir dir;
  const std::string junk = dir.path() + "/libhsa-runtime64.so.1";
  std::ofstream(junk) << "not a library\n";
  error.clear();
  EXPECT_EQ(OpenPoller({junk}, false, &error), nullptr);
  EXPECT_NE(error.find("not an ELF"), std::string::npos) << error;
}

// libelf reads the headers: a truncated library is refused with the path
// named (or read as far as it goes), never read out of bounds.
TEST(DoorbellElfTest, RefusesATruncatedLibrary) {
  std::ifstream in(GPUQ_HSA_STANDIN, std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  ASSERT_GT(whole.size(), 64u);
  TempDir dir;
  const std::string cut = dir.path() + "/libhsa-runtime64.so.1";
  for (const size_t size : {size_t{4}, size_t{16}, size_t{64}, whole.size() / 2,
                            whole.size() - 1}) {
    std::ofstream(cut, std::ios::binary | std::ios::trunc)
        << whole.substr(0, size);
    std::vector<ElfFunction> functions;
    std::string error;
    if (!ReadElfFunctions(cut, {"hsa_signal_store_screlease"}, &functions,
                          &error)) {
      EXPECT_EQ(error.rfind(cut + ": ", 0), 0u) << size << ": " << error;
    }
    if (size <= 64) {
      EXPECT_FALSE(error.empty()) << size;
    }
  }
}

TEST(DoorbellPollerUnprivilegedTest, OpenSaysWhatIsMissing) {
  // Run without privileges by the doorbell_poller_unprivileged ctest entry
  // (setpriv to nobody); as root there is nothing to check here.
  if (HasBpfPrivileges())
    GTEST_SKIP() << "has BPF privileges: run unprivileged "
                    "(ctest -R doorbell_poller_unprivileged)";
  std::string error;
  EXPECT_EQ(OpenPoller({GPUQ_HSA_STANDIN}, false, &error), nullptr);
  EXPECT_NE(error.find("needs root"), std::string::npos) << error;
}

TEST(DoorbellTest, AFullCountMapDropsAndCountsTheDrops) {
  REQUIRE_BPF_PRIVILEGES();
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  DoorbellCounter::Options options;
  options.libraries = {CopyStandIn(dir)};
  options.scan_processes = false;
  options.max_doorbells = 2;
  std::string error;
  auto counter = DoorbellCounter::Open(options, &error);
  ASSERT_NE(counter, nullptr) << error;
  // 4 queues, 3 doorbells each, round-robin: queues 0 and 1 take the two
  // slots, the 6 doorbells of queues 2 and 3 are dropped.
  Caller caller({"lib=" + options.libraries[0], "dispatch=12", "queues=4"}, "",
                GPUQ_HSA_DLOPEN_CALLER);
  ASSERT_EQ(caller.Finish(nullptr), 0);
  const auto counts = CountsOf(*counter, static_cast<uint32_t>(caller.pid()));
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].doorbells + counts[1].doorbells, 6u);
  EXPECT_EQ(counter->Drops(), 6u);
}

// Kfunc calls in the program `fd` as the verifier left it (its xlated
// instructions); -1 if they cannot be read.
int KfuncCalls(int fd) {
  bpf_prog_info info;
  std::memset(&info, 0, sizeof(info));
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return -1;
  std::vector<bpf_insn> insns(info.xlated_prog_len / sizeof(bpf_insn));
  std::memset(&info, 0, sizeof(info));
  info.xlated_prog_len = static_cast<uint32_t>(insns.size() * sizeof(bpf_insn));
  info.xlated_prog_insns = reinterpret_cast<uint64_t>(insns.data());
  len = sizeof(info);
  if (insns.empty() || bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return -1;
  int calls = 0;
  for (const bpf_insn& insn : insns) {
    if (insn.code == (BPF_JMP | BPF_CALL) &&
        insn.src_reg == BPF_PSEUDO_KFUNC_CALL)
      ++calls;
  }
  return calls;
}

// The store programs run preemptible; on a 6.13+ kernel a frame of theirs is
// a per-CPU private stack that another task's ring would overwrite
// (bpf/doorbell.bpf.c). Where the kernel has bpf_preempt_disable, the loaded
// pair must call it (and bpf_preempt_enable): no kfunc otherwise. The
// QEMU tier checks the choice on each Debian kernel (6.1 lacks the kfuncs).
TEST(DoorbellTest, StoreProgramsHoldPreemptionOffWhereTheKernelCan) {
  REQUIRE_BPF_PRIVILEGES();
  std::string error;
  auto counter = OpenOnStandIn(&error);
  ASSERT_NE(counter, nullptr) << error;
  const bool kfuncs = KernelHasPreemptKfuncs();
  EXPECT_EQ(counter->HoldsPreemptionOff(), kfuncs);
  const std::vector<int> fds = counter->ProgramFds();
  ASSERT_EQ(fds.size(), 2u);
  for (int fd : fds) {
    ASSERT_GE(fd, 0);
    const int calls = KfuncCalls(fd);
    if (kfuncs) {
      EXPECT_EQ(calls, 2) << "bpf_preempt_disable and bpf_preempt_enable";
    } else {
      EXPECT_EQ(calls, 0);
    }
  }
  // And the guarded pair still counts exactly.
  const CallerRun a =
      RunCaller({"dispatch=40", "barrier=4", "queues=2", "via=mix"});
  ExpectCountsMatch(*counter, a);
}

#undef REQUIRE_BPF_PRIVILEGES

}  // namespace
}  // namespace gpuq

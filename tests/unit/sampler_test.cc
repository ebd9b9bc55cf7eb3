// QueueSampler and ProcessMemoryReader against a real process
// (tests/sampler/queue_writer): exact indexes, batching, unreadable
// addresses, and processes that exit between rounds.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "common/log.h"
#include "common/periodic_thread.h"
#include "sampler_queue_writer.h"
#include "sources/runtime_knobs.h"
#include "submissions/process_memory.h"
#include "submissions/queue_sampler.h"
#include "test_support.h"

namespace gpuq::sampler_test {
namespace {

/// Targets for the queues at `addrs` of process `pid`: queue ids from
/// `first_qid`, process_key and cgroup derived from the pid.
std::vector<SampleTarget> Targets(uint32_t pid,
                                  const std::vector<uint64_t>& addrs,
                                  uint32_t first_qid = 0) {
  std::vector<SampleTarget> targets;
  for (size_t i = 0; i < addrs.size(); ++i) {
    SampleTarget t;
    t.owner.type = GPUQ_EV_QUEUE_CREATE;  // the sampler must overwrite it
    t.owner.size = sizeof(gpuq_queue_create_event);
    t.owner.tgid = pid;
    t.owner.ts_ns = 1;
    t.owner.cgroup_id = 7000 + pid;
    t.owner.process_key = 0xffff888000000000ull + pid;
    t.gpu_id = 11437;
    t.queue_id = first_qid + static_cast<uint32_t>(i);
    t.write_ptr = addrs[i] + kWriteDispatchIdOffset;
    t.read_ptr = addrs[i] + kReadDispatchIdOffset;
    targets.push_back(t);
  }
  return targets;
}

/// Runs one round and returns its samples (and, into *knobs, the knobs
/// records it emitted).
std::vector<gpuq_queue_sample_record> Round(
    QueueSampler& sampler, const std::vector<SampleTarget>& targets,
    SampleRoundStats* stats = nullptr,
    std::vector<gpuq_process_knobs_record>* knobs = nullptr) {
  std::vector<gpuq_queue_sample_record> out;
  const SampleRoundStats s = sampler.Sample(targets, [&](const Event& e) {
    if (const auto* k = std::get_if<gpuq_process_knobs_record>(&e)) {
      if (knobs != nullptr) knobs->push_back(*k);
      return;
    }
    ASSERT_TRUE(std::holds_alternative<gpuq_queue_sample_record>(e));
    out.push_back(std::get<gpuq_queue_sample_record>(e));
  });
  if (stats != nullptr) *stats = s;
  return out;
}

/// The record of (tgid, queue id), or a failure.
const gpuq_queue_sample_record* Find(
    const std::vector<gpuq_queue_sample_record>& records, uint32_t tgid,
    uint32_t qid) {
  for (const auto& r : records) {
    if (r.hdr.tgid == tgid && r.queue_id == qid) return &r;
  }
  ADD_FAILURE() << "no sample of tgid " << tgid << " queue " << qid;
  return nullptr;
}

class SamplerTest : public ::testing::TestWithParam<MemoryAccess> {
 protected:
  void SetUp() override {
    // Yama's ptrace_scope 2 and 3 keep even a parent out of its child's
    // memory unless it has CAP_SYS_PTRACE.
    const std::string scope =
        ReadFile("/proc/sys/kernel/yama/ptrace_scope").substr(0, 1);
    if (geteuid() != 0 && (scope == "2" || scope == "3")) {
      GTEST_SKIP() << "kernel.yama.ptrace_scope=" << scope
                   << " forbids reading a child's memory without root";
    }
  }
  QueueSampler MakeSampler() {
    QueueSampler::Options options;
    options.access = GetParam();
    options.clock = [this] {
      const uint64_t t = now_ns_;
      now_ns_ += step_ns_;
      return t;
    };
    return QueueSampler(options);
  }
  uint64_t now_ns_ = 1000;
  uint64_t step_ns_ = 0;  // how far the clock moves per reading
};

// Both ends of a process's read are stamped: the model holds the read to
// queues created before it began (SubmissionsTest has why).
TEST_P(SamplerTest, StampsWhenTheReadBeganAndEnded) {
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const auto addrs = writer.NewQueues(2, 7, 7);
  ASSERT_EQ(addrs.size(), 2u);
  QueueSampler sampler = MakeSampler();
  step_ns_ = 10;
  const auto records = Round(sampler, Targets(writer.pid(), addrs), nullptr);
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    EXPECT_EQ(r.read_begin_ns, 1000u);
    EXPECT_EQ(r.hdr.ts_ns, 1010u);
    EXPECT_EQ(r.write_index, 7u);
  }
}

TEST_P(SamplerTest, ReadsExactIndexesAndStampsTheOwnersHeader) {
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const auto addrs = writer.NewQueues(3, 100, 90);
  ASSERT_EQ(addrs.size(), 3u);
  for (uint64_t a : addrs) EXPECT_EQ(a % 64, 0u) << "amd_queue_t is aligned";
  const auto targets = Targets(writer.pid(), addrs);
  QueueSampler sampler = MakeSampler();

  SampleRoundStats stats;
  auto records = Round(sampler, targets, &stats);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(stats.queues, 3u);
  EXPECT_EQ(stats.processes, 1u);
  EXPECT_EQ(stats.unreadable, 0u);
  for (uint32_t q = 0; q < 3; ++q) {
    const auto* r = Find(records, writer.pid(), q);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->hdr.type, GPUQ_EV_QUEUE_SAMPLE);
    EXPECT_EQ(r->hdr.size, sizeof(gpuq_queue_sample_record));
    EXPECT_EQ(r->hdr.ts_ns, 1000u);
    EXPECT_EQ(r->hdr.cgroup_id, 7000u + writer.pid());
    EXPECT_EQ(r->hdr.process_key, 0xffff888000000000ull + writer.pid());
    EXPECT_EQ(r->gpu_id, 11437u);
    EXPECT_EQ(r->write_index, 100u);
    EXPECT_EQ(r->read_index, 90u);
    EXPECT_EQ(r->flags, 0u);
  }

  // Move each queue by a different amount: every sample follows its own.
  ASSERT_EQ(writer.Advance(0, 5, 1), "ok 105 91");
  ASSERT_EQ(writer.Advance(2, 1000, 1000), "ok 1100 1090");
  now_ns_ = 2000;
  records = Round(sampler, targets);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(Find(records, writer.pid(), 0)->write_index, 105u);
  EXPECT_EQ(Find(records, writer.pid(), 0)->read_index, 91u);
  EXPECT_EQ(Find(records, writer.pid(), 1)->write_index, 100u);
  EXPECT_EQ(Find(records, writer.pid(), 1)->read_index, 90u);
  EXPECT_EQ(Find(records, writer.pid(), 2)->write_index, 1100u);
  EXPECT_EQ(Find(records, writer.pid(), 2)->read_index, 1090u);
  EXPECT_EQ(Find(records, writer.pid(), 2)->hdr.ts_ns, 2000u);
}

TEST_P(SamplerTest, FullWidthIndexes) {
  // Indexes are u64 packet counters: no truncation to 32 bits.
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const auto addrs =
      writer.NewQueues(1, 0xfffffffffffffff0ull, 0x123456789aull);
  ASSERT_EQ(addrs.size(), 1u);
  QueueSampler sampler = MakeSampler();
  const auto records = Round(sampler, Targets(writer.pid(), addrs));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].write_index, 0xfffffffffffffff0ull);
  EXPECT_EQ(records[0].read_index, 0x123456789aull);
}

TEST_P(SamplerTest, UnreadableAddressFlagsOnlyThatQueue) {
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const auto addrs = writer.NewQueues(4, 10, 5);
  ASSERT_EQ(addrs.size(), 4u);
  auto targets = Targets(writer.pid(), addrs);
  const uint64_t hole = writer.Hole();
  ASSERT_NE(hole, 0u);
  targets[1].write_ptr = hole;  // not mapped
  targets[2].read_ptr = 8;      // the zero page is never mapped
  targets[3].write_ptr = 0xffffffff81000000ull;  // kernel address
  QueueSampler sampler = MakeSampler();

  SampleRoundStats stats;
  const auto records = Round(sampler, targets, &stats);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(stats.unreadable, 3u);
  const auto* good = Find(records, writer.pid(), 0);
  EXPECT_EQ(good->flags, 0u);
  EXPECT_EQ(good->write_index, 10u);
  EXPECT_EQ(good->read_index, 5u);
  for (uint32_t q = 1; q < 4; ++q) {
    const auto* r = Find(records, writer.pid(), q);
    EXPECT_EQ(r->flags, GPUQ_SAMPLE_F_UNREADABLE) << "queue " << q;
    EXPECT_EQ(r->write_index, 0u);
    EXPECT_EQ(r->read_index, 0u);
  }
}

TEST_P(SamplerTest, ProcessThatExitedIsFlaggedNotAnError) {
  QueueWriterProcess stays(GPUQ_QUEUE_WRITER), reaped(GPUQ_QUEUE_WRITER),
      zombie(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(stays.ok() && reaped.ok() && zombie.ok());
  std::vector<SampleTarget> targets;
  for (QueueWriterProcess* p : {&stays, &reaped, &zombie}) {
    const auto t = Targets(p->pid(), p->NewQueues(2, 40, 30));
    ASSERT_EQ(t.size(), 2u);
    targets.insert(targets.end(), t.begin(), t.end());
  }
  QueueSampler sampler = MakeSampler();
  ASSERT_EQ(Round(sampler, targets).size(), 6u);

  // Between two rounds: one process is gone, one is a zombie (no mm).
  reaped.Exit(/*reap=*/true);
  zombie.Exit(/*reap=*/false);
  ASSERT_EQ(stays.AdvanceAll(1, 1), "ok");
  SampleRoundStats stats;
  const auto records = Round(sampler, targets, &stats);
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(stats.processes, 3u);
  EXPECT_EQ(stats.unreadable, 4u);
  for (uint32_t q = 0; q < 2; ++q) {
    EXPECT_EQ(Find(records, stays.pid(), q)->flags, 0u);
    EXPECT_EQ(Find(records, stays.pid(), q)->write_index, 41u);
    EXPECT_EQ(Find(records, reaped.pid(), q)->flags, GPUQ_SAMPLE_F_UNREADABLE);
    EXPECT_EQ(Find(records, zombie.pid(), q)->flags, GPUQ_SAMPLE_F_UNREADABLE);
  }
}

// The runtime knobs of a process whose queues read: once, from the
// environment it was started with, only the allowlisted names, and never
// for a process that could not be read.
TEST_P(SamplerTest, ReadsEachProcessKnobsOnceFromItsEnvironment) {
  const std::string long_mask(40, 'f');
  setenv("GPU_MAX_HW_QUEUES", "1", 1);
  setenv("HSA_ENABLE_SDMA", "0", 1);
  setenv("ROC_GLOBAL_CU_MASK", long_mask.c_str(), 1);
  setenv("GPUQ_SAMPLER_TEST_SECRET", "not-a-knob", 1);
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  unsetenv("GPU_MAX_HW_QUEUES");
  unsetenv("HSA_ENABLE_SDMA");
  unsetenv("ROC_GLOBAL_CU_MASK");
  unsetenv("GPUQ_SAMPLER_TEST_SECRET");
  QueueWriterProcess gone(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok() && gone.ok());
  auto targets = Targets(writer.pid(), writer.NewQueues(2, 10, 5));
  const auto gone_targets = Targets(gone.pid(), gone.NewQueues(1, 1, 1));
  gone.Exit(/*reap=*/true);
  targets.insert(targets.end(), gone_targets.begin(), gone_targets.end());
  QueueSampler sampler = MakeSampler();
  std::vector<gpuq_process_knobs_record> knobs;
  ASSERT_EQ(Round(sampler, targets, nullptr, &knobs).size(), 3u);
  ASSERT_EQ(knobs.size(), 1u);
  EXPECT_EQ(knobs[0].hdr.type, GPUQ_EV_PROCESS_KNOBS);
  EXPECT_EQ(knobs[0].hdr.size, sizeof(gpuq_process_knobs_record));
  EXPECT_EQ(knobs[0].hdr.tgid, writer.pid());
  EXPECT_EQ(knobs[0].hdr.process_key, targets[0].owner.process_key);
  EXPECT_EQ(knobs[0].hdr.cgroup_id, targets[0].owner.cgroup_id);
  EXPECT_EQ(RuntimeKnobsLabel(knobs[0]),
            "GPU_MAX_HW_QUEUES=1 ROC_GLOBAL_CU_MASK=" +
                long_mask.substr(0, 23) + "... HSA_ENABLE_SDMA=0");
  EXPECT_EQ(knobs[0].set, (1u << GPUQ_KNOB_GPU_MAX_HW_QUEUES) |
                              (1u << GPUQ_KNOB_ROC_GLOBAL_CU_MASK) |
                              (1u << GPUQ_KNOB_HSA_ENABLE_SDMA));
  EXPECT_EQ(knobs[0].cut, 1u << GPUQ_KNOB_ROC_GLOBAL_CU_MASK);
  knobs.clear();
  ASSERT_EQ(Round(sampler, targets, nullptr, &knobs).size(), 3u);
  EXPECT_TRUE(knobs.empty()) << "knobs are read once per process";
}

// ROCr's amd_queue_t in GTT on MES GPUs has no pages process_vm_readv can
// pin; /proc/<pid>/mem reads it. queue_writer's "fenced" queue (a PROT_NONE
// page) stands in: process_vm_readv faults on it the same way, and the
// reader reads it again from /proc/<pid>/mem.
TEST_P(SamplerTest, QueueProcessVmReadvCannotPinIsReadFromProcMem) {
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const uint64_t fenced = writer.Fenced(77, 70);
  ASSERT_NE(fenced, 0u);
  auto targets = Targets(writer.pid(), writer.NewQueues(2, 10, 5));
  const auto extra = Targets(writer.pid(), {fenced}, 2);
  targets.insert(targets.end(), extra.begin(), extra.end());
  QueueSampler sampler = MakeSampler();
  SampleRoundStats stats;
  const auto records = Round(sampler, targets, &stats);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(stats.unreadable, 0u);
  const auto* r = Find(records, writer.pid(), 2);
  EXPECT_EQ(r->flags, 0u);
  EXPECT_EQ(r->write_index, 77u);
  EXPECT_EQ(r->read_index, 70u);
  EXPECT_EQ(Find(records, writer.pid(), 0)->write_index, 10u);
  // Only the fenced queue's range took the second way.
  EXPECT_EQ(sampler.read_stats().read_through_mem,
            GetParam() == MemoryAccess::kProcessVmReadv ? 1u : 0u);
}

TEST(SamplerRootTest, RootIsInjectableForProcMem) {
  // A procfs root without the process: every read is unreadable, none
  // reaches the real /proc.
  TempDir root;
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const auto targets = Targets(writer.pid(), writer.NewQueues(2, 1, 1));
  QueueSampler::Options options;
  options.paths.procfs = root.path();
  options.access = MemoryAccess::kAuto;  // a procfs elsewhere: /proc/<pid>/mem
  QueueSampler sampler(options);
  EXPECT_EQ(sampler.access(), MemoryAccess::kProcMem);
  SampleRoundStats stats;
  const auto records = Round(sampler, targets, &stats);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(stats.unreadable, 2u);
}

INSTANTIATE_TEST_SUITE_P(
    Access, SamplerTest,
    ::testing::Values(MemoryAccess::kProcessVmReadv, MemoryAccess::kProcMem),
    [](const ::testing::TestParamInfo<MemoryAccess>& param) {
      return param.param == MemoryAccess::kProcMem ? "ProcMem"
                                                   : "ProcessVmReadv";
    });

TEST(SamplerBatchTest, OneSyscallPerProcessUpToIovMax) {
  QueueWriterProcess a(GPUQ_QUEUE_WRITER), b(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(a.ok() && b.ok());
  // 500 queues = 500 ranges (one per amd_queue_t): one call. 2000 queues
  // whose read index lies before the write index in memory (not ROCr's
  // layout: two ranges each) = 4000 ranges: four calls.
  auto targets = Targets(a.pid(), a.NewQueues(500, 7, 3));
  auto more = Targets(b.pid(), b.NewQueues(2000, 9, 2));
  for (SampleTarget& t : more) std::swap(t.write_ptr, t.read_ptr);
  ASSERT_EQ(targets.size(), 500u);
  ASSERT_EQ(more.size(), 2000u);
  // Interleave the two processes: the sampler groups them itself.
  std::vector<SampleTarget> mixed;
  for (size_t i = 0; i < 2000; ++i) {
    if (i < 500) mixed.push_back(targets[i]);
    mixed.push_back(more[i]);
  }
  QueueSampler::Options options;
  options.access = MemoryAccess::kProcessVmReadv;
  QueueSampler sampler(options);

  SampleRoundStats stats;
  auto records = Round(sampler, mixed, &stats);
  ASSERT_EQ(records.size(), 2500u);
  EXPECT_EQ(stats.processes, 2u);
  EXPECT_EQ(stats.unreadable, 0u);
  EXPECT_EQ(sampler.read_stats().syscalls, 1u + 4u);
  EXPECT_EQ(sampler.read_stats().ranges, 4500u);
  for (const auto& r : records) {
    ASSERT_EQ(r.flags, 0u);
    // b's pointers are swapped: its "write" index is the read field.
    ASSERT_EQ(r.write_index, r.hdr.tgid == a.pid() ? 7u : 2u);
    ASSERT_EQ(r.read_index, r.hdr.tgid == a.pid() ? 3u : 9u);
  }
  // Every queue once: (tgid, qid) pairs are unique.
  std::vector<std::pair<uint32_t, uint32_t>> keys;
  for (const auto& r : records) keys.emplace_back(r.hdr.tgid, r.queue_id);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());

  // The last queue of the big process moved; the round sees exactly it.
  ASSERT_EQ(b.Advance(1999, 3, 1), "ok 12 3");
  ASSERT_EQ(a.Advance(499, 1, 1), "ok 8 4");
  records = Round(sampler, mixed);
  EXPECT_EQ(Find(records, b.pid(), 1999)->read_index, 12u);
  EXPECT_EQ(Find(records, b.pid(), 1998)->read_index, 9u);
  EXPECT_EQ(Find(records, a.pid(), 499)->write_index, 8u);
  EXPECT_EQ(Find(records, a.pid(), 499)->read_index, 4u);
  EXPECT_EQ(Find(records, a.pid(), 498)->write_index, 7u);
}

TEST(SamplerBatchTest, AFaultMidBatchCostsOneMoreCall) {
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  auto targets = Targets(writer.pid(), writer.NewQueues(10, 4, 4));
  targets[5].read_ptr = writer.Hole();
  QueueSampler::Options options;
  options.access = MemoryAccess::kProcessVmReadv;
  QueueSampler sampler(options);
  SampleRoundStats stats;
  const auto records = Round(sampler, targets, &stats);
  EXPECT_EQ(stats.unreadable, 1u);
  // Ranges: queues 0-4 one each, queue 5 two (its read index is elsewhere),
  // 6-9 one each. The call stops at range 6 (the hole); a second call reads
  // the four after it. The hole is tried once more in /proc/<pid>/mem (an
  // open and a pread): memory process_vm_readv cannot pin reads there.
  EXPECT_EQ(sampler.read_stats().syscalls, 4u);
  EXPECT_EQ(sampler.read_stats().read_through_mem, 0u);
  EXPECT_EQ(Find(records, writer.pid(), 5)->flags, GPUQ_SAMPLE_F_UNREADABLE);
  EXPECT_EQ(Find(records, writer.pid(), 6)->write_index, 4u);
}

TEST(SamplerBatchTest, NoTargetsNoCalls) {
  QueueSampler sampler(QueueSampler::Options{});
  SampleRoundStats stats;
  EXPECT_TRUE(Round(sampler, {}, &stats).empty());
  EXPECT_EQ(stats.processes, 0u);
  EXPECT_EQ(sampler.read_stats().syscalls, 0u);
}

TEST(PeriodicThreadTest, TicksUntilStopped) {
  std::mutex mu;
  std::condition_variable cv;
  int ticks = 0;
  PeriodicThread thread(std::chrono::milliseconds(1), [&] {
    std::lock_guard<std::mutex> lock(mu);
    ++ticks;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ticks >= 3; });
  }
  thread.Stop();
  int after_stop;
  {
    std::lock_guard<std::mutex> lock(mu);
    after_stop = ticks;
  }
  thread.Stop();  // idempotent
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(ticks, after_stop) << "no tick after Stop() returned";
}

// Without ptrace access to the owner (the least-privilege deployment
// without CAP_SYS_PTRACE), samples are denied, not merely unreadable, and
// the log says so once. A child that gave up root samples a root process.
TEST(SamplerDeniedTest, NoPtraceAccessIsDeniedAndSaidOnce) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop to another user";
  QueueWriterProcess writer(GPUQ_QUEUE_WRITER);
  ASSERT_TRUE(writer.ok());
  const auto targets = Targets(writer.pid(), writer.NewQueues(2, 3, 1));
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(out[0]);
    int said = 0;
    Log().SetSink([&said](const std::string& line) {
      if (line.find("queue sampling denied") != std::string::npos &&
          line.find("CAP_SYS_PTRACE") != std::string::npos) {
        ++said;
      }
    });
    std::string result = "setuid failed";
    if (setgroups(0, nullptr) == 0 && setresgid(65534, 65534, 65534) == 0 &&
        setresuid(65534, 65534, 65534) == 0) {
      QueueSampler::Options options;
      options.access = MemoryAccess::kProcessVmReadv;
      QueueSampler sampler(options);
      size_t denied = 0;
      uint32_t flags = 0;
      for (int round = 0; round < 3; ++round) {
        const SampleRoundStats stats =
            sampler.Sample(targets, [&flags](const Event& e) {
              flags |= std::get<gpuq_queue_sample_record>(e).flags;
            });
        denied += stats.denied;
      }
      result = "denied=" + std::to_string(denied) +
               " flags=" + std::to_string(flags) +
               " said=" + std::to_string(said);
    }
    (void)!write(out[1], result.data(), result.size());
    _exit(0);
  }
  close(out[1]);
  std::string result;
  char buf[256];
  for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;) {
    result.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(result, "denied=6 flags=" +
                        std::to_string(GPUQ_SAMPLE_F_UNREADABLE |
                                       GPUQ_SAMPLE_F_DENIED) +
                        " said=1");
}

}  // namespace
}  // namespace gpuq::sampler_test

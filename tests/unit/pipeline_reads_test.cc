// Pipeline::HandleRead: the sampler's and doorbell poller's records wait,
// while Run() reads the source, for what the kernel emitted before the read.
// The race it closes: a queue is destroyed and its queue_id taken by a new
// queue; the sampler, working from the model's older list, reads the old
// address; the pipeline thread has not yet delivered the destroy and the
// create. Applied at once, that read lands on the old queue as a reset and
// its destroy then counts from the wrong baseline.
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "activity_builders.h"
#include "common/clock.h"
#include "model/pipeline.h"

// Its own namespace: the unit tests build as one unity translation unit per
// batch (tests/CMakeLists.txt), where its constants met another file's.
namespace gpuq::pipeline_reads_test {
namespace {

constexpr uint64_t kKey = 0xffff888012340000ull;
constexpr uint32_t kPid = 4711;
constexpr uint64_t kCg = 5861;
constexpr uint32_t kReadGpu = 11437;
constexpr uint32_t kQid = 3;

// Stands for the BPF ring buffer with records in it that the pipeline
// thread has not reached yet (it is busy, or descheduled): Next() hands
// nothing out, not even a timeout, until Release(); then the records in
// order, then timeouts. Thread-safe: the test pushes, Run() pulls.
class HeldSource : public EventSource {
 public:
  void Push(const Event& e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(e);
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }
  NextStatus Next(Event* out, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++polls_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
    if (events_.empty()) {
      lock.unlock();
      std::this_thread::sleep_for(std::min(timeout, kIdle));
      return NextStatus::kTimeout;
    }
    *out = events_.front();
    events_.pop_front();
    return NextStatus::kOk;
  }
  /// Waits until Run() is inside Next() (so it is running).
  void WaitForPoll() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return polls_ > 0; });
  }
  std::string Error() const override { return ""; }
  std::string Name() const override { return "bpf"; }

 private:
  static constexpr std::chrono::milliseconds kIdle{5};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  bool released_ = false;
  int polls_ = 0;
};

uint64_t Submissions(const Snapshot& s) {
  uint64_t n = 0;
  for (const auto& [key, series] : s.queue_series) n += series.submissions;
  return n;
}

TEST(PipelineReadsTest, ReadWaitsForTheDestroyAndCreateBeforeIt) {
  auto owned = std::make_unique<HeldSource>();
  HeldSource* source = owned.get();
  PipelineOptions options;
  options.use_sysfs = false;
  Pipeline pipeline(options, std::move(owned));

  // Queue 3 lives at its usual address; a read before the run counts 30.
  const uint64_t t0 = MonotonicNowNs();
  gpuq_queue_create_event first =
      RocrCreate(kKey, kPid, kCg, kReadGpu, kQid, 1);
  first.hdr.ts_ns = t0;
  pipeline.Handle(Event{first});
  pipeline.HandleRead(
      Event{Sample(kKey, kPid, kCg, kReadGpu, kQid, 30, 30, t0 + 1)});
  ASSERT_EQ(Submissions(pipeline.TakeSnapshot()), 30u);

  // The owner wrote 4 more, destroyed it (its last word: 34) and made a
  // new queue 3 elsewhere; both records wait in the source.
  gpuq_queue_destroy_event gone =
      Destroy(kKey, kPid, kCg, kReadGpu, kQid, GPUQ_QUEUE_COMPUTE,
              GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_WRITE_INDEX);
  gone.hdr.ts_ns = MonotonicNowNs();
  gone.write_index = 34;
  source->Push(Event{gone});
  gpuq_queue_create_event second =
      RocrCreate(kKey, kPid, kCg, kReadGpu, kQid, 2);
  second.write_ptr += 0x1000000;
  second.hdr.ts_ns = MonotonicNowNs();
  source->Push(Event{second});

  std::atomic<bool> stop{false};
  std::thread run([&] { pipeline.Run(stop, std::nullopt); });
  source->WaitForPoll();
  // The sampler's read of the old address after both: what the freed
  // memory held (here 2).
  pipeline.HandleRead(
      Event{Sample(kKey, kPid, kCg, kReadGpu, kQid, 2, 2, MonotonicNowNs())});
  const Snapshot waiting = pipeline.TakeSnapshot();
  EXPECT_EQ(waiting.sample_stats.ok + waiting.sample_stats.reset +
                waiting.sample_stats.unknown_queue,
            1u)
      << "the read is applied before the source delivered what preceded it";

  source->Release();
  Snapshot done;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    done = pipeline.TakeSnapshot();
  } while (done.sample_stats.unknown_queue == 0 &&
           std::chrono::steady_clock::now() < give_up);
  stop.store(true);
  run.join();

  // 30 sampled + 4 by the destroy; the read was of another address than
  // the new queue's, so it counts nothing and resets nothing.
  EXPECT_EQ(Submissions(done), 34u);
  EXPECT_EQ(done.sample_stats.unknown_queue, 1u);
  EXPECT_EQ(done.sample_stats.reset, 0u);
}

TEST(PipelineReadsTest, ReadsStillWaitingAreAppliedWhenRunEnds) {
  auto owned = std::make_unique<HeldSource>();
  HeldSource* source = owned.get();
  PipelineOptions options;
  options.use_sysfs = false;
  Pipeline pipeline(options, std::move(owned));
  pipeline.Handle(Event{RocrCreate(kKey, kPid, kCg, kReadGpu, kQid, 1)});

  std::atomic<bool> stop{false};
  std::thread run([&] { pipeline.Run(stop, std::nullopt); });
  source->WaitForPoll();
  pipeline.HandleRead(
      Event{Sample(kKey, kPid, kCg, kReadGpu, kQid, 12, 10, MonotonicNowNs())});
  EXPECT_EQ(Submissions(pipeline.TakeSnapshot()), 0u);
  stop.store(true);
  source->Release();
  run.join();
  EXPECT_EQ(Submissions(pipeline.TakeSnapshot()), 12u);
  // After the run a read is applied at once.
  pipeline.HandleRead(
      Event{Sample(kKey, kPid, kCg, kReadGpu, kQid, 15, 15, MonotonicNowNs())});
  EXPECT_EQ(Submissions(pipeline.TakeSnapshot()), 15u);
}

}  // namespace
}  // namespace gpuq::pipeline_reads_test

// What the model tells its observer (the report's analysis follows the
// model through it): every queue it adds and removes, with why; what each
// read and the owner's last write index add; eviction windows with their
// end; runlist operations with the GPU it resolved.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "activity_builders.h"
#include "event_builders.h"
#include "model/model.h"
#include "model_views.h"

namespace gpuq::model_observer_test {
namespace {

constexpr uint64_t kPkey = 0xffff888100000000ull;
constexpr uint64_t kCg = 7;

// Writes one line per call, in order.
class Journal : public ModelObserver {
 public:
  std::vector<std::string> lines;

  void QueueAdded(const QueueState& q) override {
    Line("added #" + std::to_string(q.serial) + " q" +
         std::to_string(q.queue_id) + (q.seeded ? " seeded" : ""));
  }
  void QueueSampled(const QueueState& q, uint64_t packets) override {
    Line("sampled #" + std::to_string(q.serial) + " +" +
         std::to_string(packets) + (q.readable() ? "" : " unreadable") +
         " pending " + std::to_string(q.pending()));
  }
  void QueueLastWords(const QueueState& q, uint64_t packets) override {
    Line("last words #" + std::to_string(q.serial) + " +" +
         std::to_string(packets));
  }
  void QueueRemoved(const QueueState& q, uint64_t ts_ns,
                    QueueEnd end) override {
    static const char* const kHow[] = {"destroyed", "replaced", "reconciled"};
    Line("removed #" + std::to_string(q.serial) + " at " +
         std::to_string(ts_ns) + " " + kHow[static_cast<int>(end.how)] +
         (end.how == QueueEnd::How::kDestroyed
              ? " reason " + std::to_string(end.destroy_reason)
              : ""));
  }
  void RunlistApplied(const gpuq_runlist_event& e) override {
    Line("runlist op " + std::to_string(e.op) + " gpu " +
         std::to_string(e.gpu_id));
  }
  void Evicted(const EvictionNotice& n, bool opened) override {
    Line("evicted #" + std::to_string(n.serial) + " pid " +
         std::to_string(n.tgid) + (opened ? " opened" : " repeat"));
  }
  void EvictionEnded(const EvictionNotice& n, uint64_t end_ns,
                     bool restored) override {
    Line("eviction #" + std::to_string(n.serial) + " ended at " +
         std::to_string(end_ns) + (restored ? " restored" : " exited"));
  }

 private:
  void Line(std::string s) { lines.push_back(std::move(s)); }
};

class ModelObserverTest : public ::testing::Test {
 protected:
  ModelObserverTest() { model_.SetObserver(&journal_); }
  template <typename E>
  void Apply(const E& e) {
    model_.Apply(Event{e});
  }
  Model model_;
  Journal journal_;
};

TEST_F(ModelObserverTest, ReadsAndTheLastWordsAddWhatTheModelCounts) {
  Apply(RocrCreate(kPkey, 10, kCg, 1, 0, 0x100));
  Apply(Sample(kPkey, 10, kCg, 1, 0, 40, 30, 5));
  Apply(Sample(kPkey, 10, kCg, 1, 0, 0, 0, 6, /*readable=*/false));
  gpuq_queue_destroy_event d =
      Destroy(kPkey, 10, kCg, 1, 0, GPUQ_QUEUE_COMPUTE, GPUQ_DESTROY_IOCTL,
              GPUQ_DESTROY_F_WRITE_INDEX);
  d.hdr.ts_ns = 9;
  d.write_index = 55;
  Apply(d);
  EXPECT_EQ(journal_.lines,
            (std::vector<std::string>{
                "added #1 q0", "sampled #1 +40 pending 10",
                "sampled #1 +0 unreadable pending 0", "last words #1 +15",
                "removed #1 at 9 destroyed reason 1"}));
  EXPECT_EQ(model_.Series().queue_series.begin()->second.submissions, 55u);
}

// A seeded queue keeps its number when a record names its kfd_process.
TEST_F(ModelObserverTest, ASeededQueueKeepsItsNumberWhenAdopted) {
  Apply(Seeded(10, kCg, 1, 3));
  Apply(Create(kPkey, 10, kCg, 1, 4));
  gpuq_queue_destroy_event d = Destroy(kPkey, 10, kCg, 1, 3, GPUQ_QUEUE_COMPUTE,
                                       GPUQ_DESTROY_PROCESS_EXIT);
  d.hdr.ts_ns = 20;
  Apply(d);
  EXPECT_EQ(journal_.lines,
            (std::vector<std::string>{"added #1 q3 seeded", "added #2 q4",
                                      "removed #1 at 20 destroyed reason 2"}));
}

// Lost destroys: a second create of a live key, and a ROCr queue at the
// amd_queue_t a live one of the process still holds, replace it.
TEST_F(ModelObserverTest, ALostDestroyIsAReplacement) {
  gpuq_queue_create_event again = Create(kPkey, 10, kCg, 1, 0);
  again.hdr.ts_ns = 30;
  gpuq_queue_create_event same_place = RocrCreate(kPkey, 10, kCg, 1, 5, 0x200);
  same_place.write_ptr = RocrWritePtr(1);
  same_place.hdr.ts_ns = 40;
  Apply(Create(kPkey, 10, kCg, 1, 0));
  Apply(again);
  Apply(RocrCreate(kPkey, 10, kCg, 1, 1, 0x100));
  Apply(same_place);
  EXPECT_EQ(journal_.lines,
            (std::vector<std::string>{
                "added #1 q0", "removed #1 at 30 replaced", "added #2 q0",
                "added #3 q1", "removed #3 at 40 replaced", "added #4 q5"}));
  EXPECT_EQ(LiveQueues(model_).size(), 2u);
}

TEST_F(ModelObserverTest, ReconciliationRemovesAndTheLateDestroyAddsItsWords) {
  Apply(RocrCreate(kPkey, 10, kCg, 1, 0, 0x100));
  gpuq_queue_destroy_event lost = Recovered(kPkey, 10, 0);
  lost.hdr.ts_ns = 50;
  Apply(lost);
  gpuq_queue_destroy_event d =
      Destroy(kPkey, 10, kCg, 1, 0, GPUQ_QUEUE_COMPUTE, GPUQ_DESTROY_IOCTL,
              GPUQ_DESTROY_F_WRITE_INDEX);
  d.write_index = 8;
  Apply(d);
  EXPECT_EQ(journal_.lines, (std::vector<std::string>{
                                "added #1 q0", "removed #1 at 50 reconciled",
                                "last words #1 +8"}));
}

TEST_F(ModelObserverTest, EvictionWindowsEndByRestoreOrExit) {
  Apply(Create(kPkey, 10, kCg, 1, 0));
  Apply(
      Eviction(kPkey, 10, kCg, 1, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_SVM, 100));
  Apply(
      Eviction(kPkey, 10, kCg, 1, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_SVM, 110));
  Apply(Eviction(kPkey, 10, kCg, 1, GPUQ_EVICTION_RESTORE, GPUQ_TRIGGER_SVM,
                 150));
  Apply(
      Eviction(kPkey, 10, kCg, 1, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM, 200));
  gpuq_process_exit_event exit = Exit(kPkey, 10, kCg);
  exit.hdr.ts_ns = 300;
  Apply(exit);
  // Without an owner the model drops it: nothing is told.
  Apply(Eviction(kPkey, 10, 0, 1, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_SVM, 400));
  EXPECT_EQ(
      journal_.lines,
      (std::vector<std::string>{
          "added #1 q0", "evicted #1 pid 10 opened", "evicted #2 pid 10 repeat",
          "eviction #1 ended at 150 restored", "evicted #3 pid 10 opened",
          "eviction #3 ended at 300 exited"}));
}

// An MES op on a seeded queue names no GPU; the model's is told.
TEST_F(ModelObserverTest, RunlistOpsCarryTheGpuTheModelResolved) {
  Apply(Seeded(10, kCg, 4, 2));
  gpuq_runlist_event remove = Runlist(
      kPkey, 10, kCg, 0, GPUQ_RUNLIST_MES_REMOVE, GPUQ_CAUSE_UPDATE, 1000);
  remove.queue_id = 2;
  Apply(remove);
  Apply(Runlist(kPkey, 10, kCg, 3, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 1000));
  EXPECT_EQ(
      journal_.lines,
      (std::vector<std::string>{
          "added #1 q2 seeded",
          "runlist op " + std::to_string(GPUQ_RUNLIST_MES_REMOVE) + " gpu 4",
          "runlist op " + std::to_string(GPUQ_RUNLIST_MAP) + " gpu 3"}));
}

}  // namespace
}  // namespace gpuq::model_observer_test

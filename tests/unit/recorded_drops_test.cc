// What the recording agent's source lost reaches the capture (its last
// record, gpuq_source_drops_record), and a replay and a report of it count
// those events in gpuq_events_dropped_total as the recording agent did. The
// source is FakeEventSource, standing for the ring buffer (BpfSource); the
// replay tier re-records a capture with the real binary.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include "event_builders.h"
#include "export/collector.h"
#include "model/pipeline.h"
#include "report/run_analysis.h"
#include "sources/capture.h"
#include "sources/fake_source.h"
#include "sources/replay_source.h"
#include "test_support.h"

namespace gpuq::recorded_drops_test {
namespace {

PipelineOptions Offline() {
  PipelineOptions options;
  options.use_sysfs = false;
  return options;
}

std::map<std::string, uint64_t> Dropped(const Snapshot& s) {
  std::map<std::string, uint64_t> out;
  for (const auto& [reason, n] : DroppedEvents(s)) {
    if (n > 0) out[reason] = n;
  }
  return out;
}

gpuq_source_drops_record DropsRecord(uint64_t ringbuf_full,
                                     uint64_t doorbell_map_full) {
  gpuq_source_drops_record r{};
  r.hdr.type = GPUQ_EV_SOURCE_DROPS;
  r.hdr.size = sizeof(r);
  r.hdr.ts_ns = 2000;
  r.ringbuf_full = ringbuf_full;
  r.doorbell_map_full = doorbell_map_full;
  return r;
}

// A run whose ring buffer overflowed 5 times and whose programs the kernel
// skipped twice, recorded as `record` does.
Capture RecordRunThatLostEvents(const TempDir& tmp) {
  const std::string path = tmp.path() + "/lost.gpuqcap";
  std::string error;
  {
    auto writer = CaptureWriter::Create(path, &error);
    EXPECT_NE(writer, nullptr) << error;
    SourceDrops lost;
    lost.ringbuf_full = 5;
    lost.prog_skipped = 2;
    Pipeline pipeline(
        Offline(),
        std::make_unique<FakeEventSource>(
            std::vector<Event>{Create(0xffff888100000001, 10, 0, 1, 0)}, lost));
    pipeline.SetDoorbellMapFull(3);
    pipeline.RecordTo(writer.get());
    std::atomic<bool> stop{false};
    EXPECT_EQ(pipeline.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
    pipeline.RecordSourceDrops();  // what `record` does last
    EXPECT_TRUE(writer->Close(&error)) << error;
  }
  Capture capture;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  return capture;
}

TEST(RecordedDropsTest, TheCaptureEndsWithWhatTheSourceLost) {
  TempDir tmp;
  const Capture capture = RecordRunThatLostEvents(tmp);
  ASSERT_EQ(capture.events.size(), 2u);
  const auto* last =
      std::get_if<gpuq_source_drops_record>(&capture.events.back());
  ASSERT_NE(last, nullptr) << "the last record is not the source's drops";
  EXPECT_EQ(last->ringbuf_full, 5u);
  EXPECT_EQ(last->prog_skipped, 2u);
  EXPECT_EQ(last->doorbell_map_full, 3u);
  EXPECT_EQ(last->map_full + last->decode_error + last->kfd_exit_skipped +
                last->args_unreadable,
            0u);
}

TEST(RecordedDropsTest, ReplayAndReportCountThemAsTheRecorderDid) {
  TempDir tmp;
  const Capture capture = RecordRunThatLostEvents(tmp);
  const std::map<std::string, uint64_t> want = {
      {"ringbuf_full", 5}, {"prog_skipped", 2}, {"doorbell_map_full", 3}};

  Pipeline replay(Offline(), std::make_unique<ReplayEventSource>(capture));
  std::atomic<bool> stop{false};
  ASSERT_EQ(replay.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  EXPECT_EQ(Dropped(replay.TakeSnapshot()), want);

  const report::RunReport r = report::AnalyzeCapture(capture, "lost", 1.0);
  EXPECT_EQ(r.events_dropped, 10u);
  EXPECT_EQ(r.events_dropped_by_reason, want);
}

TEST(RecordedDropsTest, TheLastRecordCountsNotTheirSum) {
  // A re-recorded capture carries its input's record, then its own, which
  // already includes the input's.
  Pipeline pipeline(Offline(), nullptr);
  pipeline.Handle(DropsRecord(3, 0));
  pipeline.Handle(DropsRecord(5, 1));
  EXPECT_EQ(Dropped(pipeline.TakeSnapshot()),
            (std::map<std::string, uint64_t>{{"ringbuf_full", 5},
                                             {"doorbell_map_full", 1}}));
}

}  // namespace
}  // namespace gpuq::recorded_drops_test

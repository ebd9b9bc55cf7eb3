// What `record` warns about once its capture is closed
// (cli/recording_warnings.h): one line per kind of loss, with its counts, and
// nothing for a capture that holds everything its recording saw.
#include "cli/recording_warnings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuq {
namespace {

TEST(RecordingWarningsTest, NothingLostSaysNothing) {
  const Snapshot s;
  EXPECT_TRUE(RecordingWarnings({s, 0, "", 0}).empty());
  // A --container filter that kept records is no warning either.
  EXPECT_TRUE(RecordingWarnings({s, 0, "vllm", 12}).empty());
}

TEST(RecordingWarningsTest, EachLossIsOneLineWithItsCounts) {
  Snapshot s;
  s.source_drops.ringbuf_full = 5;
  s.source_drops.prog_skipped = 2;
  s.doorbell_map_full = 3;
  const std::vector<std::string> warnings =
      RecordingWarnings({s, 4, "vllm", 0});
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0],
            "events lost before they reached the capture: ringbuf_full=5, "
            "prog_skipped=2, doorbell_map_full=3 (gpuq_events_dropped_total); "
            "its counts are short by them");
  EXPECT_EQ(warnings[1], "left out 4 records that would not read back");
  EXPECT_EQ(warnings[2],
            "no records of container vllm (the capture has the GPU topology "
            "only; check the name with gpuq-agent --once)");
}

TEST(RecordingWarningsTest, RecordsLeftOutAloneAreSaid) {
  const Snapshot s;
  EXPECT_EQ(
      RecordingWarnings({s, 1, "", 0}),
      std::vector<std::string>{"left out 1 record that would not read back"});
}

}  // namespace
}  // namespace gpuq

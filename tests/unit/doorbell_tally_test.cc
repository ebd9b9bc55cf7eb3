// DoorbellTally (common/doorbell_tally.h): the one place the model, a
// recording's baseline and the poller compare and subtract doorbell counts.
#include "common/doorbell_tally.h"

#include <gtest/gtest.h>

namespace gpuq {
namespace {

DoorbellTally TallyOf(uint64_t rings, uint64_t dispatches, uint64_t ext,
                      uint64_t barrier_bit) {
  DoorbellTally t;
  t.doorbells = rings;
  t.by_packet[GPUQ_PACKET_DISPATCH] = dispatches;
  t.by_packet[GPUQ_PACKET_EXT_DISPATCH] = ext;
  t.barrier_dispatches = barrier_bit;
  return t;
}

TEST(DoorbellTallyTest, RoundTripsThroughTheCaptureRecord) {
  const DoorbellTally t = TallyOf(7, 5, 3, 2);
  gpuq_doorbell_count_record r{};
  t.WriteTo(&r);
  EXPECT_EQ(r.doorbells, 7u);
  EXPECT_EQ(r.by_packet[GPUQ_PACKET_EXT_DISPATCH], 3u);
  EXPECT_EQ(r.barrier_dispatches, 2u);
  EXPECT_EQ(DoorbellTally::Of(r), t);
}

TEST(DoorbellTallyTest, AnyCounterGoingBackwardsMeansARecreatedEntry) {
  const DoorbellTally base = TallyOf(7, 5, 3, 2);
  EXPECT_FALSE(base.FellBelow(base));
  EXPECT_FALSE(TallyOf(8, 5, 3, 2).FellBelow(base));
  EXPECT_TRUE(TallyOf(6, 5, 3, 2).FellBelow(base));
  EXPECT_TRUE(TallyOf(7, 4, 3, 2).FellBelow(base));
  EXPECT_TRUE(TallyOf(7, 5, 2, 2).FellBelow(base));
  EXPECT_TRUE(TallyOf(7, 5, 3, 1).FellBelow(base));
}

TEST(DoorbellTallyTest, SinceAndAddAreInverse) {
  const DoorbellTally base = TallyOf(7, 5, 3, 2);
  const DoorbellTally now = TallyOf(10, 9, 3, 6);
  const DoorbellTally d = now.Since(base);
  EXPECT_EQ(d, TallyOf(3, 4, 0, 4));
  DoorbellTally sum = base;
  sum += d;
  EXPECT_EQ(sum, now);
  EXPECT_NE(sum, base);
}

}  // namespace
}  // namespace gpuq

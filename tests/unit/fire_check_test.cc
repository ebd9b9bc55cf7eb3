// FiresWithin (agent/loader/fire_check.h): the retry policy of the feature
// probes. A counter stands for the BPF program's hit count; the real
// programs firing, or being skipped under lazy preemption, are the kernel
// tiers' (tests/kernel: every agent start plans from these probes).
#include "loader/fire_check.h"

#include <gtest/gtest.h>

#include <chrono>

namespace gpuq {
namespace {

using std::chrono::microseconds;

TEST(FiresWithinTest, FiresAtOnceWithoutRetrying) {
  int triggers = 0;
  EXPECT_TRUE(FiresWithin(
      20, microseconds(0), [&] { ++triggers; }, [&] { return triggers > 0; }));
  EXPECT_EQ(triggers, 1);
}

TEST(FiresWithinTest, SkippedTriesAreRetriedUntilItFires) {
  // The first four tries skipped (another task preempted inside the
  // program), the fifth counts.
  int triggers = 0;
  EXPECT_TRUE(FiresWithin(
      20, microseconds(0), [&] { ++triggers; }, [&] { return triggers >= 5; }));
  EXPECT_EQ(triggers, 5);
}

TEST(FiresWithinTest, NeverFiringStopsAfterTheRounds) {
  // A disarmed kprobe: nothing ever fires, and the probe gives up.
  int triggers = 0;
  EXPECT_FALSE(FiresWithin(
      20, microseconds(0), [&] { ++triggers; }, [] { return false; }));
  EXPECT_EQ(triggers, 20);
}

}  // namespace
}  // namespace gpuq

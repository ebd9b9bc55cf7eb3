// /healthz's answer from what the daemon knows (export/health.h,
// docs/operations.md): every reason, in the order they are checked.
#include "export/health.h"

#include <gtest/gtest.h>

#include <chrono>

namespace gpuq::health_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A live daemon whose eBPF source is attached and whose loop just went
// round: healthy.
HealthFacts LiveAndWell() {
  HealthFacts f;
  f.bpf_source = true;
  f.kfd_sysfs = true;
  f.kfd_sysfs_path = "/host/sys/class/kfd/kfd";
  f.loop_running = true;
  f.since_last_pass = milliseconds(20);
  return f;
}

TEST(HealthTest, LiveWithTheEbpfSourceOrTheSysfsInventoryIsOk) {
  EXPECT_TRUE(JudgeHealth(LiveAndWell()).ok);
  HealthFacts f = LiveAndWell();
  f.bpf_source = false;  // no hook attached: the KFD sysfs inventory
  EXPECT_TRUE(JudgeHealth(f).ok);
  f.bpf_source = true;  // hooks attached: sysfs is not needed
  f.kfd_sysfs = false;
  EXPECT_TRUE(JudgeHealth(f).ok);
}

TEST(HealthTest, LiveWithoutAnySourceSaysWhereItLooked) {
  HealthFacts f = LiveAndWell();
  f.bpf_source = false;
  f.kfd_sysfs = false;
  const HealthStatus h = JudgeHealth(f);
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.reason,
            "no event source: no kernel hook is attached and amdkfd's sysfs "
            "(/host/sys/class/kfd/kfd) is absent");
}

TEST(HealthTest, TheLoopMustHaveStartedAndBeGoingRound) {
  HealthFacts f = LiveAndWell();
  f.loop_running = false;
  f.since_last_pass.reset();
  EXPECT_EQ(JudgeHealth(f).reason,
            "starting: the event loop has not started yet");
  f.loop_running = true;  // in Run(), before its first pass
  EXPECT_FALSE(JudgeHealth(f).ok);
  f.since_last_pass = kEventLoopStalledAfter - milliseconds(1);
  EXPECT_TRUE(JudgeHealth(f).ok);
  f.since_last_pass = seconds(12) + milliseconds(340);
  EXPECT_EQ(JudgeHealth(f).reason,
            "the event loop is stuck: it has not gone round for 12.3 s");
  f.loop_running = false;
  f.since_last_pass = milliseconds(1);
  EXPECT_EQ(JudgeHealth(f).reason, "the event loop has ended");
}

TEST(HealthTest, AReplayIsOkWhileItPlaysAndOnceItEnded) {
  HealthFacts f;
  f.replay = true;  // no eBPF source, no sysfs: not needed
  f.loop_running = true;
  f.since_last_pass = milliseconds(1);
  EXPECT_TRUE(JudgeHealth(f).ok);
  f.loop_running = false;
  f.replay_finished = true;
  f.since_last_pass = seconds(3600);
  EXPECT_TRUE(JudgeHealth(f).ok);
  // A live loop that ended is not finished, whatever the flag says.
  f.replay = false;
  f.bpf_source = true;
  EXPECT_EQ(JudgeHealth(f).reason, "the event loop has ended");
}

TEST(HealthTest, StoppingComesFirst) {
  HealthFacts f = LiveAndWell();
  f.stopping = true;
  EXPECT_EQ(JudgeHealth(f).reason, "stopping");
  f.replay = true;
  f.replay_finished = true;
  EXPECT_FALSE(JudgeHealth(f).ok);
}

}  // namespace
}  // namespace gpuq::health_test

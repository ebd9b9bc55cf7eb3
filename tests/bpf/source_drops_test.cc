// Host BPF: BpfEventSource::Drops() reads the kernel side's per-CPU drop
// counters; a failed read keeps the last value (a counter never goes back)
// and is logged. The `drops` map is stood in for by a per-CPU hash of the
// same key and value (an array's elements cannot be removed to make a read
// fail); the real array is read in sched_events_test and the kernel tiers.
// Needs root.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gpuq/abi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "loader/kernel_features.h"
#include "log_capture.h"
#include "sources/bpf_source.h"

namespace gpuq {
namespace {

// The maps a BpfEventSource reads: an events ring buffer, and per-CPU drop
// counters of the map type a test asks for (MakeDrops); both closed at
// TearDown, whatever the outcome.
class SourceDropsTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!HasBpfPrivileges()) {
      GTEST_SKIP() << "needs root (CAP_BPF or CAP_SYS_ADMIN) to create maps";
    }
    events_ =
        bpf_map_create(BPF_MAP_TYPE_RINGBUF, "events", 0, 0, 4096 * 4, nullptr);
    ASSERT_GE(events_, 0);
  }
  void TearDown() override {
    for (int fd : {drops_, events_}) {
      if (fd >= 0) close(fd);
    }
  }
  void MakeDrops(bpf_map_type drops_type) {
    drops_ = bpf_map_create(drops_type, "drops", sizeof(uint32_t),
                            sizeof(uint64_t), GPUQ_DROP__MAX, nullptr);
    ASSERT_GE(drops_, 0);
  }

  int events_ = -1;
  int drops_ = -1;
};

TEST_F(SourceDropsTest, AFailedReadKeepsTheLastValueAndIsLogged) {
  const int ncpus = libbpf_num_possible_cpus();
  ASSERT_GT(ncpus, 0);
  ASSERT_NO_FATAL_FAILURE(MakeDrops(BPF_MAP_TYPE_PERCPU_HASH));
  const uint32_t reason = GPUQ_DROP_RINGBUF_FULL;
  std::vector<uint64_t> per_cpu(static_cast<size_t>(ncpus), 3);
  ASSERT_EQ(bpf_map_update_elem(drops_, &reason, per_cpu.data(), BPF_ANY), 0);

  const LogCapture log;
  {
    BpfEventSource source(events_, drops_);
    ASSERT_TRUE(source.Ok()) << source.Error();
    EXPECT_EQ(source.Drops().ringbuf_full, 3u * ncpus);
    ASSERT_EQ(bpf_map_delete_elem(drops_, &reason), 0);
    EXPECT_EQ(source.Drops().ringbuf_full, 3u * ncpus)
        << "a counter read that failed went back";
  }
  EXPECT_TRUE(log.Said("cannot read the kernel's drop counter 0"))
      << "the failed read was not logged";
}

// A program whose run counts cannot be read (here: an fd that is no BPF
// object) is logged, and the sum keeps what it last read of it (0 here: a
// non-zero skip count needs a program that recursed, which only the kernel
// tiers provoke).
TEST_F(SourceDropsTest, AProgramThatCannotBeReadIsLogged) {
  ASSERT_NO_FATAL_FAILURE(MakeDrops(BPF_MAP_TYPE_PERCPU_ARRAY));
  const int not_a_program = open("/dev/null", O_RDONLY);  // no BPF object
  ASSERT_GE(not_a_program, 0);
  const LogCapture log;
  {
    BpfEventSource source(events_, drops_, {not_a_program});
    ASSERT_TRUE(source.Ok()) << source.Error();
    EXPECT_EQ(source.Drops().prog_skipped, 0u);
  }
  EXPECT_TRUE(log.Said("cannot read a program's skipped runs"))
      << "the failed read was not logged";
  close(not_a_program);
}

}  // namespace
}  // namespace gpuq

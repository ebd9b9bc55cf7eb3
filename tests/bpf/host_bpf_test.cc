// Host BPF: gpuq's kernel programs against this kernel's verifier (with
// this kernel's BTF, and with Debian 6.1's and 6.12's real amdkfd),
// and the real ring buffer -> BpfEventSource path. Needs root; this host has
// no kprobes, no fentry and no amdgpu, so attaching the KFD hooks for real is
// the QEMU tier's job (tests/kernel).
#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "loader/bpf_loader.h"
#include "loader/kernel_features.h"
#include "ringbuf_probe.skel.h"
#include "sources/bpf_source.h"
#include "test_support.h"

namespace gpuq {
namespace {

// Debian's real amdkfd, as btf_custom_path takes it: a kernel's vmlinux and
// amdgpu.ko BTF as one standalone file (debian_btf.sh, kfd_btf standalone),
// "6.1/kfd" or "6.12/kfd"; "6.12/kfd-badtype" and "6.12/kfd-badsched" are
// its negative controls, one amdkfd field of another kind.
std::string Layout(const std::string& name) {
  return std::string(GPUQ_DEBIAN_BTF_DIR) + "/" + name + ".btf";
}

#define REQUIRE_LAYOUT(name)                                           \
  if (::access(Layout(name).c_str(), R_OK) != 0) {                     \
    GTEST_SKIP()                                                       \
        << "no " << Layout(name)                                       \
        << ": Debian's amdgpu BTF could not be had (debian_btf_setup " \
           "says why); the kernel tiers load against the real one";    \
  }

#define REQUIRE_BPF_PRIVILEGES()                                            \
  if (!HasBpfPrivileges()) {                                                \
    GTEST_SKIP() << "needs root (CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN) to " \
                    "load BPF programs";                                    \
  }

TEST(VerifierTest, KprobeProgramsPassOnThisKernel) {
  REQUIRE_BPF_PRIVILEGES();
  // Relocated against this kernel's own BTF (no amdgpu here: the amdkfd
  // reads are dead branches, which is what must load on such a host).
  EXPECT_EQ(BpfLoader::VerifyPrograms(ProbeTier::kBtfKprobe), "");
}

TEST(VerifierTest, KprobeProgramsPassAgainstAmdkfd61Layout) {
  REQUIRE_BPF_PRIVILEGES();
  REQUIRE_LAYOUT("6.1/kfd");
  EXPECT_EQ(BpfLoader::VerifyPrograms(ProbeTier::kBtfKprobe, Layout("6.1/kfd")),
            "");
}

TEST(VerifierTest, KprobeProgramsPassAgainstAmdkfd612Layout) {
  REQUIRE_BPF_PRIVILEGES();
  REQUIRE_LAYOUT("6.12/kfd");
  EXPECT_EQ(
      BpfLoader::VerifyPrograms(ProbeTier::kBtfKprobe, Layout("6.12/kfd")), "");
}

TEST(VerifierTest, ArgsKprobeProgramsPassOnThisKernel) {
  REQUIRE_BPF_PRIVILEGES();
  // The BTF-free bodies: through this kernel's verifier with its own BTF
  // (no amdgpu types at all, which is what they are for).
  EXPECT_EQ(BpfLoader::VerifyPrograms(ProbeTier::kArgsKprobe), "");
}

TEST(VerifierTest, ArgsKprobeProgramsPassAgainstAmdkfdLayouts) {
  REQUIRE_BPF_PRIVILEGES();
  REQUIRE_LAYOUT("6.1/kfd");
  REQUIRE_LAYOUT("6.12/kfd");
  // With amdkfd types present they must still load (no CO-RE read of them).
  EXPECT_EQ(
      BpfLoader::VerifyPrograms(ProbeTier::kArgsKprobe, Layout("6.1/kfd")), "");
  EXPECT_EQ(
      BpfLoader::VerifyPrograms(ProbeTier::kArgsKprobe, Layout("6.12/kfd")),
      "");
}

TEST(VerifierTest, ArgsKprobeProgramsReadNoAmdkfdStruct) {
  REQUIRE_BPF_PRIVILEGES();
  REQUIRE_LAYOUT("6.12/kfd-badtype");
  REQUIRE_LAYOUT("6.12/kfd-badsched");
  // The negative controls above fail the CO-RE bodies on a wrong amdkfd
  // field; the args bodies must not even notice it.
  EXPECT_EQ(BpfLoader::VerifyPrograms(ProbeTier::kArgsKprobe,
                                      Layout("6.12/kfd-badtype")),
            "");
  EXPECT_EQ(BpfLoader::VerifyPrograms(ProbeTier::kArgsKprobe,
                                      Layout("6.12/kfd-badsched")),
            "");
}

TEST(FeatureProbeTest, AgreesWithWhatLoads) {
  REQUIRE_BPF_PRIVILEGES();
  // The planner's fentry answer comes from a real load+attach+fire, never a
  // guess: it must agree with whether the fentry programs load here.
  KernelFeatures f;
  ProbeAttachKinds(&f);
  ASSERT_TRUE(f.attach_probed);
  EXPECT_FALSE(f.fentry_note.empty());
  EXPECT_FALSE(f.kprobe_note.empty());
  // This host (and any with vmlinux BTF and BPF) has raw tracepoints.
  EXPECT_TRUE(f.tracepoints) << f.tracepoint_note;
  if (!f.fentry) {
    EXPECT_NE(f.fentry_note.find("refused"), std::string::npos)
        << f.fentry_note;
  }
}

TEST(VerifierTest, EnumFieldReadAsIntegerIsRefused) {
  REQUIRE_BPF_PRIVILEGES();
  REQUIRE_LAYOUT("6.12/kfd-badtype");
  // Negative control for the two layout tests above: it must fail on the
  // amdkfd field itself, not on anything else missing from the layout BTF.
  const std::string error = BpfLoader::VerifyPrograms(
      ProbeTier::kBtfKprobe, Layout("6.12/kfd-badtype"));
  EXPECT_NE(error.find("queue.properties.type"), std::string::npos) << error;
}

TEST(VerifierTest, EvictionFieldOfWrongTypeIsRefused) {
  REQUIRE_BPF_PRIVILEGES();
  REQUIRE_LAYOUT("6.12/kfd-badsched");
  // The same control for the runlist and eviction hooks: the eviction programs
  // must reach the verifier with qcm_process_device.evicted relocated, not dead
  // code.
  const std::string error = BpfLoader::VerifyPrograms(
      ProbeTier::kBtfKprobe, Layout("6.12/kfd-badsched"));
  EXPECT_NE(error.find("qcm_process_device.evicted"), std::string::npos)
      << error;
}

TEST(VerifierTest, EveryHookHasItsProgramsInTheObject) {
  // Every tier's programs, fentry twins included (they may not load on
  // this kernel, but they must be in the object): opening needs no root.
  EXPECT_EQ(BpfLoader::FindEveryProgram(), "");
}

// The ids the fentry tier hands libbpf at load (loader/trace_targets.h) are
// the ones libbpf's own search by name would find (find_kernel_btf_id:
// vmlinux's BTF first, then amdgpu's own types), for every hooked function
// of Debian's 6.1, 6.12 and 7.3 kernels; the QEMU tier attaches by them.
TEST(BtfFuncIdsTest, AreWhatLibbpfsSearchFinds) {
  for (const std::string label : {"6.1", "6.12", "7.3"}) {
    const std::string dir = std::string(GPUQ_DEBIAN_BTF_DIR) + "/" + label;
    if (::access((dir + "/amdgpu.btf").c_str(), R_OK) != 0) {
      GTEST_SKIP() << "no " << dir << "/amdgpu.btf: Debian's amdgpu BTF "
                   << "could not be had (debian_btf_setup says why); the "
                      "QEMU tier attaches by these ids";
    }
    // As /sys/kernel/btf names them.
    TempDir sysfs_btf;
    ASSERT_EQ(::symlink((dir + "/vmlinux.btf").c_str(),
                        sysfs_btf.File("vmlinux").c_str()),
              0);
    ASSERT_EQ(::symlink((dir + "/amdgpu.btf").c_str(),
                        sysfs_btf.File("amdgpu").c_str()),
              0);
    KernelFeatures f;
    f.amdgpu_btf = true;
    ScanBtf(sysfs_btf.path(), HookFunctions(), &f);
    ASSERT_GE(f.btf_funcs.size(), 20u) << label;

    btf* vmlinux = btf__parse((dir + "/vmlinux.btf").c_str(), nullptr);
    ASSERT_EQ(libbpf_get_error(vmlinux), 0) << label;
    btf* amdgpu = btf__parse_split((dir + "/amdgpu.btf").c_str(), vmlinux);
    ASSERT_EQ(libbpf_get_error(amdgpu), 0) << label;
    size_t in_vmlinux = 0;
    for (const auto& [name, got] : f.btf_funcs) {
      const int core =
          btf__find_by_name_kind(vmlinux, name.c_str(), BTF_KIND_FUNC);
      // Over the split BTF, from vmlinux's first type: amdgpu's own where
      // vmlinux has none.
      const int split =
          btf__find_by_name_kind(amdgpu, name.c_str(), BTF_KIND_FUNC);
      const unsigned want = static_cast<unsigned>(core > 0 ? core : split);
      EXPECT_EQ(got.id, want) << label << " " << name;
      EXPECT_EQ(got.amdgpu, core <= 0) << label << " " << name;
      in_vmlinux += core > 0 ? 1 : 0;
    }
    // Both kinds of target are covered: core kernel hooks and amdkfd's.
    EXPECT_GE(in_vmlinux, 1u) << label;
    EXPECT_LT(in_vmlinux, f.btf_funcs.size()) << label;
    btf__free(amdgpu);
    btf__free(vmlinux);
  }
}

TEST(VerifierTest, FentryPrograms) {
  REQUIRE_BPF_PRIVILEGES();
  const std::string error = BpfLoader::VerifyPrograms(ProbeTier::kBtfFentry);
  if (!error.empty()) {
    GTEST_SKIP() << "fentry programs cannot load on this kernel (" << error
                 << "); the QEMU tier (tests/kernel) loads them against "
                    "Debian's amdgpu";
  }
}

/// The test probe loaded and attached, filtered to this process.
class RingBufferTest : public ::testing::Test {
 protected:
  void Load(uint32_t ring_bytes) {
    skel_ = ringbuf_probe__open();
    ASSERT_NE(skel_, nullptr);
    skel_->rodata->target_tgid = static_cast<uint32_t>(getpid());
    if (ring_bytes != 0) {
      ASSERT_EQ(bpf_map__set_max_entries(skel_->maps.events, ring_bytes), 0);
    }
    ASSERT_EQ(ringbuf_probe__load(skel_), 0);
    ASSERT_EQ(ringbuf_probe__attach(skel_), 0);
  }
  void TearDown() override {
    if (skel_ != nullptr) ringbuf_probe__destroy(skel_);
  }
  static void Trigger(int times) {
    for (int i = 0; i < times; ++i) syscall(SYS_getppid);
  }
  /// Drains the source until `want` events or the first quiet poll (the
  /// triggers ran before draining, so a quiet poll means nothing is left).
  static std::vector<Event> Drain(BpfEventSource* source, size_t want) {
    std::vector<Event> events;
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (events.size() < want && std::chrono::steady_clock::now() < give_up) {
      Event e;
      const NextStatus status =
          source->Next(&e, std::chrono::milliseconds(200));
      if (status != NextStatus::kOk) break;
      events.push_back(e);
    }
    return events;
  }
  ringbuf_probe* skel_ = nullptr;
};

TEST_F(RingBufferTest, DeliversEveryEventWithItsFields) {
  REQUIRE_BPF_PRIVILEGES();
  Load(0);
  BpfEventSource source(bpf_map__fd(skel_->maps.events),
                        bpf_map__fd(skel_->maps.drops));
  ASSERT_TRUE(source.Ok()) << source.Error();
  Trigger(100);
  const std::vector<Event> events = Drain(&source, 100);
  ASSERT_EQ(events.size(), 100u);
  for (size_t i = 0; i < events.size(); ++i) {
    const auto* e = std::get_if<gpuq_queue_create_event>(&events[i]);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->hdr.size, sizeof(gpuq_queue_create_event));
    EXPECT_EQ(e->hdr.tgid, static_cast<uint32_t>(getpid()));
    EXPECT_EQ(e->hdr.process_key,
              0xffff888100000000ull | static_cast<uint32_t>(getpid()));
    EXPECT_EQ(e->gpu_id, 0x1234u);
    EXPECT_EQ(e->queue_id, i);  // ring order is submission order
    EXPECT_EQ(e->queue_type, static_cast<uint32_t>(GPUQ_QUEUE_SDMA));
    EXPECT_EQ(e->flags, 0u);  // reserve_event zeroed the record
  }
  const SourceDrops drops = source.Drops();
  EXPECT_EQ(drops.ringbuf_full, 0u);
  EXPECT_EQ(drops.decode_error, 0u);
}

TEST_F(RingBufferTest, EveryLostEventIsCounted) {
  REQUIRE_BPF_PRIVILEGES();
  Load(4096);  // one page: room for ~34 records of 120 bytes
  BpfEventSource source(bpf_map__fd(skel_->maps.events),
                        bpf_map__fd(skel_->maps.drops));
  ASSERT_TRUE(source.Ok()) << source.Error();
  constexpr int kCalls = 200;
  Trigger(kCalls);  // nobody consumes meanwhile: the ring overflows
  const std::vector<Event> events = Drain(&source, kCalls);
  const SourceDrops drops = source.Drops();
  EXPECT_GT(drops.ringbuf_full, 0u);
  EXPECT_GT(events.size(), 0u);
  EXPECT_EQ(events.size() + drops.ringbuf_full, static_cast<size_t>(kCalls));
}

#undef REQUIRE_LAYOUT
#undef REQUIRE_BPF_PRIVILEGES

}  // namespace
}  // namespace gpuq

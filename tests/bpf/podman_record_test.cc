// `record --container` on real containers: two named podman containers, a
// real kernel event from inside each (the test probe on a syscall tracepoint
// stands in for the KFD hooks this host cannot attach, as in
// podman_attribution_test.cc), the real cgroup ids, the real resolver, names
// from `podman system service`, and the pipeline's recorder keeping only
// one container's records, by name (which arrives after the first events)
// and by short id.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "loader/kernel_features.h"
#include "model/pipeline.h"
#include "resolver/container_metadata.h"
#include "resolver/docker_api_client.h"
#include "resolver/proc_cgroup.h"
#include "ringbuf_probe.skel.h"
#include "sources/bpf_source.h"
#include "sources/capture.h"
#include "sources/replay_source.h"

namespace gpuq {
namespace {

constexpr const char* kImage = "localhost/debian:bookworm-slim";
// This process's own names: two runs at once (ctest -j, or two checkouts)
// would remove each other's containers.
const std::array<std::string, 2> kNames = {
    "gpuq-tr-alpha-" + std::to_string(getpid()),
    "gpuq-tr-beta-" + std::to_string(getpid())};

std::string Shell(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

class PodmanRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasBpfPrivileges()) GTEST_SKIP() << "needs root to load BPF";
    if (Shell("podman image exists " + std::string(kImage) + " && echo yes") !=
        "yes") {
      GTEST_SKIP() << "podman or the base image " << kImage
                   << " is missing (tests/lib/podman_env.sh setup makes it)";
    }
    dir_ = Shell("mktemp -d");
    socket_ = dir_ + "/podman.sock";
    service_ = fork();
    if (service_ == 0) {
      execlp("podman", "podman", "system", "service", "--time=0",
             ("unix://" + socket_).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (const std::string& name : kNames) {
      Shell("podman rm -f " + name + " >/dev/null 2>&1");
      // dash calls getppid() at start-up: every `sh -c :` is one event.
      Shell("podman run -d --name " + name + " " + kImage +
            " sh -c 'while :; do sh -c :; sleep 0.05; done' >/dev/null");
    }
    struct stat st {};
    for (int i = 0; i < 50 && stat(socket_.c_str(), &st) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    skel_ = ringbuf_probe__open();
    ASSERT_NE(skel_, nullptr);
    skel_->rodata->filter_cgroups = true;
    ASSERT_EQ(ringbuf_probe__load(skel_), 0);
    CgroupResolver probe_resolver(HostPaths().CgroupMount());
    probe_resolver.PathOf(1);  // finds the v2 root
    ASSERT_FALSE(probe_resolver.V2Root().empty()) << "no cgroup v2 hierarchy";
    for (size_t i = 0; i < kNames.size(); ++i) {
      const std::string pid =
          Shell("podman inspect -f '{{.State.Pid}}' " + kNames[i]);
      const auto path = CgroupPathOfPid("/proc", std::stoul(pid));
      ASSERT_TRUE(path.has_value()) << kNames[i];
      cgroup_[i] = CgroupIdOfPath(probe_resolver.V2Root(), *path).value_or(0);
      ASSERT_GT(cgroup_[i], 1u) << kNames[i] << " has no cgroup of its own";
      const uint8_t one = 1;
      ASSERT_EQ(
          bpf_map__update_elem(skel_->maps.target_cgroups, &cgroup_[i],
                               sizeof(uint64_t), &one, sizeof(one), BPF_ANY),
          0);
      id_[i] = Shell("podman inspect -f '{{.Id}}' " + kNames[i]);
    }
    ASSERT_EQ(ringbuf_probe__attach(skel_), 0);
  }

  void TearDown() override {
    if (skel_ != nullptr) ringbuf_probe__destroy(skel_);
    for (const std::string& name : kNames) {
      Shell("podman rm -f -t 0 " + name + " >/dev/null 2>&1");
    }
    if (service_ > 0) {
      kill(service_, SIGTERM);
      waitpid(service_, nullptr, 0);
    }
    if (!dir_.empty()) Shell("rm -rf " + dir_);
  }

  /// Records the probe's live events, keeping only `wanted`, until at least
  /// `records` of its records are in (or 20 s); returns the capture.
  Capture Record(const std::string& wanted, MetadataResolver* metadata,
                 uint64_t records) {
    const std::string path = dir_ + "/" + wanted + ".gpuqcap";
    std::string error;
    auto writer = CaptureWriter::Create(path, &error);
    EXPECT_NE(writer, nullptr) << error;
    PipelineOptions options;  // the host's real /sys and /proc
    options.metadata = metadata;
    Pipeline pipeline(options, std::make_unique<BpfEventSource>(
                                   bpf_map__fd(skel_->maps.events),
                                   bpf_map__fd(skel_->maps.drops)));
    pipeline.RecordTo(writer.get());
    pipeline.RecordOnlyContainer(wanted);
    pipeline.Start();
    std::atomic<bool> stop{false};
    std::thread loop([&] { pipeline.Run(stop, std::nullopt); });
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (pipeline.RecordedContainerRecords() < records &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    stop = true;
    loop.join();
    pipeline.FinishRecording();
    EXPECT_GE(pipeline.RecordedContainerRecords(), records);
    EXPECT_TRUE(writer->Close(&error)) << error;
    Capture capture;
    EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone)
        << error;
    return capture;
  }

  /// cgroup ids of the capture's owned records.
  static std::set<uint64_t> Cgroups(const Capture& c) {
    std::set<uint64_t> out;
    for (const Event& e : c.events) {
      if (std::holds_alternative<gpuq_gpu_info_record>(e)) continue;
      if (Header(e).cgroup_id != 0) out.insert(Header(e).cgroup_id);
    }
    return out;
  }

  std::string dir_, socket_;
  pid_t service_ = -1;
  ringbuf_probe* skel_ = nullptr;
  std::array<uint64_t, 2> cgroup_{};
  std::array<std::string, 2> id_;
};

TEST_F(PodmanRecordTest, ByNameKeepsOnlyThatContainer) {
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(MakeDockerApiClient(socket_, std::chrono::seconds(2)));
  MetadataResolver metadata(std::move(clients), {});
  const Capture c = Record(kNames[0], &metadata, 20);
  EXPECT_EQ(Cgroups(c), std::set<uint64_t>{cgroup_[0]});
  size_t creates = 0;
  bool named = false;
  for (const Event& e : c.events) {
    creates += std::holds_alternative<gpuq_queue_create_event>(e) ? 1 : 0;
    if (const auto* m = std::get_if<ContainerMetaRecord>(&e)) {
      named = named || m->json.find(kNames[0]) != std::string::npos;
    }
  }
  EXPECT_GE(creates, 20u);
  EXPECT_TRUE(named) << "the capture carries the container's name";

  // The capture replays under that name alone.
  PipelineOptions offline;
  offline.use_sysfs = false;
  Pipeline replay(offline, std::make_unique<ReplayEventSource>(c));
  std::atomic<bool> stop{false};
  EXPECT_EQ(replay.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  const Snapshot s = replay.TakeSnapshot();
  ASSERT_EQ(s.containers.size(), 1u);
  EXPECT_EQ(s.containers[0].labels.container, kNames[0]);
  EXPECT_EQ(s.containers[0].container_id, id_[0]);
}

TEST_F(PodmanRecordTest, ByShortIdWithoutRuntimeLookups) {
  const Capture c = Record(id_[1].substr(0, 12), nullptr, 10);
  EXPECT_EQ(Cgroups(c), std::set<uint64_t>{cgroup_[1]});
}

}  // namespace
}  // namespace gpuq

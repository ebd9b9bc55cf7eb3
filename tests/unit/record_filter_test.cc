// `record --container`: MatchesContainer, and the pipeline keeping only one
// container's records (Pipeline::RecordOnlyContainer, model/record_filter.h)
// on the bundled capture and while a container's name is still being looked
// up.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>

#include "event_builders.h"
#include "model/container_match.h"
#include "model/pipeline.h"
#include "sources/capture.h"
#include "sources/replay_source.h"
#include "test_support.h"

// Its own namespace: the unit tests build as one unity translation unit per
// batch (tests/CMakeLists.txt), where its constants met another file's.
namespace gpuq::record_filter_test {
namespace {

const std::string kBundled =
    std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap";
// examples/README.md
constexpr uint64_t kCgHost = 4127;
constexpr uint64_t kCgVllm = 5861;
constexpr uint64_t kCgTrainer = 6342;
const std::string kDockerId(64, 'a');

ContainerIdentity Docker(const std::string& id) {
  return ContainerIdentity{id, "docker", ""};
}

TEST(MatchesContainerTest, NameShortIdFullIdOrLongerPrefix) {
  ContainerMetadata meta;
  meta.name = "vllm";
  const auto id = Docker("0124dd351391" + std::string(52, 'b'));
  EXPECT_EQ(MatchesContainer("vllm", id, meta, false), true);
  EXPECT_EQ(MatchesContainer("0124dd351391", id, meta, false), true);
  EXPECT_EQ(MatchesContainer(id.container_id, id, meta, false), true);
  EXPECT_EQ(MatchesContainer("0124dd351391bb", id, meta, false), true);
  // Shorter than a short id: too likely someone else's.
  EXPECT_EQ(MatchesContainer("0124dd", id, meta, false), false);
  EXPECT_EQ(MatchesContainer("other", id, meta, false), false);
  EXPECT_EQ(MatchesContainer("vllm", ContainerIdentity{}, meta, false), false);
}

TEST(MatchesContainerTest, KubernetesContainerName) {
  ContainerMetadata meta;
  meta.pod = "trainer-0";
  meta.k8s_container = "trainer";
  EXPECT_EQ(MatchesContainer("trainer", Docker(kDockerId), meta, false), true);
  EXPECT_EQ(MatchesContainer("trainer-0", Docker(kDockerId), meta, false),
            false);
}

TEST(MatchesContainerTest, UndecidedOnlyWhileNamesMayCome) {
  EXPECT_EQ(MatchesContainer("vllm", Docker(kDockerId), std::nullopt, true),
            std::nullopt);
  EXPECT_EQ(MatchesContainer("vllm", Docker(kDockerId), std::nullopt, false),
            false);
  // The id decides without names.
  EXPECT_EQ(MatchesContainer(kDockerId.substr(0, 12), Docker(kDockerId),
                             std::nullopt, true),
            true);
}

/// Replays the bundled capture, recording only `container`; returns what
/// was written and the container's record count.
/// `container_first`: the container is named before the writer is given.
Capture RecordFiltered(const std::string& container, uint64_t* kept,
                       bool container_first = false) {
  TempDir dir;
  const std::string path = dir.File("filtered.gpuqcap");
  std::string error;
  auto writer = CaptureWriter::Create(path, &error, 1);
  EXPECT_NE(writer, nullptr) << error;
  Capture original;
  EXPECT_EQ(ReadCapture(kBundled, &original, &error), CaptureError::kNone);
  PipelineOptions options;
  options.use_sysfs = false;
  Pipeline pipeline(options,
                    std::make_unique<ReplayEventSource>(std::move(original)));
  if (container_first) pipeline.RecordOnlyContainer(container);
  pipeline.RecordTo(writer.get());
  if (!container_first) pipeline.RecordOnlyContainer(container);
  pipeline.Start();
  std::atomic<bool> stop{false};
  EXPECT_EQ(pipeline.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  pipeline.FinishRecording();
  *kept = pipeline.RecordedContainerRecords();
  EXPECT_TRUE(writer->Close(&error)) << error;
  Capture out;
  EXPECT_EQ(ReadCapture(path, &out, &error), CaptureError::kNone) << error;
  return out;
}

/// cgroup ids of the records, and how many GPU topology / ownerless
/// runlist records there are.
struct Census {
  std::set<uint64_t> cgroups;
  size_t gpu_info = 0;
  size_t ownerless_runlist = 0;
  size_t total = 0;
};
Census Count(const Capture& c) {
  Census n;
  for (const Event& e : c.events) {
    ++n.total;
    if (std::holds_alternative<gpuq_gpu_info_record>(e)) {
      ++n.gpu_info;
    } else if (Header(e).cgroup_id == 0 &&
               std::holds_alternative<gpuq_runlist_event>(e)) {
      ++n.ownerless_runlist;
    } else {
      n.cgroups.insert(Header(e).cgroup_id);
    }
  }
  return n;
}

TEST(RecordFilterTest, KeepsOnlyTheNamedContainerAndTheTopology) {
  Capture original;
  std::string error;
  ASSERT_EQ(ReadCapture(kBundled, &original, &error), CaptureError::kNone);
  const Census all = Count(original);
  ASSERT_EQ(all.cgroups, (std::set<uint64_t>{kCgHost, kCgVllm, kCgTrainer}));

  uint64_t kept = 0;
  const Census vllm = Count(RecordFiltered("vllm", &kept));
  EXPECT_EQ(vllm.cgroups, std::set<uint64_t>{kCgVllm});
  EXPECT_EQ(vllm.gpu_info, all.gpu_info);
  EXPECT_EQ(vllm.ownerless_runlist, all.ownerless_runlist);
  EXPECT_GT(vllm.ownerless_runlist, 0u);  // the capture has a GPU reset
  // Every vllm record but its cgroup path and name.
  size_t vllm_records = 0;
  for (const Event& e : original.events) {
    if (Header(e).cgroup_id == kCgVllm &&
        !std::holds_alternative<CgroupPathRecord>(e) &&
        !std::holds_alternative<ContainerMetaRecord>(e)) {
      ++vllm_records;
    }
  }
  EXPECT_EQ(kept, vllm_records);
  EXPECT_EQ(vllm.total,
            vllm_records + 2 + all.gpu_info + all.ownerless_runlist);
}

TEST(RecordFilterTest, ShortIdAndKubernetesName) {
  uint64_t kept = 0;
  EXPECT_EQ(Count(RecordFiltered("0124dd351391", &kept)).cgroups,
            std::set<uint64_t>{kCgVllm});
  EXPECT_GT(kept, 0u);
  EXPECT_EQ(Count(RecordFiltered("trainer", &kept)).cgroups,
            std::set<uint64_t>{kCgTrainer});
  EXPECT_GT(kept, 0u);
}

// Naming the container before giving the writer filters the same: never
// a capture of every container.
TEST(RecordFilterTest, TheOrderOfTheSetUpCallsDoesNotMatter) {
  uint64_t kept = 0;
  uint64_t kept_first = 0;
  const Census after = Count(RecordFiltered("trainer", &kept));
  const Census first = Count(RecordFiltered("trainer", &kept_first, true));
  EXPECT_EQ(first.cgroups, std::set<uint64_t>{kCgTrainer});
  EXPECT_EQ(first.cgroups, after.cgroups);
  EXPECT_EQ(first.gpu_info, after.gpu_info);
  EXPECT_EQ(kept_first, kept);
  EXPECT_GT(kept, 0u);
}

TEST(RecordFilterTest, UnknownContainerLeavesTheTopologyOnly) {
  uint64_t kept = 1;
  const Census none = Count(RecordFiltered("nosuch", &kept));
  EXPECT_EQ(kept, 0u);
  EXPECT_TRUE(none.cgroups.empty());
  EXPECT_GT(none.gpu_info, 0u);
}

/// A runtime whose answer waits until the test releases it.
class GatedClient : public RuntimeClient {
 public:
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
    std::string name;
  };
  explicit GatedClient(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  std::optional<ContainerMetadata> Lookup(const ContainerIdentity&,
                                          std::string*) override {
    std::unique_lock<std::mutex> lock(gate_->mu);
    gate_->cv.wait(lock, [this] { return gate_->open; });
    ContainerMetadata meta;
    meta.name = gate_->name;
    return meta;
  }
  std::string Name() const override { return "gated"; }

 private:
  std::shared_ptr<Gate> gate_;
};

/// Records a container's create and destroy while its name is being looked
/// up; the runtime answers `name` only after both.
Capture RecordWhileNameIsPending(const std::string& name, uint64_t* kept) {
  auto gate = std::make_shared<GatedClient::Gate>();
  gate->name = name;
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(std::make_unique<GatedClient>(gate));
  MetadataResolver metadata(std::move(clients), {});
  TempDir dir;
  std::string error;
  auto writer = CaptureWriter::Create(dir.File("c.gpuqcap"), &error, 1);
  EXPECT_NE(writer, nullptr) << error;
  {
    PipelineOptions options;
    options.use_sysfs = false;
    options.metadata = &metadata;
    Pipeline pipeline(options, nullptr);
    pipeline.RecordTo(writer.get());
    pipeline.RecordOnlyContainer("web");
    constexpr uint64_t kCg = 777;
    gpuq_event_header hdr = Hdr(GPUQ_EV_CGROUP_PATH, 0, 0, kCg);
    pipeline.Handle(
        CgroupPathRecord{hdr, "/system.slice/docker-" + kDockerId + ".scope"});
    pipeline.Handle(Create(0x1000, 100, kCg, 11437, 0));
    pipeline.Handle(Destroy(0x1000, 100, kCg, 11437, 0, GPUQ_QUEUE_COMPUTE));
    {
      std::lock_guard<std::mutex> lock(gate->mu);
      gate->open = true;
    }
    gate->cv.notify_all();
    pipeline.FinishRecording();
    *kept = pipeline.RecordedContainerRecords();
  }
  EXPECT_TRUE(writer->Close(&error)) << error;
  Capture out;
  EXPECT_EQ(ReadCapture(dir.File("c.gpuqcap"), &out, &error),
            CaptureError::kNone)
      << error;
  return out;
}

TEST(RecordFilterTest, RecordsWaitForTheNameAndKeepTheirOrder) {
  uint64_t kept = 0;
  const Capture c = RecordWhileNameIsPending("web", &kept);
  EXPECT_EQ(kept, 2u);
  // In the order they came (no name record: no event came after the
  // runtime answered).
  ASSERT_EQ(c.events.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<CgroupPathRecord>(c.events[0]));
  EXPECT_TRUE(std::holds_alternative<gpuq_queue_create_event>(c.events[1]));
  EXPECT_TRUE(std::holds_alternative<gpuq_queue_destroy_event>(c.events[2]));
}

TEST(RecordFilterTest, RecordsOfAnotherNameAreDropped) {
  uint64_t kept = 1;
  const Capture c = RecordWhileNameIsPending("db", &kept);
  EXPECT_EQ(kept, 0u);
  EXPECT_TRUE(c.events.empty());
}

}  // namespace
}  // namespace gpuq::record_filter_test

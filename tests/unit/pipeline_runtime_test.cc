// A container runtime that hangs or answers garbage must not stall events or
// /metrics: the label falls back to the container id and an error counter
// rises. The runtime is a test double (a RuntimeClient that blocks, then
// fails, as a wedged docker.sock or a garbage reply does through the real
// client); tests/unit/container_metadata_test.cc drives the real Docker API
// client against such sockets, and the podman test the real runtime.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "event_builders.h"
#include "export/collector.h"
#include "model/pipeline.h"
#include "sources/capture.h"
#include "sources/replay_source.h"
#include "test_support.h"

namespace gpuq {
namespace {

const std::string kId =
    "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d62b9307";

/// Blocks in Lookup() until Cancel(), then reports an error, like a runtime
/// that never answers within the client's timeout. The test lets it go only
/// after checking that events and snapshots went on without it, so nothing
/// depends on how fast this machine is: a pipeline that waited for the
/// lookup would hang (and time out) instead of passing.
class StuckRuntime : public RuntimeClient {
 public:
  std::optional<ContainerMetadata> Lookup(const ContainerIdentity&,
                                          std::string* error) override {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
    *error = "no answer";
    ++answered_;
    return std::nullopt;
  }
  std::string Name() const override { return "stuck"; }
  void Cancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  /// Returns once a Lookup() is blocked.
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  int Answered() {
    std::lock_guard<std::mutex> lock(mu_);
    return answered_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
  int answered_ = 0;
};

TEST(PipelineRuntimeTest, StuckRuntimeNeitherStallsNorHidesTheContainer) {
  auto client = std::make_unique<StuckRuntime>();
  StuckRuntime* stuck = client.get();
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(std::move(client));
  MetadataResolver metadata(std::move(clients), {});
  PipelineOptions options;
  options.use_sysfs = false;
  options.metadata = &metadata;
  Pipeline pipeline(options, nullptr);
  gpuq_event_header hdr{};
  hdr.cgroup_id = 42;
  pipeline.Handle(
      CgroupPathRecord{hdr, "/system.slice/docker-" + kId + ".scope"});
  pipeline.Handle(Create(0xffff888100000001, 10, 42, 1, 0));
  stuck->WaitEntered();

  // Events and snapshots go on while the lookup hangs.
  for (uint32_t q = 1; q < 100; ++q) {
    pipeline.Handle(Create(0xffff888100000001, 10, 42, 1, q));
  }
  const Snapshot during = pipeline.TakeSnapshot();
  EXPECT_EQ(stuck->Answered(), 0);
  EXPECT_EQ(during.labels.at(42).container, kId.substr(0, 12));
  uint64_t live = 0;
  for (const auto& [key, series] : during.queue_series) live += series.live;
  EXPECT_EQ(live, 100u);

  stuck->Cancel();
  metadata.WaitIdle();
  const Snapshot after = pipeline.TakeSnapshot();
  EXPECT_EQ(stuck->Answered(), 1);
  EXPECT_EQ(after.labels.at(42).container, kId.substr(0, 12));
  EXPECT_GE(after.runtime_errors.at("stuck"), 1u);
  bool counter_exported = false;
  for (const auto& f : BuildFamilies(after)) {
    if (f.name != "gpuq_runtime_lookup_errors_total") continue;
    for (const auto& m : f.metric) counter_exported |= m.counter.value >= 1;
  }
  EXPECT_TRUE(counter_exported);
}

/// Knows the container only while it exists, as a runtime does after
/// `podman run --rm` removed it.
class RemovableRuntime : public RuntimeClient {
 public:
  std::optional<ContainerMetadata> Lookup(const ContainerIdentity&,
                                          std::string*) override {
    if (!exists_.load()) return std::nullopt;  // 404
    ContainerMetadata meta;
    meta.name = "bench-run";
    return meta;
  }
  std::string Name() const override { return "removable"; }
  std::atomic<bool> exists_{true};
};

TEST(PipelineRuntimeTest, NameIsAskedAtTheFirstEventNotTheFirstScrape) {
  auto client = std::make_unique<RemovableRuntime>();
  RemovableRuntime* runtime = client.get();
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(std::move(client));
  MetadataResolver metadata(std::move(clients), {});
  PipelineOptions options;
  options.use_sysfs = false;
  options.metadata = &metadata;
  Pipeline pipeline(options, nullptr);
  gpuq_event_header hdr{};
  hdr.cgroup_id = 42;
  pipeline.Handle(
      CgroupPathRecord{hdr, "/system.slice/docker-" + kId + ".scope"});
  pipeline.Handle(Create(0xffff888100000001, 10, 42, 1, 0));
  metadata.WaitIdle();
  runtime->exists_ = false;  // the container is gone before any scrape

  const Snapshot s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.labels.at(42).container, "bench-run");
}

/// Answers after `delay`: the runtime is slower than the container's events.
class SlowRuntime : public RuntimeClient {
 public:
  std::optional<ContainerMetadata> Lookup(const ContainerIdentity&,
                                          std::string*) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ContainerMetadata meta;
    meta.name = "one-second-job";
    return meta;
  }
  std::string Name() const override { return "slow"; }
};

TEST(PipelineRuntimeTest, LateNamesAreStillRecordedIntoTheCapture) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string path = tmp.path() + "/run.gpuqcap";
  {
    std::vector<std::unique_ptr<RuntimeClient>> clients;
    clients.push_back(std::make_unique<SlowRuntime>());
    MetadataResolver metadata(std::move(clients), {});
    PipelineOptions options;
    options.use_sysfs = false;
    options.metadata = &metadata;
    std::string error;
    auto writer = CaptureWriter::Create(path, &error);
    ASSERT_NE(writer, nullptr) << error;
    Pipeline pipeline(options, nullptr);
    pipeline.RecordTo(writer.get());
    gpuq_event_header hdr{};
    hdr.cgroup_id = 42;
    pipeline.Handle(
        CgroupPathRecord{hdr, "/system.slice/docker-" + kId + ".scope"});
    pipeline.Handle(Create(0xffff888100000001, 10, 42, 1, 0));  // its last
    metadata.WaitIdle();            // the name arrives after the events
    pipeline.RecordLateMetadata();  // what Run() and `record` do
    ASSERT_TRUE(writer->Close(&error)) << error;
  }
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  PipelineOptions options;
  options.use_sysfs = false;
  Pipeline replay(options,
                  std::make_unique<ReplayEventSource>(std::move(capture)));
  std::atomic<bool> stop{false};
  ASSERT_EQ(replay.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  EXPECT_EQ(replay.TakeSnapshot().labels.at(42).container, "one-second-job");
}

}  // namespace
}  // namespace gpuq

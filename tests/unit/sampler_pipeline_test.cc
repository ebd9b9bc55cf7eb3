// The sampler and the pipeline together, in process: queues created with
// GPUQ_CREATE_F_ROCR_LAYOUT point at a real process's amd_queue_t blocks
// (tests/sampler/queue_writer); sampling rounds through SubmissionReaders
// (the CLI's wiring) must show exact gpuq_submissions_total and
// gpuq_queue_pending_packets, survive the process exiting, and end up in a
// recording that replays to the same numbers. No KFD is needed.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "cli/source_setup.h"
#include "event_builders.h"
#include "export/collector.h"
#include "metric_matchers.h"
#include "model/pipeline.h"
#include "sampler_queue_writer.h"
#include "sources/capture.h"
#include "sources/replay_source.h"
#include "submissions/queue_sampler.h"
#include "test_support.h"

namespace gpuq::sampler_pipeline_test {
namespace {

constexpr uint64_t kPkey = 0xffff888012340000ull;
constexpr uint64_t kCgroup = 5861;
constexpr uint32_t kGpu = 11437;
constexpr uint64_t kAtCreate = 100;  // write index when the queue was made

PipelineOptions Offline() {
  PipelineOptions options;
  options.use_sysfs = false;
  return options;
}

/// The kernel's create record of a ROCr compute queue whose amd_queue_t is
/// at `amdq` in process `tgid`.
gpuq_queue_create_event RocrCreate(uint32_t tgid, uint32_t qid, uint64_t amdq) {
  gpuq_queue_create_event e = Create(kPkey, tgid, kCgroup, kGpu, qid);
  e.queue_format = GPUQ_QUEUE_FORMAT_AQL;
  e.flags = GPUQ_CREATE_F_ROCR_LAYOUT;
  e.write_ptr = amdq + kWriteDispatchIdOffset;
  e.read_ptr = amdq + kReadDispatchIdOffset;
  e.doorbell_handle = 0x7f0000001000ull + qid * 64;
  e.write_index_at_create = kAtCreate;
  return e;
}

/// Sampling every second, no doorbells: what `gpuq-agent` runs by default.
SubmissionOptions SamplingOnly() {
  SubmissionOptions options;
  options.sample_interval = std::chrono::seconds(1);
  options.doorbells = DoorbellMode::kOff;
  return options;
}

class SamplerPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(writer_.ok());
    amdq_ = writer_.NewQueues(3, kAtCreate, kAtCreate);
    ASSERT_EQ(amdq_.size(), 3u);
  }
  /// Feeds the topology and the three creates to `pipeline`.
  void CreateQueues(Pipeline& pipeline) {
    pipeline.Handle(Event{GpuInfo(kGpu, 1)});
    for (uint32_t q = 0; q < 3; ++q) {
      pipeline.Handle(Event{RocrCreate(writer_.pid(), q, amdq_[q])});
    }
  }
  static std::vector<prometheus::MetricFamily> Families(Pipeline& pipeline) {
    return BuildFamilies(pipeline.TakeSnapshot());
  }
  static double Submissions(Pipeline& pipeline) {
    return Sum(Families(pipeline), "gpuq_submissions_total",
               {{"gpu_id", std::to_string(kGpu)}});
  }
  static double Pending(Pipeline& pipeline) {
    return Sum(Families(pipeline), "gpuq_queue_pending_packets",
               {{"gpu_id", std::to_string(kGpu)}});
  }

  QueueWriterProcess writer_{GPUQ_QUEUE_WRITER};
  std::vector<uint64_t> amdq_;
};

TEST_F(SamplerPipelineTest, ExactSubmissionsAndPendingPackets) {
  Pipeline pipeline(Offline(), nullptr);
  CreateQueues(pipeline);
  EXPECT_EQ(pipeline.SampleTargets().size(), 3u);
  std::vector<std::string> warnings;
  SubmissionReaders readers(SamplingOnly(), PipelineSinks(&pipeline, {}),
                            &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_TRUE(readers.Active());
  EXPECT_EQ(readers.Period(), std::chrono::seconds(1));

  // Packets written since the create count, from write_index_at_create.
  ASSERT_EQ(writer_.Advance(0, 10, 4), "ok 110 104");
  ASSERT_EQ(writer_.Advance(1, 5, 5), "ok 105 105");
  readers.Round();
  EXPECT_EQ(Submissions(pipeline), 15);
  EXPECT_EQ(Pending(pipeline), 6);  // queue 0: 110 - 104

  ASSERT_EQ(writer_.Advance(2, 1000, 990), "ok 1100 1090");
  ASSERT_EQ(writer_.Advance(0, 1, 7), "ok 111 111");
  readers.Round();
  EXPECT_EQ(Submissions(pipeline), 1016);
  EXPECT_EQ(Pending(pipeline), 10);  // queue 2: 1100 - 1090

  // A round with nothing new changes nothing.
  readers.Round();
  EXPECT_EQ(Submissions(pipeline), 1016);
  const auto families = Families(pipeline);
  EXPECT_EQ(Sum(families, "gpuq_queue_samples_total", {{"result", "ok"}}), 9);
  EXPECT_EQ(Sum(families, "gpuq_sampled_queues"), 3);
  EXPECT_EQ(Sum(families, "gpuq_unsampled_queues"), 0);
}

TEST_F(SamplerPipelineTest, ProcessExitingIsNotAnError) {
  Pipeline pipeline(Offline(), nullptr);
  CreateQueues(pipeline);
  std::vector<std::string> warnings;
  SubmissionReaders readers(SamplingOnly(), PipelineSinks(&pipeline, {}),
                            &warnings);
  ASSERT_EQ(writer_.AdvanceAll(2, 1), "ok");
  readers.Round();
  EXPECT_EQ(Submissions(pipeline), 6);

  // The process is gone before KFD's teardown reaches the model: its
  // queues are still live there, and unreadable.
  writer_.Exit(/*reap=*/true);
  readers.Round();
  const auto families = Families(pipeline);
  EXPECT_EQ(Sum(families, "gpuq_submissions_total",
                {{"gpu_id", std::to_string(kGpu)}}),
            6);
  EXPECT_EQ(
      Sum(families, "gpuq_queue_samples_total", {{"result", "unreadable"}}), 3);
  EXPECT_EQ(Sum(families, "gpuq_sampled_queues"), 0);
  EXPECT_EQ(Sum(families, "gpuq_unsampled_queues", {{"reason", "unreadable"}}),
            3);

  // Then the teardown: no targets left, a round is a no-op.
  for (uint32_t q = 0; q < 3; ++q) {
    pipeline.Handle(
        Event{Destroy(kPkey, writer_.pid(), kCgroup, kGpu, q,
                      GPUQ_QUEUE_COMPUTE, GPUQ_DESTROY_PROCESS_EXIT)});
  }
  EXPECT_TRUE(pipeline.SampleTargets().empty());
  readers.Round();
  EXPECT_EQ(Submissions(pipeline), 6);
}

TEST_F(SamplerPipelineTest, RateFromTheSampleClock) {
  Pipeline pipeline(Offline(), nullptr);
  CreateQueues(pipeline);
  uint64_t now = 5'000'000'000;
  QueueSampler::Options options;
  options.clock = [&now] { return now; };
  QueueSampler sampler(options);
  auto handle = [&pipeline](const Event& e) { pipeline.Handle(e); };
  sampler.Sample(pipeline.SampleTargets(), handle);
  ASSERT_EQ(writer_.Advance(0, 30, 30), "ok 130 130");
  ASSERT_EQ(writer_.Advance(1, 20, 0), "ok 120 100");
  now += 2'000'000'000;  // two seconds later: 50 packets -> 25/s
  sampler.Sample(pipeline.SampleTargets(), handle);
  const Snapshot snapshot = pipeline.TakeSnapshot();
  ASSERT_EQ(snapshot.process_rows.size(), 1u);
  const auto& rates = snapshot.process_rows[0].submission_rate_per_gpu;
  ASSERT_EQ(rates.count(kGpu), 1u);
  EXPECT_DOUBLE_EQ(rates.at(kGpu), 25.0);
}

TEST_F(SamplerPipelineTest, RecordingReplaysToTheSameTotals) {
  TempDir dir;
  const std::string path = dir.File("sampled.gpuqcap");
  std::string error;
  auto capture_writer = CaptureWriter::Create(path, &error);
  ASSERT_NE(capture_writer, nullptr) << error;
  double live_total = 0, live_pending = 0;
  {
    Pipeline pipeline(Offline(), nullptr);
    pipeline.RecordTo(capture_writer.get());
    CreateQueues(pipeline);
    std::vector<std::string> warnings;
    SubmissionReaders readers(SamplingOnly(), PipelineSinks(&pipeline, {}),
                              &warnings);
    readers.Round();
    ASSERT_EQ(writer_.Advance(0, 7, 3), "ok 107 103");
    readers.Round();
    ASSERT_EQ(writer_.Advance(1, 40, 0), "ok 140 100");
    readers.Round();
    live_total = Submissions(pipeline);
    live_pending = Pending(pipeline);
  }
  ASSERT_TRUE(capture_writer->Close(&error)) << error;
  EXPECT_EQ(live_total, 47);
  EXPECT_EQ(live_pending, 44);

  Capture capture;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  Pipeline replay(Offline(),
                  std::make_unique<ReplayEventSource>(std::move(capture)));
  replay.Start();
  std::atomic<bool> stop{false};
  ASSERT_EQ(replay.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  EXPECT_EQ(Submissions(replay), live_total);
  EXPECT_EQ(Pending(replay), live_pending);
  const Snapshot snapshot = replay.TakeSnapshot();
  EXPECT_EQ(snapshot.events_by_type[GPUQ_EV_QUEUE_SAMPLE], 9u);
}

TEST(SubmissionReadersTest, NothingAskedNothingActive) {
  SubmissionOptions options;
  options.sample_interval = std::chrono::milliseconds(0);
  options.doorbells = DoorbellMode::kOff;
  Pipeline pipeline(Offline(), nullptr);
  std::vector<std::string> warnings;
  SubmissionReaders readers(options, PipelineSinks(&pipeline, {}), &warnings);
  EXPECT_FALSE(readers.Active());
  readers.Round();  // harmless
}

TEST(SubmissionReadersTest, DoorbellProbesAreReportedEitherWay) {
  // Attached or not (no privileges, no uprobes, no implementation), the
  // doorbell probes show in gpuq_probe_attached next to the kernel hooks.
  SubmissionOptions options;
  options.sample_interval = std::chrono::milliseconds(0);
  options.doorbells = DoorbellMode::kUprobe;
  options.paths.procfs = "/nonexistent";  // scan no process
  Pipeline pipeline(Offline(), nullptr);
  std::vector<std::string> warnings;
  SubmissionReaders readers(
      options,
      PipelineSinks(&pipeline, {{"queue_create", "kfd_procfs_add_queue", "none",
                                 false, "test"}}),
      &warnings);
  EXPECT_TRUE(readers.Active());
  EXPECT_EQ(readers.Period(), std::chrono::seconds(1));
  const Snapshot snapshot = pipeline.TakeSnapshot();
  std::vector<std::string> probes;
  for (const ProbeStatus& p : snapshot.probes) probes.push_back(p.probe);
  EXPECT_EQ(probes, (std::vector<std::string>{
                        "queue_create", "doorbell_store_screlease",
                        "doorbell_store_relaxed", "doorbell_queue_destroy",
                        "doorbell_shut_down"}));
  for (const ProbeStatus& p : snapshot.probes) {
    if (!p.attached) {
      EXPECT_FALSE(p.detail.empty()) << p.probe;
    }
  }
  readers.Round();
}

}  // namespace
}  // namespace gpuq::sampler_pipeline_test

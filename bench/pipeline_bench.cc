// Replay throughput of the pipeline (attribution + model) against its floor,
// decoding the capture bytes. Both run in the same process, interleaved
// (floor, pipeline, floor, pipeline, ...), and the medians are compared, so a
// noisy machine shifts both sides alike. See bench/README.md.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_args.h"
#include "bench_stats.h"
#include "model/pipeline.h"
#include "scenario.h"
#include "sources/replay_source.h"

namespace {

using gpuq::bench::Median;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The scenario's records back to back: a capture file after its header.
std::string EncodeScenario(const gpuq::ScaleParams& params,
                           gpuq::ScenarioSummary* summary) {
  std::string bytes;
  gpuq::BuildScaleScenario(
      params,
      [&bytes](const gpuq::Event& e) {
        bytes += gpuq::Encode(e);
        return true;
      },
      summary);
  return bytes;
}

// What ReadCapture does once the file is in memory. The generator wrote the
// bytes, so a bad record is a bug: stop there and let the count show it.
std::vector<gpuq::Event> DecodeAll(const std::string& bytes) {
  std::vector<gpuq::Event> events;
  size_t offset = 0;
  while (offset < bytes.size()) {
    gpuq::Event event;
    size_t consumed = 0;
    if (gpuq::Decode(bytes.data() + offset, bytes.size() - offset, &event,
                     &consumed) != gpuq::DecodeStatus::kOk) {
      break;
    }
    events.push_back(std::move(event));
    offset += consumed;
  }
  return events;
}

struct PipelineTimes {
  double decode = 0;  ///< bytes -> Capture
  double run = 0;     ///< ReplayEventSource -> Pipeline::Run until EOF
  uint64_t live = 0;  ///< live queues in the final snapshot (sanity)
};

PipelineTimes ReplayThroughPipeline(const std::string& bytes) {
  PipelineTimes t;
  const auto start = Clock::now();
  gpuq::Capture capture;
  capture.events = DecodeAll(bytes);
  t.decode = SecondsSince(start);

  const auto run_start = Clock::now();
  gpuq::PipelineOptions options;
  options.use_sysfs = false;
  gpuq::Pipeline pipeline(
      options, std::make_unique<gpuq::ReplayEventSource>(std::move(capture)));
  const std::atomic<bool> stop{false};
  const auto result = pipeline.Run(stop, std::nullopt);
  t.run = SecondsSince(run_start);
  if (result != gpuq::Pipeline::RunResult::kEof) {
    std::fprintf(stderr, "pipeline stopped early: %s\n",
                 pipeline.Error().c_str());
  }
  for (const auto& [key, series] : pipeline.TakeSnapshot().queue_series) {
    t.live += series.live;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  gpuq::ScaleParams params;
  params.containers = 1000;
  params.queues_per_container = 10;
  params.churn = 500000;
  params.seed = 7;
  int reps = 9;
  gpuq::bench::Args args{"Replay throughput: pipeline vs decode-only floor."};
  args.Add("--containers", params.containers);
  args.Add("--queues-per-container", params.queues_per_container);
  args.Add("--churn", params.churn);
  args.Add("--reps", reps, 1, 100);
  if (const auto status = args.Parse(argc, argv)) return *status;
  const std::string invalid = gpuq::ValidateScaleParams(params);
  if (!invalid.empty()) {
    std::fprintf(stderr, "%s\n", invalid.c_str());
    return 2;
  }

  gpuq::ScenarioSummary summary;
  const std::string bytes = EncodeScenario(params, &summary);
  const double n = static_cast<double>(summary.records);
  fmt::print(
      "capture: {} containers x {} queues, churn {}: {} records, {:.1f} MiB "
      "in memory\n",
      params.containers, params.queues_per_container, params.churn,
      summary.records, bytes.size() / 1048576.0);

  std::vector<double> floor_s, total_s, decode_s, run_s;
  fmt::print("{:>3} {:>10} {:>12} {:>10} {:>10}\n", "rep", "floor s",
             "pipeline s", "(decode", "+ run)");
  for (int rep = 0; rep < reps; ++rep) {
    const auto start = Clock::now();
    std::vector<gpuq::Event> events = DecodeAll(bytes);
    floor_s.push_back(SecondsSince(start));
    if (events.size() != summary.records) {
      std::fprintf(stderr, "decoded %zu of %llu records\n", events.size(),
                   static_cast<unsigned long long>(summary.records));
      return 1;
    }
    events = {};

    const PipelineTimes t = ReplayThroughPipeline(bytes);
    if (t.live != summary.live_queues) {
      std::fprintf(stderr, "pipeline ended with %llu live queues, want %llu\n",
                   static_cast<unsigned long long>(t.live),
                   static_cast<unsigned long long>(summary.live_queues));
      return 1;
    }
    total_s.push_back(t.decode + t.run);
    decode_s.push_back(t.decode);
    run_s.push_back(t.run);
    fmt::print("{:>3} {:>10.3f} {:>12.3f} {:>10.3f} {:>10.3f}\n", rep,
               floor_s.back(), total_s.back(), t.decode, t.run);
  }

  const double floor_eps = n / Median(floor_s);
  const double pipeline_eps = n / Median(total_s);
  const double run_eps = n / Median(run_s);
  fmt::print("median of {} reps:\n", reps);
  fmt::print("  floor (decode only):              {:8.2f} M events/s\n",
             floor_eps / 1e6);
  fmt::print("  pipeline (decode + replay+model): {:8.2f} M events/s\n",
             pipeline_eps / 1e6);
  fmt::print("  replay+model part alone:          {:8.2f} M events/s\n",
             run_eps / 1e6);
  fmt::print("  ratio pipeline/floor throughput:  {:8.3f}\n",
             pipeline_eps / floor_eps);
  return 0;
}

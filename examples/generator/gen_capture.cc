// gpuq-gen-capture: writes a synthetic, deterministic capture file (the
// bundled examples/default.gpuqcap, and large captures for benchmarks).
// The same arguments always give the same bytes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "scenario.h"
#include "sources/capture.h"

namespace {

// Removes what a failed run left behind, so a half-written capture is never
// mistaken for a good one. Only regular files: `-o /dev/full` must survive.
void RemovePartial(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    std::remove(path.c_str());
  }
}

int Fail(const std::string& message) {
  fmt::print(stderr, "gpuq-gen-capture: {}\n", message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write a synthetic gpuq capture file. Deterministic: the same arguments "
      "give a byte-identical file. Scenarios are described in "
      "examples/README.md.",
      "gpuq-gen-capture"};
  std::string scenario;
  std::string output;
  gpuq::ScaleParams scale;
  std::vector<std::string> names = gpuq::NamedScenarios();
  names.push_back("scale");
  app.add_option("--scenario", scenario,
                 fmt::format("{}", fmt::join(names, " | ")))
      ->required()
      ->check(CLI::IsMember(names));
  app.add_option("-o,--output", output, "capture file to write (truncated)")
      ->required();
  CLI::Option* containers =
      app.add_option("--containers", scale.containers,
                     "scale: containers, one process each")
          ->capture_default_str();
  CLI::Option* queues =
      app.add_option("--queues-per-container", scale.queues_per_container,
                     "scale: queues created per container (2/3 compute)")
          ->capture_default_str();
  CLI::Option* churn =
      app.add_option("--churn", scale.churn, "scale: destroy+create operations")
          ->capture_default_str();
  CLI::Option* seed =
      app.add_option("--seed", scale.seed,
                     "scale: seed of container ids, churn choices, timing")
          ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  gpuq::ScenarioSummary summary;
  std::string error;
  const bool fixed = scenario != "scale";
  if (fixed) {
    for (const CLI::Option* opt : {containers, queues, churn, seed}) {
      if (opt->count() > 0) {
        return Fail(fmt::format(
            "{} only applies to --scenario scale; the {} scenario is fixed",
            opt->get_name(), scenario));
      }
    }
  } else {
    error = gpuq::ValidateScaleParams(scale);
    if (!error.empty()) return Fail(error);
  }

  auto writer =
      gpuq::CaptureWriter::Create(output, &error, gpuq::kScenarioStartNs);
  if (writer == nullptr) return Fail(error);
  const gpuq::EventSink sink = [&writer](const gpuq::Event& e) {
    return writer->Write(e);
  };
  const bool built = fixed ? gpuq::BuildNamedScenario(scenario, sink, &summary)
                           : gpuq::BuildScaleScenario(scale, sink, &summary);
  const bool closed = writer->Close(&error);
  if (!built || !closed) {
    RemovePartial(output);
    if (closed) error = fmt::format("writing capture file {} failed", output);
    return Fail(error);
  }

  const uint64_t destroys =
      summary.destroys_ioctl + summary.destroys_process_exit;
  fmt::print(stderr,
             "gpuq-gen-capture: wrote {} (scenario {}): {} records, {} "
             "creates, {} destroys, {} live queues at end\n",
             output, scenario, summary.records, summary.creates, destroys,
             summary.live_queues);
  return 0;
}

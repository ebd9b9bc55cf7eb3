// libFuzzer harness: the capture reader and everything a replay feeds a
// capture's records to. Input: the bytes of a capture file. What --replay
// (--once, the daemon, record, top) and `report` do with a capture that
// ReadCapture() accepts must neither crash nor trip a sanitizer.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "export/once_render.h"
#include "model/pipeline.h"
#include "report/render_html.h"
#include "report/render_json.h"
#include "report/render_perfetto.h"
#include "report/render_text.h"
#include "report/run_analysis.h"
#include "sources/capture.h"
#include "sources/replay_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuq::Capture capture;
  std::string error;
  const gpuq::CaptureError result = gpuq::ParseCapture(
      std::string_view(reinterpret_cast<const char*>(data), size),
      "fuzz.gpuqcap", &capture, &error);
  // --allow-truncated replays the complete records of a cut capture.
  if (result != gpuq::CaptureError::kNone &&
      result != gpuq::CaptureError::kTruncated) {
    return 0;
  }

  // `report`: the analysis and its renderings.
  const gpuq::report::RunReport run =
      gpuq::report::AnalyzeCapture(capture, "fuzz");
  const std::vector<gpuq::report::RunReport> runs = {run};
  (void)gpuq::report::RenderText(runs, /*markdown=*/false);
  (void)gpuq::report::RenderJson(runs);
  (void)gpuq::report::RenderHtml(runs);
  (void)gpuq::report::RenderPerfetto(runs);

  // --once --replay: pipeline, snapshot, the /metrics families, the table.
  gpuq::PipelineOptions options;
  options.use_sysfs = false;  // replay: no topology, seeding or reconcile
  gpuq::Pipeline pipeline(
      options, std::make_unique<gpuq::ReplayEventSource>(std::move(capture)));
  (void)pipeline.Start();
  std::atomic<bool> stop{false};
  (void)pipeline.Run(stop, std::nullopt);
  const gpuq::Snapshot snapshot = pipeline.TakeSnapshot();
  for (const auto format : {gpuq::OnceFormat::kTable, gpuq::OnceFormat::kJson,
                            gpuq::OnceFormat::kPrometheus}) {
    (void)gpuq::RenderOnce(snapshot, format);
  }
  return 0;
}

#include "cli/report_command.h"

#include <iostream>
#include <vector>

#include "common/log.h"
#include "report/render_html.h"
#include "report/render_json.h"
#include "report/render_perfetto.h"
#include "report/render_text.h"
#include "report/report_format.h"
#include "report/run_analysis.h"

namespace gpuq {

int RunReportCommand(const Options& options) {
  std::vector<report::RunReport> runs;
  for (const ReportCapture& capture : options.report_captures) {
    report::RunReport run;
    std::string error;
    if (!report::AnalyzeCaptureFile(capture.path, 1.0, options.allow_truncated,
                                    &run, &error)) {
      Log().Write(LogLevel::kError, error);
      return 1;
    }
    if (!error.empty()) {  // --allow-truncated: the complete records
      Log().Write(LogLevel::kWarn, error);
    }
    run.label = capture.label;
    runs.push_back(std::move(run));
  }
  switch (options.report_format) {
    case report::ReportFormat::kText:
      std::cout << report::RenderText(runs, false);
      break;
    case report::ReportFormat::kMarkdown:
      std::cout << report::RenderText(runs, true);
      break;
    case report::ReportFormat::kJson:
      report::WriteJson(runs, std::cout);  // in 64 KiB writes (JsonStream)
      break;
    case report::ReportFormat::kHtml:
      std::cout << report::RenderHtml(runs);
      break;
    case report::ReportFormat::kPerfetto:
      report::WritePerfetto(runs, std::cout);
      break;
  }
  std::cout.flush();
  if (!std::cout) {
    Log().Write(LogLevel::kError, "report: writing to stdout failed");
    return 1;
  }
  return 0;
}

}  // namespace gpuq

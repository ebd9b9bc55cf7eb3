// `gpuq-agent report --output perfetto`: the runs as Chrome trace-event JSON
// (the JSON Object Format, {"traceEvents": [...], "displayTimeUnit": "ms"}),
// which ui.perfetto.dev and chrome://tracing open. Per run:
//  - one process per GPU: runlist unmaps and maps and evictions as complete
//    ("X") slices with their real durations and the slice args, live queues
//    as a counter track ("C");
//  - one process per OS process that held queues: each queue's lifetime as
//    an "X" slice;
//  - one process "containers": submission rate per container as counters.
// Slices that overlap on a track go to separate threads ("lanes"), since
// trace viewers only nest X events on one thread. Several runs share one
// trace: run r's pids start at (r + 1) * 1000000 and every process name
// starts with the run's name. Timestamps are microseconds since each run's
// first record, so runs line up at 0 for comparison.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

/// The trace written to `out` as it is made (never held whole).
void WritePerfetto(const std::vector<RunReport>& runs, std::ostream& out);
/// The same as one string (tests).
std::string RenderPerfetto(const std::vector<RunReport>& runs);

/// First pid of run `run` in the trace.
inline constexpr int kPerfettoPidsPerRun = 1000000;

}  // namespace gpuq::report

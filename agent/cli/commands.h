// What each command does. Every command returns the process exit code:
// 0 success, 1 the job could not run (the message says why and what to
// do), 2 bad usage.
#pragma once

#include <atomic>

#include "cli/options.h"

namespace gpuq {

/// Set by SIGINT/SIGTERM: long-running commands finish cleanly.
std::atomic<bool>& StopRequested();
/// The signal that set StopRequested() (SIGINT, SIGTERM; 0 if none).
std::atomic<int>& StopSignal();
void InstallSignalHandlers();

int RunDaemon(const Options& options);
int RunOnce(const Options& options);
int RunCheck(const Options& options);
int RunRecord(const Options& options);
/// record --from URL: through a running agent's recording API.
int RunRecordFrom(const Options& options);
int RunTop(const Options& options);

/// Parses argv and runs the chosen command.
int Main(int argc, char** argv);

}  // namespace gpuq

// Worker threads that cannot end the agent with std::terminate.
//
// An exception escaping a std::thread body calls std::terminate: abort(), a
// core dump and "terminate called after throwing ..." instead of one line,
// and a capture being recorded loses what was still buffered. Every worker
// of the agent runs its body through RunWorkerBody instead: the exception
// becomes one log line on stderr, is remembered (main exits non-zero), and the
// failure handler the CLI registered asks every loop to stop, so shutdown
// runs in its usual order (captures flushed, BPF links detached).
#pragma once

#include <functional>
#include <thread>

namespace gpuq {

/// Runs `body`. If it throws, logs "internal error in the <name> thread:
/// <what>; stopping" (at every log level), marks the agent failed, runs the
/// failure handler and returns false. Safe to call from any thread.
bool RunWorkerBody(const char* name,
                   const std::function<void()>& body) noexcept;

/// A std::thread whose body runs through RunWorkerBody.
std::thread StartWorkerThread(const char* name, std::function<void()> body);

/// True once any worker's body threw.
bool WorkerFailed();

/// Called (once per failure, on the failing thread) after a worker threw;
/// the CLI sets one that requests a stop. Must be async-safe enough to run on
/// any thread: it may only set flags and write to a pipe.
void SetWorkerFailureHandler(void (*handler)());

}  // namespace gpuq

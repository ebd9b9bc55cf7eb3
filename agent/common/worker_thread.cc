#include "common/worker_thread.h"

#include <atomic>
#include <cstdio>
#include <exception>
#include <new>
#include <utility>

#include "common/log.h"

namespace gpuq {
namespace {

std::atomic<bool> g_failed{false};
std::atomic<void (*)()> g_handler{nullptr};

void Report(const char* name, const char* what) {
  try {
    Log().WriteAlways(LogLevel::kError,
                      fmt::format("internal error in the {} thread: {}; "
                                  "stopping",
                                  name, what));
  } catch (...) {
    // No memory left even for the log line: the plain line, as it stands.
    std::fprintf(stderr,
                 "gpuq-agent: internal error in the %s thread: %s; stopping\n",
                 name, what);
  }
  g_failed.store(true);
  if (auto* handler = g_handler.load()) handler();
}

}  // namespace

bool RunWorkerBody(const char* name,
                   const std::function<void()>& body) noexcept {
  try {
    body();
    return true;
  } catch (const std::bad_alloc&) {
    Report(name, "out of memory");
  } catch (const std::exception& e) {
    Report(name, e.what());
  } catch (...) {
    Report(name, "unknown exception");
  }
  return false;
}

std::thread StartWorkerThread(const char* name, std::function<void()> body) {
  return std::thread(
      [name, body = std::move(body)] { RunWorkerBody(name, body); });
}

bool WorkerFailed() { return g_failed.load(); }

void SetWorkerFailureHandler(void (*handler)()) { g_handler.store(handler); }

}  // namespace gpuq

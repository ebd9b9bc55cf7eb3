// A worker thread's exception: one log line, a failure mark and the handler
// run, never std::terminate (which would abort the agent with a core dump).
#include "common/worker_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "log_capture.h"

namespace gpuq {
namespace {

std::atomic<int> g_handled{0};
void CountFailure() { g_handled.fetch_add(1); }

TEST(WorkerThreadTest, BodyThatReturnsIsNotAFailure) {
  bool ran = false;
  EXPECT_TRUE(RunWorkerBody("quiet", [&] { ran = true; }));
  EXPECT_TRUE(ran);
}

TEST(WorkerThreadTest, ThrowingBodyIsOneLineAndAStopRequest) {
  SetWorkerFailureHandler(CountFailure);
  const int before = g_handled.load();
  // At every level: an internal error is said even with --log.level=error.
  const LogLevel level = Log().level();
  Log().SetLevel(LogLevel::kError);
  LogCapture log;
  std::thread t = StartWorkerThread(
      "test reader", [] { throw std::runtime_error("cannot parse 7"); });
  t.join();
  EXPECT_TRUE(WorkerFailed());
  EXPECT_EQ(g_handled.load(), before + 1);
  EXPECT_FALSE(RunWorkerBody("allocator", [] { throw std::bad_alloc(); }));
  EXPECT_FALSE(RunWorkerBody("odd", [] { throw 42; }));
  Log().SetLevel(level);
  // The logger's format before the flags are read (plain).
  EXPECT_EQ(log.Lines(),
            (std::vector<std::string>{
                "gpuq-agent: internal error in the test reader thread: cannot "
                "parse 7; stopping",
                "gpuq-agent: internal error in the allocator thread: out of "
                "memory; stopping",
                "gpuq-agent: internal error in the odd thread: unknown "
                "exception; stopping"}));
  EXPECT_EQ(g_handled.load(), before + 3);
  SetWorkerFailureHandler(nullptr);
}

}  // namespace
}  // namespace gpuq

// A worker thread's exception: one line, a failure mark and the handler run,
// never std::terminate (which would abort the agent with a core dump).
#include "common/worker_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <new>
#include <stdexcept>

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
  testing::internal::CaptureStderr();
  std::thread t = StartWorkerThread(
      "test reader", [] { throw std::runtime_error("cannot parse 7"); });
  t.join();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(
      err,
      "gpuq-agent: internal error in the test reader thread: cannot parse "
      "7; stopping\n");
  EXPECT_TRUE(WorkerFailed());
  EXPECT_EQ(g_handled.load(), before + 1);

  testing::internal::CaptureStderr();
  EXPECT_FALSE(RunWorkerBody("allocator", [] { throw std::bad_alloc(); }));
  EXPECT_EQ(
      testing::internal::GetCapturedStderr(),
      "gpuq-agent: internal error in the allocator thread: out of memory; "
      "stopping\n");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(RunWorkerBody("odd", [] { throw 42; }));
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "gpuq-agent: internal error in the odd thread: unknown exception; "
            "stopping\n");
  EXPECT_EQ(g_handled.load(), before + 3);
  SetWorkerFailureHandler(nullptr);
}

}  // namespace
}  // namespace gpuq

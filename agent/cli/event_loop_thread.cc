#include "cli/event_loop_thread.h"

#include <optional>

#include "common/worker_thread.h"

namespace gpuq {

EventLoopThread::EventLoopThread(Pipeline* pipeline, const char* name) {
  thread_ = std::thread([this, pipeline, name] {
    Pipeline::RunResult result = Pipeline::RunResult::kError;
    RunWorkerBody(name, [&] { result = pipeline->Run(stop_, std::nullopt); });
    failed_.store(result == Pipeline::RunResult::kError);
    done_.store(true);  // after failed_: Failed() reads it once Done()
  });
}

EventLoopThread::~EventLoopThread() { Stop(); }

bool EventLoopThread::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  return Failed();
}

}  // namespace gpuq

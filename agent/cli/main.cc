// gpuq-agent: see cli/commands.h.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli/commands.h"
#include "common/log.h"
#include "common/worker_thread.h"

namespace {

// prefix + what as a log line in the format chosen (the plain line before the
// flags were read), or as the plain line when even that cannot be made: the
// allocation that failed may have been the last one possible.
void Fatal(const char* prefix, const char* what) {
  try {
    gpuq::Log().WriteAlways(gpuq::LogLevel::kError, std::string(prefix) + what);
  } catch (...) {
    std::fprintf(stderr, "gpuq-agent: %s%s\n", prefix, what);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing escapes as an abort and a core dump: whatever is thrown past the
  // commands (an allocation that failed, a library's exception) becomes one
  // line and exit 1, like every other failure.
  try {
    const int status = gpuq::Main(argc, argv);
    // A worker thread failed and asked for the stop: its line is printed.
    return status == 0 && gpuq::WorkerFailed() ? 1 : status;
  } catch (const std::bad_alloc&) {
    Fatal("out of memory", "");
  } catch (const std::exception& e) {
    Fatal("internal error: ", e.what());
  } catch (...) {
    Fatal("internal error: ", "unknown exception");
  }
  return 1;
}

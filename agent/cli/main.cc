// gpuq-agent: see cli/commands.h.
#include <cstdio>
#include <exception>
#include <new>

#include "cli/commands.h"
#include "common/worker_thread.h"

int main(int argc, char** argv) {
  // Nothing escapes as an abort and a core dump: whatever is thrown past the
  // commands (an allocation that failed, a library's exception) becomes one
  // line and exit 1, like every other failure.
  try {
    const int status = gpuq::Main(argc, argv);
    // A worker thread failed and asked for the stop: its line is printed.
    return status == 0 && gpuq::WorkerFailed() ? 1 : status;
  } catch (const std::bad_alloc&) {
    std::fputs("gpuq-agent: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuq-agent: internal error: %s\n", e.what());
  } catch (...) {
    std::fputs("gpuq-agent: internal error: unknown exception\n", stderr);
  }
  return 1;
}

// A process's runtime knobs, read from its initial environment
// (<procfs>/<pid>/environ). Reading it needs the same ptrace access as its
// memory (PTRACE_MODE_READ), so the sampler reads it only for processes
// whose queues it reads; only the knobs' names are kept, and nothing read
// is logged.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>
#include <string>

namespace gpuq {

/// Reads `pid`'s environment in pieces (memory bounded whatever its size)
/// and sets *out's set, cut and values. Returns false when it cannot be
/// read (the process is gone, no ptrace access) or is empty.
bool ReadRuntimeKnobs(const std::string& procfs, uint32_t pid,
                      gpuq_process_knobs_record* out);

}  // namespace gpuq

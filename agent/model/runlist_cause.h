// The cause of a runlist operation, as the kernel side records it.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>

namespace gpuq {

/// `cause` if this agent knows it, else GPUQ_CAUSE_UNKNOWN: a newer BPF
/// object may record causes an older agent has no label for.
inline uint32_t KnownRunlistCause(uint32_t cause) {
  return cause < GPUQ_CAUSE__MAX ? cause : uint32_t{GPUQ_CAUSE_UNKNOWN};
}

}  // namespace gpuq

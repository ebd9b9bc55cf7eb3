// The column of the per-(container, GPU) tables (`--once`'s and `top`'s) a
// queue type counts in: one rule, so the tables agree. Every SDMA engine
// kind (plain, XGMI, by engine id) is SDMA; HIQ, DIQ and types this agent
// does not know are OTHER.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>

namespace gpuq {

enum class QueueColumn { kCompute, kSdma, kOther };

inline QueueColumn QueueColumnOf(uint32_t queue_type) {
  switch (queue_type) {
    case GPUQ_QUEUE_COMPUTE:
      return QueueColumn::kCompute;
    case GPUQ_QUEUE_SDMA:
    case GPUQ_QUEUE_SDMA_XGMI:
    case GPUQ_QUEUE_SDMA_BY_ENG_ID:
      return QueueColumn::kSdma;
    default:
      return QueueColumn::kOther;
  }
}

/// Adds `n` to whichever of *compute, *sdma and *other `queue_type` counts
/// in.
template <typename T>
void AddToQueueColumn(uint32_t queue_type, T n, T* compute, T* sdma, T* other) {
  switch (QueueColumnOf(queue_type)) {
    case QueueColumn::kCompute:
      *compute += n;
      break;
    case QueueColumn::kSdma:
      *sdma += n;
      break;
    case QueueColumn::kOther:
      *other += n;
      break;
  }
}

}  // namespace gpuq

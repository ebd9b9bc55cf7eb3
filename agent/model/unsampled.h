// Why a live compute queue's submissions are not counted: the sampler reads
// only queues in ROCr's layout whose addresses their create record carried
// (model/write_index.h). gpuq_unsampled_queues says which, per container and
// GPU, so a submissions figure short of what a program wrote is explained
// by the agent itself rather than left to guesswork.
#pragma once

#include <gpuq/abi.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace gpuq {

enum class UnsampledReason : uint32_t {
  /// Found in sysfs (created before the agent started, or its create record
  /// was lost to a skipped program or a full ring buffer): sysfs shows no
  /// ring addresses.
  kSysfsOnly = 0,
  /// Its write pointer is not ROCr's amd_queue_t (a PM4 compute queue, a
  /// runtime other than ROCr, or a capture from before the layout flag).
  kNotRocr,
  /// Its last sample could not be read (gpuq_queue_samples_total says
  /// whether unreadable or denied).
  kUnreadable,
};

/// How many reasons there are (arrays indexed by UnsampledReason).
inline constexpr size_t kUnsampledReasons = 3;

inline const char* UnsampledReasonLabel(UnsampledReason r) {
  switch (r) {
    case UnsampledReason::kSysfsOnly:
      return "sysfs_only";
    case UnsampledReason::kNotRocr:
      return "not_rocr";
    case UnsampledReason::kUnreadable:
      return "unreadable";
  }
  return "unknown";
}

/// The reason a compute queue is not sampled, or none when it is (or will
/// be at the sampler's next round). Non-compute queues are never sampled and
/// are not asked about.
inline std::optional<UnsampledReason> UnsampledReasonOf(bool seeded,
                                                        uint32_t create_flags,
                                                        uint64_t write_ptr,
                                                        uint64_t read_ptr,
                                                        bool read_failed) {
  // A queue a recording began with (Model::StateAsRecords) is seeded too,
  // but keeps its create's addresses: sysfs shows none.
  if (seeded && write_ptr == 0) return UnsampledReason::kSysfsOnly;
  if ((create_flags & GPUQ_CREATE_F_ROCR_LAYOUT) == 0 || write_ptr == 0 ||
      read_ptr == 0) {
    return UnsampledReason::kNotRocr;
  }
  if (read_failed) return UnsampledReason::kUnreadable;
  return std::nullopt;
}

}  // namespace gpuq

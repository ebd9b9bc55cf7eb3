// Whether a CU mask fences a queue to a subset of its GPU's compute units:
// AMDKFD_IOC_SET_CU_MASK (HIP's hipExtStreamCreateWithCUMask, ROCr's
// hsa_amd_queue_cu_set_mask) gives amdkfd num_cu_mask bits, CU i being bit
// i % 32 of word i / 32. amdkfd uses at most max_num_cus = 1024 bits
// (kfd_chardev.c) and, mapping the mask onto the shader engines
// (mqd_symmetrically_map_cu_mask, kfd_mqd_manager.c, 6.1 to 7.3), no more
// than the node's active CUs; a CU beyond num_cu_mask is off. The node's
// active CUs are what its KFD topology shows: simd_count / simd_per_cu
// (kfd_topology.c fills simd_count as cu_active_number * simd_per_cu).
#pragma once

#include <gpuq/abi.h>

#include <cstdint>

namespace gpuq {

enum class CuMaskClass : uint32_t { kAllCus = 0, kRestricted, kUnknown };

/// "all_cus", "restricted", "unknown": the `cu_mask` label.
inline const char* CuMaskClassLabel(CuMaskClass c) {
  switch (c) {
    case CuMaskClass::kAllCus:
      return "all_cus";
    case CuMaskClass::kRestricted:
      return "restricted";
    case CuMaskClass::kUnknown:
      break;
  }
  return "unknown";
}

/// The class of the mask `e` set on a GPU with `active_cus` CUs (0: not
/// known, as in captures from before gpu_info carried simd_per_cu): unknown
/// too when the caller's mask could not be read.
inline CuMaskClass ClassifyCuMask(const gpuq_queue_cu_mask_event& e,
                                  uint32_t active_cus) {
  if (active_cus == 0 || e.words_read == 0 ||
      e.words_read > GPUQ_CU_MASK_WORDS) {
    return CuMaskClass::kUnknown;
  }
  uint32_t bits = e.num_cu_mask;
  if (bits > 32 * e.words_read) bits = 32 * e.words_read;
  for (uint32_t cu = 0; cu < active_cus; ++cu) {
    if (cu >= bits || ((e.mask[cu / 32] >> (cu % 32)) & 1u) == 0) {
      return CuMaskClass::kRestricted;
    }
  }
  return CuMaskClass::kAllCus;
}

}  // namespace gpuq

// How the running amdkfd numbers its queue types (enum kfd_queue_type, also
// what KFD sysfs prints as queues/<qid>/type), mapped to gpuq's own stable
// enum gpuq_queue_type. The numbering changed: KFD_QUEUE_TYPE_DIQ was
// removed between 6.18 and 7.2 (SDMA_XGMI went from 4 to 3), and
// SDMA_BY_ENG_ID was added in 6.12. The BPF side maps by CO-RE enum values
// (bpf/kfd_compat.bpf.h kfd__queue_type); this is the same map for what the
// agent reads from sysfs.
#pragma once

#include <bpf/btf.h>

#include <cstdint>
#include <map>
#include <string>

#include "common/host_paths.h"

namespace gpuq {

struct KfdQueueTypes {
  std::map<uint32_t, uint32_t> to_gpuq;  ///< kernel value -> gpuq_queue_type
  std::string source;  ///< where the numbering comes from, for messages
  /// GPUQ_QUEUE_UNKNOWN for a value the kernel's enum has no known name for.
  uint32_t ToGpuq(uint32_t raw) const;
};

/// From the enumerator names of enum kfd_queue_type in `btf` (module BTF
/// split over vmlinux, or a flat file); false if it has no such enum.
bool KfdQueueTypesFromBtf(const btf* types, KfdQueueTypes* out);

/// The numbering of a kernel release ("7.3.4+deb13-amd64") when no BTF
/// describes amdkfd: DIQ up to 7.1, none from 7.2 (Debian 6.18.15 has it,
/// 7.2.13 has not; 6.19-7.1 could not be checked). An amdgpu-dkms module
/// follows its own amdkfd, not the kernel's release: there, --btf decides.
KfdQueueTypes KfdQueueTypesOfRelease(const std::string& release);

/// For this host: `btf_path` (--btf) if given, else amdgpu's module BTF under
/// `paths`, else the release `uname` reports.
KfdQueueTypes LoadKfdQueueTypes(const HostPaths& paths,
                                const std::string& btf_path);

}  // namespace gpuq

// KFD topology: gpu_id -> node and the identifiers other GPU exporters use.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpuq {

/// One GPU node of /sys/class/kfd/kfd/topology/nodes/<node>/.
struct GpuNode {
  uint32_t node = 0;
  uint32_t gpu_id = 0;
  std::string name;  ///< the node's `name` file, e.g. "gfx942" ("" if absent)
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t location_id = 0;  ///< PCI bus << 8 | devfn
  uint32_t domain = 0;
  uint32_t drm_render_minor = 0;
  uint32_t gfx_target_version = 0;
  uint64_t unique_id = 0;
  uint32_t simd_count = 0;
  uint32_t simd_per_cu = 0;
  uint32_t num_xcc = 0;

  /// The node's active CUs (simd_count / simd_per_cu); 0 if not known.
  uint32_t ActiveCus() const {
    return simd_per_cu != 0 ? simd_count / simd_per_cu : 0;
  }

  /// "dddd:bb:dd.f" from domain and location_id.
  std::string PciAddress() const;

  /// The partition this node is of a partitioned GPU (CPX/DPX), 0 on any
  /// other: location_id's bits 31:28 when set, else its function bits, as
  /// rocm-smi and amd-smi read it (see gpu_topology.cc).
  uint32_t PartitionId() const;
};

/// amd-smi's index of each GPU node, by gpu_id: what AMD's
/// device-metrics-exporter labels `gpu_id` and `amd-smi list` numbers GPUs
/// by. amd-smi takes the KFD nodes in node order and sorts them stably by
/// PCI domain, bus, device and function, so a GPU's partitions follow each
/// other in partition order.
std::map<uint32_t, uint32_t> AmdSmiIndexes(
    const std::map<uint32_t, GpuNode>& gpus);

/// Reads every GPU node under `<kfd>/topology/nodes` (CPU nodes, gpu_id 0,
/// are skipped), sorted by node. Returns false and sets *error when the
/// topology directory is missing or a node's properties cannot be parsed.
bool ReadGpuTopology(const std::string& kfd_dir, std::vector<GpuNode>* out,
                     std::string* error);

gpuq_gpu_info_record ToRecord(const GpuNode& node);
GpuNode FromRecord(const gpuq_gpu_info_record& record);

}  // namespace gpuq

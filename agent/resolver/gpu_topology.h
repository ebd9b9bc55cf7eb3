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

  /// The physical GPU's PCI device, "dddd:bb:dd": the address without its
  /// function, where KFD puts a partition's node id. amd-smi groups its
  /// GPUs (a partitioned GPU's partitions) into sockets by this string,
  /// AMD's Kubernetes device plugin its partitions by the same device.
  std::string PhysicalPci() const;
};

/// A physical GPU and its KFD nodes: one, or one per partition of a
/// partitioned GPU (MI300X in DPX mode 2, in CPX mode 8).
struct PhysicalGpu {
  /// amd-smi's socket order: by PCI domain, bus and device.
  uint32_t index = 0;
  std::string pci;  ///< PhysicalPci() of its nodes
  /// Its nodes' gpu_ids in amd-smi's order (partition order).
  std::vector<uint32_t> gpu_ids;

  /// More than one node: a CPX or DPX GPU's partitions.
  bool Partitioned() const { return gpu_ids.size() > 1; }
};

/// The physical GPUs of `gpus`, by index.
std::vector<PhysicalGpu> PhysicalGpus(const std::map<uint32_t, GpuNode>& gpus);
/// Each gpu_id's physical GPU index.
std::map<uint32_t, uint32_t> PhysicalGpuIndexes(
    const std::vector<PhysicalGpu>& physical);

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

// Reads amdkfd's topology from sysfs.
//
// Formats, checked against drivers/gpu/drm/amd/amdkfd/kfd_topology.c
// (mainline, kfd_build_sysfs_node_entry(), node_show() and
// kfd_topology_add_device()):
//  - topology/nodes/<N>/ is created with kobject_init_and_add(.., "%d", id),
//    numbered 0..n-1 in topology_device_list order. Each holds the files
//    `gpu_id`, `name` and `properties` plus the subdirectories mem_banks,
//    caches, io_links, p2p_links and perf, which we do not read.
//  - gpu_id: sysfs_show_32bit_val, "%u\n". CPU nodes keep 0: only
//    kfd_topology_add_device() assigns one (kfd_generate_gpu_id()).
//  - name: sysfs_show_str_val, "%s\n" of node_props.name, the lower-cased
//    amdgpu_asic_name[] entry: "" on CPU nodes, and "ip discovery" (with a
//    space) on every ASIC enumerated by IP discovery, MI300 included.
//  - properties: one "%s %u\n" (sysfs_show_32bit_prop) or "%s %llu\n"
//    (sysfs_show_64bit_prop) line per key; unique_id and num_xcc only on GPU
//    nodes.
//  - location_id = pci_dev_id(pdev), i.e. bus << 8 | devfn; domain =
//    pci_domain_nr(). On a partitioned GPU (kfd->num_nodes > 1) the
//    partition's node_id is OR-ed in as well: into the low bits (the devfn
//    byte) in the mainline source checked, at bit 28 in a later amd-gfx patch
//    ("On multi-partition nodes, node id = location_id[31:28]").
#include "resolver/gpu_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "common/sysfs_read.h"

namespace gpuq {
namespace {

static_assert(sizeof(gpuq_gpu_info_record) % 8 == 0,
              "ABI records are a multiple of 8 bytes");
static_assert(
    sizeof(gpuq_gpu_info_record) <=
        std::numeric_limits<decltype(gpuq_event_header{}.size)>::max(),
    "hdr.size must hold the record size");

// The `properties` keys we keep that kfd_topology.c prints as 32-bit.
struct U32Property {
  std::string_view key;
  uint32_t GpuNode::*field;
};

constexpr U32Property kU32Properties[] = {
    {"vendor_id", &GpuNode::vendor_id},
    {"device_id", &GpuNode::device_id},
    {"location_id", &GpuNode::location_id},
    {"domain", &GpuNode::domain},
    {"drm_render_minor", &GpuNode::drm_render_minor},
    {"gfx_target_version", &GpuNode::gfx_target_version},
    {"simd_count", &GpuNode::simd_count},
    {"simd_per_cu", &GpuNode::simd_per_cu},
    {"num_xcc", &GpuNode::num_xcc},
};

// Stores one parsed "key value" pair in *node. Keys we do not keep are
// accepted (the kernel adds keys over time); a 32-bit key whose value does
// not fit is rejected, since the kernel prints those with %u.
bool StoreProperty(std::string_view key, uint64_t value, GpuNode* node) {
  if (key == "unique_id") {
    node->unique_id = value;
    return true;
  }
  for (const U32Property& p : kU32Properties) {
    if (key != p.key) continue;
    if (value > std::numeric_limits<uint32_t>::max()) return false;
    node->*p.field = static_cast<uint32_t>(value);
    return true;
  }
  return true;
}

// Parses one properties line, already stripped of its newline.
bool ParsePropertyLine(std::string_view line, GpuNode* node) {
  size_t space = line.find_first_of(" \t");
  if (space == 0 || space == std::string_view::npos) return false;
  std::string_view key = line.substr(0, space);
  std::string_view rest = line.substr(space);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) {
    rest.remove_prefix(1);
  }
  uint64_t value = 0;
  return ParseDecimal(TrimTrailingSpace(rest), &value) &&
         StoreProperty(key, value, node);
}

// Parses the whole `properties` file text; blank lines are allowed (the
// file ends in "\n").
bool ParseProperties(const std::string& path, std::string_view text,
                     GpuNode* node, std::string* error) {
  size_t line_no = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    if (TrimTrailingSpace(line).empty()) continue;
    if (!ParsePropertyLine(TrimTrailingSpace(line), node)) {
      *error = fmt::format("{}:{}: expected \"<key> <decimal>\", got \"{}\"",
                           path, line_no, line);
      return false;
    }
  }
  return true;
}

enum class NodeResult { kGpu, kSkip, kError };

// Reads one required file of a node directory.
NodeResult ReadNodeFile(const std::string& path, std::string* text,
                        std::string* error) {
  int err = ReadWholeFile(path, text);
  if (err == 0) return NodeResult::kGpu;
  if (IsVanished(err)) return NodeResult::kSkip;
  *error = fmt::format("{}: {}", path, std::strerror(err));
  return NodeResult::kError;
}

// Reads `name`; an absent file leaves the name empty, as the header says.
NodeResult ReadNodeName(const std::string& path, std::string* name,
                        std::string* error) {
  std::string text;
  int err = ReadWholeFile(path, &text);
  if (IsVanished(err)) {
    name->clear();
    return NodeResult::kGpu;
  }
  if (err != 0) {
    *error = fmt::format("{}: {}", path, std::strerror(err));
    return NodeResult::kError;
  }
  // Only the "\n" the kernel appends goes: names may contain spaces.
  if (!text.empty() && text.back() == '\n') text.pop_back();
  *name = std::move(text);
  return NodeResult::kGpu;
}

// Reads nodes/<node>/ into *out. kSkip for CPU nodes and vanished nodes.
NodeResult ReadNode(const std::string& dir, uint32_t node, GpuNode* out,
                    std::string* error) {
  std::string text;
  NodeResult r = ReadNodeFile(dir + "/gpu_id", &text, error);
  if (r != NodeResult::kGpu) return r;
  uint32_t gpu_id = 0;
  if (!ParseU32(TrimTrailingSpace(text), &gpu_id)) {
    *error = fmt::format("{}/gpu_id: expected a decimal, got \"{}\"", dir,
                         TrimTrailingSpace(text));
    return NodeResult::kError;
  }
  if (gpu_id == 0) return NodeResult::kSkip;  // a CPU node

  GpuNode parsed;
  parsed.node = node;
  parsed.gpu_id = gpu_id;
  r = ReadNodeName(dir + "/name", &parsed.name, error);
  if (r != NodeResult::kGpu) return r;
  const std::string props_path = dir + "/properties";
  r = ReadNodeFile(props_path, &text, error);
  if (r != NodeResult::kGpu) return r;
  if (!ParseProperties(props_path, text, &parsed, error)) {
    return NodeResult::kError;
  }
  *out = std::move(parsed);
  return NodeResult::kGpu;
}

}  // namespace

std::string GpuNode::PciAddress() const {
  // Only the low 16 bits are bus/devfn. A partition id at bit 28 (see the
  // top of this file) is dropped; one OR-ed into the devfn byte shows as the
  // function number, which at least keeps partitions distinct.
  const uint32_t bus = (location_id >> 8) & 0xff;
  const uint32_t devfn = location_id & 0xff;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, devfn >> 3,
                     devfn & 7);
}

uint32_t GpuNode::PartitionId() const {
  // rocm_smi_lib (rsmi_dev_partition_id_get) and amd-smi: the node id at
  // bits 31:28 where that amd-gfx layout is in use, else in the devfn's
  // function bits, where mainline's kfd_topology_add_device() ORs it.
  const uint32_t high = location_id >> 28;
  return high != 0 ? high : (location_id & 7);
}

std::string GpuNode::PhysicalPci() const {
  return fmt::format("{:04x}:{:02x}:{:02x}", domain, (location_id >> 8) & 0xff,
                     (location_id >> 3) & 0x1f);
}

std::vector<PhysicalGpu> PhysicalGpus(const std::map<uint32_t, GpuNode>& gpus) {
  const std::map<uint32_t, uint32_t> smi = AmdSmiIndexes(gpus);
  std::vector<std::pair<uint32_t, uint32_t>> by_smi;  // amd-smi index, gpu_id
  for (const auto& [gpu_id, index] : smi) by_smi.emplace_back(index, gpu_id);
  std::sort(by_smi.begin(), by_smi.end());
  // amd-smi's order sorts by domain, bus and device first: a physical GPU's
  // nodes are adjacent in it, and the physical GPUs in socket order.
  std::vector<PhysicalGpu> out;
  for (const auto& [index, gpu_id] : by_smi) {
    std::string pci = gpus.at(gpu_id).PhysicalPci();
    if (out.empty() || out.back().pci != pci) {
      out.push_back({static_cast<uint32_t>(out.size()), std::move(pci), {}});
    }
    out.back().gpu_ids.push_back(gpu_id);
  }
  return out;
}

std::map<uint32_t, uint32_t> PhysicalGpuIndexes(
    const std::vector<PhysicalGpu>& physical) {
  std::map<uint32_t, uint32_t> index;
  for (const PhysicalGpu& p : physical) {
    for (uint32_t gpu_id : p.gpu_ids) index[gpu_id] = p.index;
  }
  return index;
}

std::map<uint32_t, uint32_t> AmdSmiIndexes(
    const std::map<uint32_t, GpuNode>& gpus) {
  std::vector<const GpuNode*> order;
  for (const auto& [gpu_id, node] : gpus) order.push_back(&node);
  std::sort(order.begin(), order.end(), [](const GpuNode* a, const GpuNode* b) {
    return a->node < b->node;
  });
  // amd-smi's sort key: domain, then bus << 8 | devfn (the partition bits
  // at 31:28 left out, so partitions keep their KFD node order).
  auto pci_key = [](const GpuNode* n) {
    return (static_cast<uint64_t>(n->domain) << 32) |
           (n->location_id & 0x0fffffffu);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const GpuNode* a, const GpuNode* b) {
                     return pci_key(a) < pci_key(b);
                   });
  std::map<uint32_t, uint32_t> index;
  for (uint32_t i = 0; i < order.size(); ++i) index[order[i]->gpu_id] = i;
  return index;
}

bool ReadGpuTopology(const std::string& kfd_dir, std::vector<GpuNode>* out,
                     std::string* error) {
  const std::string nodes_dir = kfd_dir + "/topology/nodes";
  std::vector<uint32_t> ids;
  if (int err = ListNumericEntries(nodes_dir, &ids); err != 0) {
    *error = fmt::format("{}: {}", nodes_dir, std::strerror(err));
    return false;
  }
  std::vector<GpuNode> nodes;
  for (uint32_t id : ids) {
    GpuNode node;
    switch (ReadNode(fmt::format("{}/{}", nodes_dir, id), id, &node, error)) {
      case NodeResult::kGpu:
        nodes.push_back(std::move(node));
        break;
      case NodeResult::kSkip:
        break;
      case NodeResult::kError:
        return false;
    }
  }
  *out = std::move(nodes);  // already sorted: ids were
  return true;
}

gpuq_gpu_info_record ToRecord(const GpuNode& node) {
  gpuq_gpu_info_record r;
  std::memset(&r, 0, sizeof(r));  // padding and unused header fields too
  r.hdr.type = GPUQ_EV_GPU_INFO;
  r.hdr.size = sizeof(r);
  r.gpu_id = node.gpu_id;
  r.node = node.node;
  r.vendor_id = node.vendor_id;
  r.device_id = node.device_id;
  r.location_id = node.location_id;
  r.domain = node.domain;
  r.drm_render_minor = node.drm_render_minor;
  r.gfx_target_version = node.gfx_target_version;
  r.unique_id = node.unique_id;
  r.simd_count = node.simd_count;
  r.simd_per_cu = node.simd_per_cu;
  r.num_xcc = node.num_xcc;
  const size_t len = std::min(node.name.size(), sizeof(r.name) - 1);
  std::memcpy(r.name, node.name.data(), len);  // r.name[len] is already 0
  return r;
}

GpuNode FromRecord(const gpuq_gpu_info_record& record) {
  GpuNode n;
  n.node = record.node;
  n.gpu_id = record.gpu_id;
  // A record from a capture file may lack the NUL: never read past the array.
  n.name.assign(record.name, strnlen(record.name, sizeof(record.name)));
  n.vendor_id = record.vendor_id;
  n.device_id = record.device_id;
  n.location_id = record.location_id;
  n.domain = record.domain;
  n.drm_render_minor = record.drm_render_minor;
  n.gfx_target_version = record.gfx_target_version;
  n.unique_id = record.unique_id;
  n.simd_count = record.simd_count;
  n.simd_per_cu = record.simd_per_cu;
  n.num_xcc = record.num_xcc;
  return n;
}

}  // namespace gpuq

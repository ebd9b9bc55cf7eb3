#include "loader/kfd_queue_types.h"

#include <bpf/libbpf.h>
#include <gpuq/abi.h>
#include <sys/utsname.h>

#include <cstdio>
#include <cstring>

namespace gpuq {
namespace {

// The enumerator names gpuq knows, as gpuq_queue_type.
constexpr struct {
  const char* name;
  uint32_t gpuq;
} kNames[] = {
    {"KFD_QUEUE_TYPE_COMPUTE", GPUQ_QUEUE_COMPUTE},
    {"KFD_QUEUE_TYPE_SDMA", GPUQ_QUEUE_SDMA},
    {"KFD_QUEUE_TYPE_HIQ", GPUQ_QUEUE_HIQ},
    {"KFD_QUEUE_TYPE_DIQ", GPUQ_QUEUE_DIQ},
    {"KFD_QUEUE_TYPE_SDMA_XGMI", GPUQ_QUEUE_SDMA_XGMI},
    {"KFD_QUEUE_TYPE_SDMA_BY_ENG_ID", GPUQ_QUEUE_SDMA_BY_ENG_ID},
};

// The numbering of one kernel: the names in order, from 0.
KfdQueueTypes Numbered(std::initializer_list<uint32_t> order,
                       std::string source) {
  KfdQueueTypes t;
  uint32_t raw = 0;
  for (uint32_t gpuq : order) t.to_gpuq[raw++] = gpuq;
  t.source = std::move(source);
  return t;
}

}  // namespace

uint32_t KfdQueueTypes::ToGpuq(uint32_t raw) const {
  const auto it = to_gpuq.find(raw);
  return it == to_gpuq.end() ? static_cast<uint32_t>(GPUQ_QUEUE_UNKNOWN)
                             : it->second;
}

bool KfdQueueTypesFromBtf(const btf* types, KfdQueueTypes* out) {
  const int id = btf__find_by_name_kind(types, "kfd_queue_type", BTF_KIND_ENUM);
  if (id <= 0) return false;
  const btf_type* t = btf__type_by_id(types, id);
  const struct btf_enum* e = btf_enum(t);
  KfdQueueTypes found;
  for (int i = 0; i < btf_vlen(t); ++i, ++e) {
    const char* name = btf__name_by_offset(types, e->name_off);
    for (const auto& known : kNames) {
      if (name != nullptr && std::strcmp(name, known.name) == 0) {
        found.to_gpuq[static_cast<uint32_t>(e->val)] = known.gpuq;
      }
    }
  }
  found.source = "enum kfd_queue_type of amdgpu's BTF";
  *out = std::move(found);
  return true;
}

KfdQueueTypes KfdQueueTypesOfRelease(const std::string& release) {
  unsigned major = 0, minor = 0;
  std::sscanf(release.c_str(), "%u.%u", &major, &minor);
  const std::string source = "kernel " + release + " (no amdgpu BTF)";
  if (major > 7 || (major == 7 && minor >= 2)) {
    return Numbered({GPUQ_QUEUE_COMPUTE, GPUQ_QUEUE_SDMA, GPUQ_QUEUE_HIQ,
                     GPUQ_QUEUE_SDMA_XGMI, GPUQ_QUEUE_SDMA_BY_ENG_ID},
                    source);
  }
  return Numbered(
      {GPUQ_QUEUE_COMPUTE, GPUQ_QUEUE_SDMA, GPUQ_QUEUE_HIQ, GPUQ_QUEUE_DIQ,
       GPUQ_QUEUE_SDMA_XGMI, GPUQ_QUEUE_SDMA_BY_ENG_ID},
      source);
}

KfdQueueTypes LoadKfdQueueTypes(const HostPaths& paths,
                                const std::string& btf_path) {
  KfdQueueTypes out;
  bool found = false;
  btf* base = btf__parse((paths.KernelBtf() + "/vmlinux").c_str(), nullptr);
  if (libbpf_get_error(base) != 0) base = nullptr;
  btf* types = nullptr;
  if (!btf_path.empty()) {
    types = btf__parse(btf_path.c_str(), nullptr);  // flat
    if (libbpf_get_error(types) != 0) {
      types =
          base != nullptr ? btf__parse_split(btf_path.c_str(), base) : nullptr;
    }
  } else if (base != nullptr) {
    types = btf__parse_split((paths.KernelBtf() + "/amdgpu").c_str(), base);
  }
  if (types != nullptr && libbpf_get_error(types) == 0) {
    found = KfdQueueTypesFromBtf(types, &out);
    btf__free(types);
  }
  if (base != nullptr) btf__free(base);
  if (found) return out;
  utsname u{};
  uname(&u);
  return KfdQueueTypesOfRelease(u.release);
}

}  // namespace gpuq

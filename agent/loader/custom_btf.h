// --btf FILE: external BTF for amdgpu's types on hosts whose module has none
// (amdgpu-dkms), handed to libbpf as btf_custom_path. libbpf then relocates
// every CO-RE read against that one file and loads no module BTF
// (shared/design/field-notes.md 2), so it must be flat: vmlinux's types and
// amdgpu's. A split BTF of the module over the running vmlinux (what pahole
// --btf_encode_detached --btf_base /sys/kernel/btf/vmlinux writes, or a
// debug amdgpu.ko with a .BTF section) is flattened here.
#pragma once

#include <string>

namespace gpuq {

struct CustomBtf {
  std::string path;        ///< flat BTF for btf_custom_path
  bool kfd_types = false;  ///< describes struct kfd_process and struct queue
  bool temporary = false;  ///< path is a file this process wrote
};

/// Reads `file` (raw BTF or an ELF with .BTF; flat, or split over
/// `vmlinux_btf`) and returns a flat BTF for libbpf. False with *error on
/// unreadable or unusable input.
bool PrepareCustomBtf(const std::string& file, const std::string& vmlinux_btf,
                      CustomBtf* out, std::string* error);

}  // namespace gpuq

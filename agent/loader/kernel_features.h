// What the running kernel offers the kernel side: BTF, kprobes, amdgpu and
// the functions gpuq hooks. Read from injectable roots so `check` can be
// tested on fixture trees.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/host_paths.h"

namespace gpuq {

struct KernelFeatures {
  bool vmlinux_btf = false;  ///< <sysfs>/kernel/btf/vmlinux
  bool amdgpu_btf = false;   ///< <sysfs>/kernel/btf/amdgpu (module BTF)
  /// amdkfd's structs are described by some BTF (module, or vmlinux when
  /// amdgpu is built in): CO-RE reads of queue/kfd_process can relocate.
  bool kfd_types = false;
  bool kprobes = false;  ///< the kernel can create kprobes
  /// This process has CAP_SYS_ADMIN: libbpf finds module BTF by id
  /// (bpf_btf_get_next_id), which needs it, and silently skips module BTF
  /// without it, so CO-RE against amdgpu's types would quietly fail.
  bool cap_sys_admin = false;
  bool amdgpu_loaded = false;       ///< amdgpu symbols in kallsyms
  bool kfd_sysfs = false;           ///< <sysfs>/class/kfd/kfd
  std::set<std::string> kallsyms;   ///< asked-for functions present in kallsyms
  std::set<std::string> btf_funcs;  ///< asked-for functions with a BTF FUNC
};

/// Probes the kernel for `functions`. Never fails: what cannot be read is
/// reported as absent.
KernelFeatures ProbeKernel(const HostPaths& paths,
                           const std::vector<std::string>& functions);

/// True if this process may load and attach BPF programs (root, or
/// CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN), from /proc/self/status.
bool HasBpfPrivileges();
/// True if this process has CAP_SYS_ADMIN.
bool HasCapSysAdmin();

}  // namespace gpuq

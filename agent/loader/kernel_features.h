// What the running kernel offers the kernel side: BTF, kprobes, amdgpu and
// the functions gpuq hooks. Read from injectable roots so `check` can be
// tested on fixture trees.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/host_paths.h"

namespace gpuq {

/// A function's BTF FUNC record: the first of its name, as
/// btf__find_by_name_kind would find it, in vmlinux's BTF or in amdgpu's
/// (split BTF: its ids follow vmlinux's).
struct BtfFunc {
  unsigned id = 0;
  bool amdgpu = false;
};

struct KernelFeatures {
  bool vmlinux_btf = false;  ///< <sysfs>/kernel/btf/vmlinux
  bool amdgpu_btf = false;   ///< <sysfs>/kernel/btf/amdgpu (module BTF)
  /// amdkfd's structs are described by some BTF (module, or vmlinux when
  /// amdgpu is built in): CO-RE reads of queue/kfd_process can relocate.
  bool kfd_types = false;
  /// --btf: amdkfd's types come from an external flat BTF (kfd_types says
  /// whether it has them); fentry cannot use it (libbpf then loads no
  /// module BTF to resolve attach targets).
  bool custom_btf = false;
  /// The kernel can create kprobes that fire. With attach_probed: a kprobe
  /// on a syscall function was attached and seen firing; else guessed from
  /// sysfs (the kprobe PMU or kprobe_events exist).
  bool kprobes = false;
  /// The kernel loads and attaches trampolines (fentry) that fire. Without
  /// attach_probed: assumed where vmlinux BTF exists.
  bool fentry = false;
  /// Raw tracepoints (tp_btf sys_enter/sys_exit) load, attach and fire.
  bool tracepoints = false;
  /// The three facts above come from feature probes (needs BPF privileges:
  /// bpf/feature_probe.bpf.c), not from guesses.
  bool attach_probed = false;
  /// One line per kind: why it is (not) available, for `check`.
  std::string fentry_note, kprobe_note, tracepoint_note;
  /// This process has CAP_SYS_ADMIN: libbpf finds module BTF by id
  /// (bpf_btf_get_next_id), which needs it, and silently skips module BTF
  /// without it, so CO-RE against amdgpu's types would quietly fail.
  bool cap_sys_admin = false;
  bool amdgpu_loaded = false;  ///< amdgpu symbols in kallsyms
  bool kfd_sysfs = false;      ///< <sysfs>/class/kfd/kfd
  /// /dev/kfd's character major from <procfs>/devices (0: none); the
  /// tracepoint tier's filter.
  unsigned kfd_major = 0;
  std::set<std::string> kallsyms;  ///< asked-for functions present in kallsyms
  /// Asked-for functions with a BTF FUNC, and where it is: what libbpf's
  /// search by name finds (loader/trace_targets.h hands it to libbpf
  /// instead).
  std::map<std::string, BtfFunc> btf_funcs;
  /// Asked-for functions the compiler also emitted as a .constprop/.isra
  /// clone (kallsyms), by name: callers of the clone bypass the function.
  std::map<std::string, std::string> clones;
  /// vmlinux BTF knows the bpf_get_func_ret helper (Linux 5.17): the fexit
  /// programs of GPUQ_EXIT_PROGRAMS load. Assumed without vmlinux BTF.
  bool func_ret = true;
  /// amdkfd has secondary contexts (AMDKFD_IOC_CREATE_PROCESS, 7.2+):
  /// struct kfd_process has context_id (BTF), or, without amdgpu BTF,
  /// kallsyms has kfd_ioctl_create_process.
  bool kfd_contexts = false;
  /// kfd_process_evict_queues(p, trigger) takes the trigger (Linux 6.0,
  /// "drm/amdkfd: Add user queue eviction restore SMI event"): from its BTF
  /// prototype, else from the kernel release.
  bool evict_trigger = true;
  std::string release;  ///< <procfs>/sys/kernel/osrelease
  /// The kernel may preempt a task inside a program, or inside code that
  /// holds a CPU's BPF recursion guard, that runs with migration but not
  /// preemption disabled: trampolines (fentry), from 7.x syscall tracepoints
  /// (7.x dropped their preempt_disable guard), and the bpf() map syscalls,
  /// which hold bpf_prog_active (bpf_disable_instrumentation), the guard of
  /// every kprobe program. The next task on that CPU then skips the program
  /// (recursion_misses) and its record is lost. True for the full, lazy and
  /// rt models (Debian's kernels boot lazy from 6.16), and for a dynamic one
  /// whose mode cannot be read; `check` says so.
  bool preempts_programs = false;
  std::string preempt_note;  ///< the model and where it was read, for `check`
};

/// The preemption model from what the kernel shows: `sched_preempt`, the
/// text of debugfs sched/preempt ("full (lazy)": the mode in parentheses,
/// Linux 5.12+ with PREEMPT_DYNAMIC), else `cmdline`'s preempt=, else
/// `version` (uname -v: "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT", or no
/// such word for none and voluntary). Sets preempts_programs and
/// preempt_note.
void ReadPreemptModel(const std::string& sched_preempt,
                      const std::string& cmdline, const std::string& version,
                      KernelFeatures* out);

/// Probes the kernel for `functions`. Never fails: what cannot be read is
/// reported as absent. With BPF privileges it also loads, attaches and fires
/// one tiny fentry, kprobe and raw-tracepoint program each (on a syscall
/// function it then calls), so a kernel that refuses one kind is known before
/// any hook is planned (libbpf-tools' fentry_can_attach, made functional).
KernelFeatures ProbeKernel(const HostPaths& paths,
                           const std::vector<std::string>& functions);

/// The BTF part of ProbeKernel: reads `btf_dir`/vmlinux and, where
/// out->amdgpu_btf, `btf_dir`/amdgpu (split over vmlinux's), as
/// /sys/kernel/btf has them, in one pass: vmlinux_btf, btf_funcs for
/// `wanted`, kfd_types, func_ret, kfd_contexts,
/// evict_trigger.
void ScanBtf(const std::string& btf_dir, const std::vector<std::string>& wanted,
             KernelFeatures* out);

/// The names of f.btf_funcs.
std::set<std::string> BtfFuncNames(const KernelFeatures& f);

/// The attach probes alone (sets fentry, kprobes, tracepoints, the notes and
/// attach_probed). Needs BPF privileges; without them it leaves `f` as is.
void ProbeAttachKinds(KernelFeatures* f);

/// vmlinux BTF, as libbpf finds it, has the kfuncs bpf_preempt_disable and
/// bpf_preempt_enable (Linux 6.10): the doorbell programs that hold
/// preemption off can load (bpf/doorbell.bpf.c says why they must, 6.13+).
bool KernelHasPreemptKfuncs();

/// True if this process may load and attach BPF programs (root, or
/// CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN), read with libcap.
bool HasBpfPrivileges();
/// True if this process has CAP_SYS_ADMIN.
bool HasCapSysAdmin();

}  // namespace gpuq

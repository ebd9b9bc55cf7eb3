#include "loader/hooks.h"

namespace gpuq {

const char* HookModeName(HookMode mode) {
  switch (mode) {
    case HookMode::kFentry:
      return "fentry";
    case HookMode::kKprobe:
      return "kprobe";
    case HookMode::kNone:
      return "none";
  }
  return "none";
}

const std::vector<HookSpec>& Hooks() {
  // Choices and traps: shared/design/kfd-probe-points.md sections 1 and 4.
  static const std::vector<HookSpec> kHooks = {
      {"queue_create", "kfd_procfs_add_queue", "fentry_kfd_procfs_add_queue",
       nullptr, "kprobe_kfd_procfs_add_queue", nullptr, true},
      // Uses only the uapi args, so it works without amdgpu BTF; it is the
      // create path when kfd_procfs_add_queue cannot be hooked.
      {"create_ioctl", "kfd_ioctl_create_queue",
       "fentry_kfd_ioctl_create_queue", "fexit_kfd_ioctl_create_queue",
       "kprobe_kfd_ioctl_create_queue", "kretprobe_kfd_ioctl_create_queue",
       false},
      {"queue_destroy", "uninit_queue", "fentry_uninit_queue", nullptr,
       "kprobe_uninit_queue", nullptr, true},
      // Not kfd_process_notifier_release_internal: inlined into this one on
      // 6.12, so a hook there misses every ordinary exit.
      {"process_exit", "kfd_process_notifier_release",
       "fentry_kfd_process_notifier_release", nullptr,
       "kprobe_kfd_process_notifier_release", nullptr, true},
  };
  return kHooks;
}

std::vector<std::string> ProgramsOf(const HookSpec& spec, HookMode mode) {
  std::vector<std::string> programs;
  const char* entry = nullptr;
  const char* exit = nullptr;
  if (mode == HookMode::kFentry) {
    entry = spec.fentry_entry;
    exit = spec.fentry_exit;
  } else if (mode == HookMode::kKprobe) {
    entry = spec.kprobe_entry;
    exit = spec.kprobe_exit;
  }
  if (entry != nullptr) programs.emplace_back(entry);
  if (exit != nullptr) programs.emplace_back(exit);
  return programs;
}

std::vector<HookPlan> PlanHooks(const KernelFeatures& f, bool allow_fentry) {
  std::vector<HookPlan> plans;
  for (const HookSpec& spec : Hooks()) {
    HookPlan plan{&spec, HookMode::kNone, ""};
    const bool in_btf = f.btf_funcs.count(spec.function) != 0;
    const bool in_kallsyms = f.kallsyms.count(spec.function) != 0;
    if (spec.needs_kfd_types && f.kfd_types && f.amdgpu_btf &&
        !f.cap_sys_admin) {
      plan.reason =
          "reading amdgpu's module BTF needs CAP_SYS_ADMIN (libbpf finds "
          "module BTF by id; without it CO-RE would silently read nothing)";
    } else if (spec.needs_kfd_types && !f.kfd_types) {
      plan.reason = f.amdgpu_loaded
                        ? "no BTF for amdgpu (/sys/kernel/btf/amdgpu missing: "
                          "kernel built without CONFIG_DEBUG_INFO_BTF_MODULES?)"
                        : "amdgpu is not loaded";
    } else if (allow_fentry && in_btf) {
      plan.mode = HookMode::kFentry;
      plan.reason = "function has BTF";
    } else if (in_kallsyms && f.kprobes) {
      plan.mode = HookMode::kKprobe;
      plan.reason = in_btf ? "fentry disabled" : "function has no BTF";
    } else if (in_kallsyms) {
      plan.reason = "kernel has no kprobe support and no BTF for the function";
    } else {
      plan.reason = f.amdgpu_loaded ? "function not in this kernel"
                                    : "amdgpu is not loaded";
    }
    plans.push_back(plan);
  }
  return plans;
}

}  // namespace gpuq

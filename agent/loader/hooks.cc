#include "loader/hooks.h"

#include <deque>

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

namespace {

// Program names are static strings (HookSpec holds const char*).
const char* Intern(const std::string& name) {
  static std::deque<std::string> names;
  names.push_back(name);
  return names.back().c_str();
}

// An optional hook with entry and exit programs named after its function,
// as bpf/runlist.bpf.h and bpf/eviction.bpf.h define them.
HookSpec Twins(const char* probe, const char* function, const char* group) {
  const std::string fn(function);
  return {probe,
          function,
          Intern("fentry_" + fn),
          Intern("fexit_" + fn),
          Intern("kprobe_" + fn),
          Intern("kretprobe_" + fn),
          true,
          group,
          true};
}

}  // namespace

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
      // Issue 3 (bpf/runlist.bpf.h, bpf/eviction.bpf.h): all optional, each
      // present or reported missing on its own. HWS runlist: not
      // execute_queues_cpsch (inlined on 6.1, a clone without BTF on 6.12).
      Twins("runlist_unmap", "unmap_queues_cpsch", "runlist"),
      Twins("runlist_map", "map_queues_cpsch", "runlist"),
      // MES: not remove_queue_mes (a .constprop clone without BTF); v12 is
      // absent on 6.1.
      Twins("mes_add", "add_queue_mes", "mes"),
      Twins("mes_remove_v11", "mes_v11_0_remove_hw_queue", "mes"),
      Twins("mes_remove_v12", "mes_v12_0_remove_hw_queue", "mes"),
      Twins("evict_cpsch", "evict_process_queues_cpsch", "eviction"),
      Twins("evict_nocpsch", "evict_process_queues_nocpsch", "eviction"),
      Twins("restore_cpsch", "restore_process_queues_cpsch", "eviction"),
      Twins("restore_nocpsch", "restore_process_queues_nocpsch", "eviction"),
      Twins("evict_trigger", "kfd_process_evict_queues", "eviction"),
      // The dqm operations runlist/MES operations are attributed to. Not the
      // dqm's update_queue: vmlinux BTF has an ipc/sem.c update_queue that
      // libbpf would attach with the wrong prototype; the ioctl instead.
      Twins("op_create", "create_queue_cpsch", "attribution"),
      Twins("op_destroy", "destroy_queue_cpsch", "attribution"),
      Twins("op_terminate", "process_termination_cpsch", "attribution"),
      Twins("op_terminate_nocpsch", "process_termination_nocpsch",
            "attribution"),
      Twins("op_update", "kfd_ioctl_update_queue", "attribution"),
  };
  return kHooks;
}

const HookSpec* HookOfProgram(const std::string& program) {
  for (const HookSpec& spec : Hooks()) {
    for (const char* name : {spec.fentry_entry, spec.fentry_exit,
                             spec.kprobe_entry, spec.kprobe_exit}) {
      if (name != nullptr && program == name) return &spec;
    }
  }
  return nullptr;
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

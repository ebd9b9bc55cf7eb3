#include "loader/hooks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace gpuq {

const char* HookModeName(HookMode mode) {
  switch (mode) {
    case HookMode::kFentry:
      return "fentry";
    case HookMode::kKprobe:
      return "kprobe";
    case HookMode::kTracepoint:
      return "tracepoint";
    case HookMode::kNone:
      return "none";
  }
  return "none";
}

const char* TierName(ProbeTier tier) {
  switch (tier) {
    case ProbeTier::kBtfFentry:
      return "btf-fentry";
    case ProbeTier::kBtfKprobe:
      return "btf-kprobe";
    case ProbeTier::kArgsKprobe:
      return "args-kprobe";
    case ProbeTier::kTracepoint:
      return "tracepoint";
    case ProbeTier::kNone:
      return "none";
  }
  return "none";
}

HookMode ModeOf(ProbeTier tier) {
  switch (tier) {
    case ProbeTier::kBtfFentry:
      return HookMode::kFentry;
    case ProbeTier::kBtfKprobe:
    case ProbeTier::kArgsKprobe:
      return HookMode::kKprobe;
    case ProbeTier::kTracepoint:
      return HookMode::kTracepoint;
    case ProbeTier::kNone:
      return HookMode::kNone;
  }
  return HookMode::kNone;
}

const char* TierRequestName(TierRequest request) {
  switch (request) {
    case TierRequest::kAuto:
      return "auto";
    case TierRequest::kArgs:
      return "args";
    case TierRequest::kTracepoint:
      return "tracepoint";
  }
  return "auto";
}

bool ParseTierRequest(const std::string& text, TierRequest* out) {
  for (TierRequest r :
       {TierRequest::kAuto, TierRequest::kArgs, TierRequest::kTracepoint}) {
    if (text == TierRequestName(r)) {
      *out = r;
      return true;
    }
  }
  return false;
}

namespace {

// The programs of a function hook, each name spelled out as bpf/ defines
// it, so grep finds both sides; HooksTest checks each name's section
// against the hook's function and mode. The args-kprobe pair may name the
// kprobe twins where those read only arguments already.
struct Programs {
  const char* fentry_entry = nullptr;
  const char* fentry_exit = nullptr;
  const char* kprobe_entry = nullptr;
  const char* kprobe_exit = nullptr;
  const char* args_entry = nullptr;
  const char* args_exit = nullptr;
};

// An optional hook with entry and exit programs in every function tier, as
// bpf/runlist.bpf.h and bpf/eviction.bpf.h define them (and
// bpf/args_tier.bpf.h the args-kprobe ones).
HookSpec Twins(const char* probe, const char* function, const char* group,
               const Programs& p) {
  HookSpec spec{probe,
                function,
                p.fentry_entry,
                p.fentry_exit,
                p.kprobe_entry,
                p.kprobe_exit,
                /*needs_kfd_types=*/true,
                group,
                /*optional=*/true};
  spec.exit_needs_func_ret =
      true;  // GPUQ_EXIT_PROGRAMS (bpf/attribution.bpf.h)
  spec.args_entry = p.args_entry;
  spec.args_exit = p.args_exit;
  return spec;
}

// A hook only the args-kprobe tier has: it learns an identity the BTF
// bodies read from amdkfd's structs, so they need no program there.
HookSpec ArgsOnly(const char* probe, const char* function,
                  const char* args_entry, const char* args_exit) {
  HookSpec spec{probe,
                function,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                /*needs_kfd_types=*/false,
                "args",
                /*optional=*/true};
  spec.args_entry = args_entry;
  spec.args_exit = args_exit;
  return spec;
}

// A hook of the tracepoint tier: raw tracepoints, no kernel function.
HookSpec Tracepoint(const char* probe, const char* tracepoints,
                    const char* entry, const char* exit) {
  HookSpec spec{probe,
                tracepoints,
                nullptr,
                nullptr,
                nullptr,
                nullptr,
                /*needs_kfd_types=*/false,
                "tracepoint"};
  spec.tp_entry = entry;
  spec.tp_exit = exit;
  return spec;
}

// An optional hook on a core kernel function whose body reads only
// vmlinux types: the same kprobe program in the args-kprobe tier.
HookSpec CoreKernel(const char* probe, const char* function,
                    const char* renamed_to, const char* group,
                    const char* fentry_entry, const char* kprobe_entry) {
  HookSpec spec{probe,
                function,
                fentry_entry,
                nullptr,
                kprobe_entry,
                nullptr,
                /*needs_kfd_types=*/false,
                group,
                /*optional=*/true};
  spec.args_entry = kprobe_entry;
  spec.core_kernel = true;
  spec.renamed_to = renamed_to;
  return spec;
}

// A lifecycle hook (required) with its args-kprobe body.
HookSpec Lifecycle(HookSpec spec, const char* args_entry,
                   const char* args_exit) {
  spec.args_entry = args_entry;
  spec.args_exit = args_exit;
  return spec;
}

// The hook `spec`, learning queue creates as `creates`.
HookSpec LearnsCreates(HookSpec spec, HookSpec::Creates creates) {
  spec.creates = creates;
  return spec;
}

// A hook of secondary KFD contexts (optional): planned only where the
// kernel has them. Its args-kprobe body, if not set already.
HookSpec Context(HookSpec spec, const char* args_entry, const char* args_exit) {
  spec.optional = true;
  spec.kfd_contexts = true;
  if (args_entry != nullptr) spec.args_entry = args_entry;
  if (args_exit != nullptr) spec.args_exit = args_exit;
  return spec;
}

}  // namespace

const std::vector<HookSpec>& Hooks() {
  // Choices (docs/kfd-probe-points.md sections 1 and 4) and traps (section 5).
  static const std::vector<HookSpec> kHooks = {
      // args-kprobe: q learned inside the create ioctl, keyed by its pointer
      LearnsCreates(Lifecycle({"queue_create", "kfd_procfs_add_queue",
                               "fentry_kfd_procfs_add_queue", nullptr,
                               "kprobe_kfd_procfs_add_queue", nullptr,
                               /*needs_kfd_types=*/true},
                              "args_kprobe_kfd_procfs_add_queue", nullptr),
                    HookSpec::Creates::kQueueObject),
      // Uses only the uapi args, so it works without amdgpu BTF; it is the
      // create path when kfd_procfs_add_queue cannot be hooked.
      LearnsCreates(Lifecycle({"create_ioctl", "kfd_ioctl_create_queue",
                               "fentry_kfd_ioctl_create_queue",
                               "fexit_kfd_ioctl_create_queue",
                               "kprobe_kfd_ioctl_create_queue",
                               "kretprobe_kfd_ioctl_create_queue",
                               /*needs_kfd_types=*/false},
                              "kprobe_kfd_ioctl_create_queue",
                              "kretprobe_kfd_ioctl_create_queue"),
                    HookSpec::Creates::kIoctlArgs),
      Lifecycle({"queue_destroy", "uninit_queue", "fentry_uninit_queue",
                 nullptr, "kprobe_uninit_queue", nullptr,
                 /*needs_kfd_types=*/true},
                "args_kprobe_uninit_queue", nullptr),
      // Not kfd_process_notifier_release_internal: inlined into this one on
      // 6.12, so a hook there misses every ordinary exit.
      Lifecycle({"process_exit", "kfd_process_notifier_release",
                 "fentry_kfd_process_notifier_release", nullptr,
                 "kprobe_kfd_process_notifier_release", nullptr,
                 /*needs_kfd_types=*/true},
                "args_kprobe_kfd_process_notifier_release", nullptr),
      // Secondary KFD contexts (AMDKFD_IOC_CREATE_PROCESS, 7.2+) have no
      // mmu_notifier: amdkfd tears one down when its file is released
      // (kfd_release -> kfd_process_notifier_release_internal). Planned only
      // where the kernel has them (bpf/contexts.bpf.h).
      Context({"context_exit", "kfd_release", "fentry_kfd_release", nullptr,
               "kprobe_kfd_release", nullptr, /*needs_kfd_types=*/true,
               "contexts", /*optional=*/true},
              "args_kprobe_kfd_release", nullptr),
      // The scheduler hooks: runlist, MES, eviction and their attribution
      // (bpf/runlist.bpf.h, bpf/eviction.bpf.h). All optional, each
      // present or reported missing on its own. HWS runlist: not
      // execute_queues_cpsch (inlined on 6.1, a clone without BTF on 6.12).
      Twins("runlist_unmap", "unmap_queues_cpsch", "runlist",
            {"fentry_unmap_queues_cpsch", "fexit_unmap_queues_cpsch",
             "kprobe_unmap_queues_cpsch", "kretprobe_unmap_queues_cpsch",
             "args_kprobe_unmap_queues_cpsch",
             "args_kretprobe_unmap_queues_cpsch"}),
      Twins(
          "runlist_map", "map_queues_cpsch", "runlist",
          {"fentry_map_queues_cpsch", "fexit_map_queues_cpsch",
           "kprobe_map_queues_cpsch", "kretprobe_map_queues_cpsch",
           "args_kprobe_map_queues_cpsch", "args_kretprobe_map_queues_cpsch"}),
      // MES: not remove_queue_mes (a .constprop clone without BTF); v12 is
      // absent on 6.1.
      Twins("mes_add", "add_queue_mes", "mes",
            {"fentry_add_queue_mes", "fexit_add_queue_mes",
             "kprobe_add_queue_mes", "kretprobe_add_queue_mes",
             "args_kprobe_add_queue_mes", "args_kretprobe_add_queue_mes"}),
      Twins("mes_remove_v11", "mes_v11_0_remove_hw_queue", "mes",
            {"fentry_mes_v11_0_remove_hw_queue",
             "fexit_mes_v11_0_remove_hw_queue",
             "kprobe_mes_v11_0_remove_hw_queue",
             "kretprobe_mes_v11_0_remove_hw_queue",
             "args_kprobe_mes_v11_0_remove_hw_queue",
             "args_kretprobe_mes_v11_0_remove_hw_queue"}),
      Twins("mes_remove_v12", "mes_v12_0_remove_hw_queue", "mes",
            {"fentry_mes_v12_0_remove_hw_queue",
             "fexit_mes_v12_0_remove_hw_queue",
             "kprobe_mes_v12_0_remove_hw_queue",
             "kretprobe_mes_v12_0_remove_hw_queue",
             "args_kprobe_mes_v12_0_remove_hw_queue",
             "args_kretprobe_mes_v12_0_remove_hw_queue"}),
      // GC 12.1 (gfx_target_version 120500) has its own MES, from 7.2.
      Twins("mes_remove_v12_1", "mes_v12_1_remove_hw_queue", "mes",
            {"fentry_mes_v12_1_remove_hw_queue",
             "fexit_mes_v12_1_remove_hw_queue",
             "kprobe_mes_v12_1_remove_hw_queue",
             "kretprobe_mes_v12_1_remove_hw_queue",
             "args_kprobe_mes_v12_1_remove_hw_queue",
             "args_kretprobe_mes_v12_1_remove_hw_queue"}),
      Twins("evict_cpsch", "evict_process_queues_cpsch", "eviction",
            {"fentry_evict_process_queues_cpsch",
             "fexit_evict_process_queues_cpsch",
             "kprobe_evict_process_queues_cpsch",
             "kretprobe_evict_process_queues_cpsch",
             "args_kprobe_evict_process_queues_cpsch",
             "args_kretprobe_evict_process_queues_cpsch"}),
      Twins("evict_nocpsch", "evict_process_queues_nocpsch", "eviction",
            {"fentry_evict_process_queues_nocpsch",
             "fexit_evict_process_queues_nocpsch",
             "kprobe_evict_process_queues_nocpsch",
             "kretprobe_evict_process_queues_nocpsch",
             "args_kprobe_evict_process_queues_nocpsch",
             "args_kretprobe_evict_process_queues_nocpsch"}),
      Twins("restore_cpsch", "restore_process_queues_cpsch", "eviction",
            {"fentry_restore_process_queues_cpsch",
             "fexit_restore_process_queues_cpsch",
             "kprobe_restore_process_queues_cpsch",
             "kretprobe_restore_process_queues_cpsch",
             "args_kprobe_restore_process_queues_cpsch",
             "args_kretprobe_restore_process_queues_cpsch"}),
      Twins("restore_nocpsch", "restore_process_queues_nocpsch", "eviction",
            {"fentry_restore_process_queues_nocpsch",
             "fexit_restore_process_queues_nocpsch",
             "kprobe_restore_process_queues_nocpsch",
             "kretprobe_restore_process_queues_nocpsch",
             "args_kprobe_restore_process_queues_nocpsch",
             "args_kretprobe_restore_process_queues_nocpsch"}),
      Twins(
          "evict_trigger", "kfd_process_evict_queues", "eviction",
          {"fentry_kfd_process_evict_queues", "fexit_kfd_process_evict_queues",
           "kprobe_kfd_process_evict_queues",
           "kretprobe_kfd_process_evict_queues",
           "kprobe_kfd_process_evict_queues",
           "kretprobe_kfd_process_evict_queues"}),
      // The dqm operations runlist/MES operations are attributed to. Not the
      // dqm's update_queue: vmlinux BTF has an ipc/sem.c update_queue that
      // libbpf would attach with the wrong prototype; the ioctl instead.
      // args-kprobe: create_queue_cpsch also teaches dqm -> gpu_id and
      // qpd -> (process, gpu_id).
      Twins("op_create", "create_queue_cpsch", "attribution",
            {"fentry_create_queue_cpsch", "fexit_create_queue_cpsch",
             "kprobe_create_queue_cpsch", "kretprobe_create_queue_cpsch",
             "args_kprobe_create_queue_cpsch",
             "args_kretprobe_create_queue_cpsch"}),
      // NO_HWS: nothing to attribute in the BTF tiers; args-kprobe learns the
      // GPU's dqm and the process's qpd here.
      Twins("op_create_nocpsch", "create_queue_nocpsch", "attribution",
            {"fentry_create_queue_nocpsch", "fexit_create_queue_nocpsch",
             "kprobe_create_queue_nocpsch", "kretprobe_create_queue_nocpsch",
             "args_kprobe_create_queue_nocpsch",
             "args_kretprobe_create_queue_nocpsch"}),
      Twins("op_destroy", "destroy_queue_cpsch", "attribution",
            {"fentry_destroy_queue_cpsch", "fexit_destroy_queue_cpsch",
             "kprobe_destroy_queue_cpsch", "kretprobe_destroy_queue_cpsch",
             "args_kprobe_destroy_queue_cpsch",
             "args_kretprobe_destroy_queue_cpsch"}),
      Twins("op_terminate", "process_termination_cpsch", "attribution",
            {"fentry_process_termination_cpsch",
             "fexit_process_termination_cpsch",
             "kprobe_process_termination_cpsch",
             "kretprobe_process_termination_cpsch",
             "args_kprobe_process_termination_cpsch",
             "args_kretprobe_process_termination_cpsch"}),
      Twins("op_terminate_nocpsch", "process_termination_nocpsch",
            "attribution",
            {"fentry_process_termination_nocpsch",
             "fexit_process_termination_nocpsch",
             "kprobe_process_termination_nocpsch",
             "kretprobe_process_termination_nocpsch",
             "args_kprobe_process_termination_nocpsch",
             "args_kretprobe_process_termination_nocpsch"}),
      Twins(
          "op_update", "kfd_ioctl_update_queue", "attribution",
          {"fentry_kfd_ioctl_update_queue", "fexit_kfd_ioctl_update_queue",
           "kprobe_kfd_ioctl_update_queue", "kretprobe_kfd_ioctl_update_queue",
           "kprobe_kfd_ioctl_update_queue",
           "kretprobe_kfd_ioctl_update_queue"}),
      // AMDKFD_IOC_SET_CU_MASK: its runlist operations (pqm_update_mqd ->
      // the dqm's update_queue) are an update's; a success is the queue's
      // CU mask (queue_cu_mask record).
      Twins(
          "op_cu_mask", "kfd_ioctl_set_cu_mask", "attribution",
          {"fentry_kfd_ioctl_set_cu_mask", "fexit_kfd_ioctl_set_cu_mask",
           "kprobe_kfd_ioctl_set_cu_mask", "kretprobe_kfd_ioctl_set_cu_mask",
           "kprobe_kfd_ioctl_set_cu_mask", "kretprobe_kfd_ioctl_set_cu_mask"}),
      // AMDKFD_IOC_ALLOC_QUEUE_GWS (ROCr's hsaKmtAllocQueueGWS, cooperative
      // launches): pqm_set_gws calls the dqm's update_queue, so its
      // runlist operations are an update's (6.1-7.3); no record of its own.
      Twins("op_gws", "kfd_ioctl_alloc_queue_gws", "attribution",
            {"fentry_kfd_ioctl_alloc_queue_gws",
             "fexit_kfd_ioctl_alloc_queue_gws",
             "kprobe_kfd_ioctl_alloc_queue_gws",
             "kretprobe_kfd_ioctl_alloc_queue_gws",
             "kprobe_kfd_ioctl_alloc_queue_gws",
             "kretprobe_kfd_ioctl_alloc_queue_gws"}),
      // The last thread of a process with ROCr queues, its memory still
      // mapped: the write indexes its exit teardown's destroys carry
      // (bpf/exit_read.bpf.h). Not do_exit or the sched_process_exit
      // tracepoint: the first runs before the last thread is known, the
      // second after exit_mm() on 6.1 and 6.12.
      // 7.3 merged exit_mm_release and exec_mm_release into
      // mm_exit_exec_release(tsk, mm), which exec calls too: the body reads
      // only for the group's last thread (signal->live == 0), which an exec
      // never is.
      CoreKernel("exit_read", "exit_mm_release", "mm_exit_exec_release",
                 "submissions", "fentry_exit_mm_release",
                 "kprobe_exit_mm_release"),
      // args-kprobe only: every process issuing a KFD ioctl is learned
      // (p = filep->private_data), so its exit is seen without a create;
      // the exit teardown names the process whose terminations follow.
      ArgsOnly("process_seen", "kfd_ioctl", "args_kprobe_kfd_ioctl", nullptr),
      ArgsOnly("process_teardown", "kfd_process_dequeue_from_all_devices",
               "args_kprobe_kfd_process_dequeue_from_all_devices",
               "args_kretprobe_kfd_process_dequeue_from_all_devices"),
      // args-kprobe only: a secondary context is the new filep->private_data
      // when AMDKFD_IOC_CREATE_PROCESS returns 0 (7.2+).
      Context(ArgsOnly("context_create", "kfd_ioctl_create_process",
                       "args_kprobe_kfd_ioctl_create_process",
                       "args_kretprobe_kfd_ioctl_create_process"),
              nullptr, nullptr),
      // The tracepoint tier (bpf/tracepoint_tier.bpf.h): kernels without
      // kprobes. Planned only when no function hook carries creates.
      Tracepoint("tp_ioctl", "sys_enter,sys_exit", "tp_sys_enter",
                 "tp_sys_exit"),
      Tracepoint("tp_exit", "sched_process_exit", "tp_sched_process_exit",
                 nullptr),
  };
  return kHooks;
}

const std::vector<HookGroup>& HookGroups() {
  static const std::vector<HookGroup> kGroups = {
      {"lifecycle", "queues, creates, destroys and exits",
       /*tracepoint_feeds_too=*/true},
      // bpf/tracepoint_tier.bpf.h: a second KFD fd of a process is a context
      {"contexts", "secondary KFD contexts",
       /*tracepoint_feeds_too=*/true},
      {"runlist", "runlist unmaps and maps",
       /*tracepoint_feeds_too=*/false},
      {"mes", "MES queue adds and removes",
       /*tracepoint_feeds_too=*/false},
      {"eviction", "evictions and restores",
       /*tracepoint_feeds_too=*/false},
      // The tracepoint tier decodes UPDATE_QUEUE and SET_CU_MASK itself
      // (priorities, CU masks), but no runlist operation to attribute.
      {"attribution", "the causes of runlist operations",
       /*tracepoint_feeds_too=*/false},
      // It reads at exit_group and the last thread's exit instead.
      {"submissions", "submissions read at a process's exit",
       /*tracepoint_feeds_too=*/true},
      {"args", "identities for the BTF-free bodies",
       /*tracepoint_feeds_too=*/true},
      {"tracepoint", "the tracepoint tier itself",
       /*tracepoint_feeds_too=*/true},
  };
  return kGroups;
}

const std::vector<std::string>& OptionalHookGroups() {
  static const std::vector<std::string> kGroups = [] {
    std::vector<std::string> groups;
    for (const HookSpec& spec : Hooks()) {
      if (spec.optional &&
          std::find(groups.begin(), groups.end(), spec.group) == groups.end()) {
        groups.emplace_back(spec.group);
      }
    }
    return groups;
  }();
  return kGroups;
}

std::vector<std::string> ProgramsOf(const HookSpec& spec, ProbeTier tier) {
  std::vector<std::string> programs;
  const char* entry = nullptr;
  const char* exit = nullptr;
  if (tier == ProbeTier::kBtfFentry) {
    entry = spec.fentry_entry;
    exit = spec.fentry_exit;
  } else if (tier == ProbeTier::kBtfKprobe) {
    entry = spec.kprobe_entry;
    exit = spec.kprobe_exit;
  } else if (tier == ProbeTier::kArgsKprobe) {
    entry = spec.args_entry;
    exit = spec.args_exit;
  } else if (tier == ProbeTier::kTracepoint) {
    entry = spec.tp_entry;
    exit = spec.tp_exit;
  }
  if (entry != nullptr) programs.emplace_back(entry);
  if (exit != nullptr) programs.emplace_back(exit);
  return programs;
}

namespace {

// Why amdkfd's types cannot be read here ("" when they can).
std::string KfdTypesUnusable(const KernelFeatures& f) {
  if (f.custom_btf) {
    return f.kfd_types ? ""
                       : "the --btf file has no amdkfd types (struct "
                         "kfd_process, struct queue)";
  }
  if (f.kfd_types && f.amdgpu_btf && !f.cap_sys_admin) {
    return "amdgpu's module BTF needs CAP_SYS_ADMIN to read (libbpf finds "
           "module BTF by id; without it CO-RE would silently read nothing)";
  }
  if (!f.kfd_types) {
    return f.amdgpu_loaded
               ? "no BTF for amdgpu (/sys/kernel/btf/amdgpu missing: an "
                 "out-of-tree amdgpu-dkms module, or a kernel without "
                 "CONFIG_DEBUG_INFO_BTF_MODULES)"
               : "amdgpu is not loaded";
  }
  return "";
}

HookPlan PlanBtf(const HookSpec& spec, const std::string& target,
                 const KernelFeatures& f, const PlanOptions& o) {
  if (IsArgsOnlyHook(spec)) {
    return {&spec, ProbeTier::kNone,
            "not needed: the BTF bodies read the process from amdkfd's "
            "structs"};
  }
  const bool in_btf = f.btf_funcs.count(target) != 0;
  const bool in_kallsyms = f.kallsyms.count(target) != 0;
  const bool fexit_loads = !spec.exit_needs_func_ret || f.func_ret;
  if (o.allow_fentry && in_btf && f.fentry && !f.custom_btf && fexit_loads) {
    return {&spec, ProbeTier::kBtfFentry, "function has BTF"};
  }
  std::string why_not_fentry =
      f.custom_btf      ? "--btf: types from the file, kprobes only"
      : !o.allow_fentry ? "fentry disabled"
      : !in_btf         ? "function has no BTF"
      : !f.fentry       ? f.fentry_note
                        : "its fexit program needs bpf_get_func_ret (Linux "
                          "5.17), which this kernel lacks";
  if (in_kallsyms && f.kprobes) {
    return {&spec, ProbeTier::kBtfKprobe, why_not_fentry};
  }
  if (in_kallsyms) {
    return {&spec, ProbeTier::kNone,
            why_not_fentry + "; no kprobes (" + f.kprobe_note + ")"};
  }
  return {
      &spec, ProbeTier::kNone,
      f.amdgpu_loaded ? "function not in this kernel" : "amdgpu is not loaded"};
}

HookPlan PlanArgs(const HookSpec& spec, const std::string& target,
                  const KernelFeatures& f, const std::string& why_args) {
  const bool in_kallsyms = f.kallsyms.count(target) != 0;
  if (spec.args_entry == nullptr) {
    return {&spec, ProbeTier::kNone,
            why_args + "; the hook has no BTF-free body"};
  }
  if (!in_kallsyms) {
    return {&spec, ProbeTier::kNone,
            f.amdgpu_loaded ? "function not in this kernel"
                            : "amdgpu is not loaded"};
  }
  if (!f.kprobes) {
    return {&spec, ProbeTier::kNone,
            why_args + "; no kprobes (" + f.kprobe_note + ")"};
  }
  return {&spec, ProbeTier::kArgsKprobe, why_args + ": arguments only"};
}

// What a compiler clone of the target means for the plan: a hook on the
// function misses the calls that go to the clone, and the clone's arguments
// may differ (removed or replaced), so no body reads them there.
void NoteClone(const KernelFeatures& f, HookPlan* plan) {
  const auto clone = f.clones.find(plan->target);
  if (clone == f.clones.end()) return;
  if (f.kallsyms.count(plan->target) == 0) {
    plan->tier = ProbeTier::kNone;
    plan->reason = fmt::format(
        "only the compiler clone {} is in this kernel; its arguments may "
        "differ from {}'s, so no body reads them there",
        clone->second, plan->target);
  } else {
    plan->reason += fmt::format(
        "; calls through its compiler clone {} are not seen", clone->second);
  }
}

}  // namespace

bool IsTracepointHook(const HookSpec& spec) { return spec.tp_entry != nullptr; }

bool IsArgsOnlyHook(const HookSpec& spec) {
  return spec.args_entry != nullptr && spec.fentry_entry == nullptr &&
         spec.kprobe_entry == nullptr;
}

std::string TargetOf(const HookSpec& spec,
                     const std::set<std::string>& present) {
  if (present.count(spec.function) == 0 && spec.renamed_to != nullptr &&
      present.count(spec.renamed_to) != 0) {
    return spec.renamed_to;
  }
  return spec.function;
}

std::vector<std::string> HookFunctions() {
  std::vector<std::string> functions;
  for (const HookSpec& spec : Hooks()) {
    functions.emplace_back(spec.function);
    if (spec.renamed_to != nullptr) functions.emplace_back(spec.renamed_to);
  }
  return functions;
}

std::string NoHookReason(const std::vector<HookPlan>& plans,
                         TierRequest request) {
  for (const HookPlan& p : plans) {
    if (request == TierRequest::kTracepoint && IsTracepointHook(*p.spec)) {
      return p.reason;
    }
  }
  return plans.empty() ? "no hooks" : plans[0].reason;
}

std::vector<HookPlan> PlanHooks(const KernelFeatures& f, const PlanOptions& o) {
  std::vector<HookPlan> plans;
  std::set<std::string> present = f.kallsyms;
  for (const auto& entry : f.btf_funcs) present.insert(entry.first);
  const std::string unusable = KfdTypesUnusable(f);
  // One body for all hooks: the BTF and args bodies key processes and queues
  // differently (struct reads vs learned pointers), so they never mix.
  const bool btf_body = o.request == TierRequest::kAuto && unusable.empty();
  const std::string why_args =
      o.request == TierRequest::kArgs ? "--probe-tier=args" : unusable;
  std::string create_reason;
  bool create_hooked = false;
  for (const HookSpec& spec : Hooks()) {
    if (IsTracepointHook(spec)) {
      plans.push_back({&spec, ProbeTier::kNone, ""});  // decided below
      continue;
    }
    const std::string target = TargetOf(spec, present);
    if (o.request == TierRequest::kTracepoint) {
      plans.push_back({&spec, ProbeTier::kNone,
                       "--probe-tier=tracepoint: no function hooks"});
    } else if (spec.core_kernel && !create_hooked) {
      // Planned after create_ioctl (Hooks() order): it serves those hooks.
      plans.push_back({&spec, ProbeTier::kNone,
                       "not needed: no function hook carries creates (" +
                           create_reason + ")"});
    } else if (!f.amdgpu_loaded && f.kallsyms.count(target) == 0) {
      plans.push_back({&spec, ProbeTier::kNone, "amdgpu is not loaded"});
    } else if (spec.kfd_contexts && !f.kfd_contexts) {
      plans.push_back({&spec, ProbeTier::kNone,
                       "not needed: this amdkfd has no secondary contexts "
                       "(AMDKFD_IOC_CREATE_PROCESS, Linux 7.2)"});
    } else if (btf_body) {
      plans.push_back(PlanBtf(spec, target, f, o));
    } else {
      plans.push_back(PlanArgs(spec, target, f, why_args));
    }
    plans.back().target = target;
    NoteClone(f, &plans.back());
    if (spec.creates == HookSpec::Creates::kIoctlArgs) {
      create_hooked = plans.back().tier != ProbeTier::kNone;
      create_reason = plans.back().reason;
    }
  }
  // The tracepoint tier: when asked, or when no function hook carries
  // creates (no kprobes, no usable fentry) and amdkfd is there.
  const bool want_tp = o.request == TierRequest::kTracepoint ||
                       (o.request == TierRequest::kAuto && !create_hooked &&
                        (f.amdgpu_loaded || f.kfd_sysfs));
  std::string tp_reason;
  if (!want_tp) {
    tp_reason = o.request == TierRequest::kArgs ? "--probe-tier=args"
                : create_hooked ? "not needed: function hooks run"
                                : "amdgpu is not loaded";
  } else if (!f.tracepoints) {
    tp_reason = "no raw tracepoints (" + f.tracepoint_note + ")";
  } else if (f.kfd_major == 0) {
    tp_reason = "no kfd character device in /proc/devices";
  }
  for (HookPlan& p : plans) {
    if (IsTracepointHook(*p.spec)) {
      if (tp_reason.empty()) {
        p.tier = ProbeTier::kTracepoint;
        p.reason =
            o.request == TierRequest::kTracepoint
                ? "--probe-tier=tracepoint"
                : "no function hook carries creates (" + create_reason + ")";
      } else {
        p.reason = tp_reason;
      }
    } else if (tp_reason.empty() && p.tier != ProbeTier::kNone) {
      // Never mixed with the function hooks: processes are keyed by mm here.
      p.tier = ProbeTier::kNone;
      p.reason = "the tracepoint tier runs instead";
    }
  }
  return plans;
}

std::string TierSummary(const std::vector<HookPlan>& plans) {
  std::map<std::string, int> by_tier;
  std::vector<std::string> missing;
  bool tp = false;
  bool args_tier = false;
  for (const HookPlan& p : plans) {
    tp = tp || p.tier == ProbeTier::kTracepoint;
    args_tier = args_tier || p.tier == ProbeTier::kArgsKprobe;
  }
  for (const HookPlan& p : plans) {
    if (p.tier == ProbeTier::kNone) {
      // Tracepoint hooks are not missed where the function hooks run, nor
      // the args tier's own hooks outside it.
      if (IsTracepointHook(*p.spec) && !tp) continue;
      if (IsArgsOnlyHook(*p.spec) && !args_tier) continue;
      missing.emplace_back(p.spec->probe);
    } else {
      ++by_tier[TierName(p.tier)];
    }
  }
  std::vector<std::string> tiers;
  for (const auto& [tier, n] : by_tier) {
    tiers.push_back(fmt::format("{} ({} hooks)", tier, n));
  }
  std::string line =
      "probe tier: " + (tiers.empty()
                            ? std::string("none")
                            : fmt::format("{}", fmt::join(tiers, ", ")));
  if (tp) {
    std::vector<std::string> absent;
    for (const HookGroup& g : HookGroups()) {
      if (!g.tracepoint_feeds_too) absent.emplace_back(g.feeds);
    }
    line += fmt::format(
        "; tracepoint tier: no {}: those families are absent "
        "(docs/probe-tiers.md)",
        fmt::join(absent, ", "));
  }
  if (args_tier) {
    line +=
        "; BTF-free: identities learned from nested calls (queues, processes "
        "and GPUs first seen while the agent runs; docs/probe-tiers.md)";
  }
  if (!missing.empty()) {
    line += fmt::format("; not hooked: {}", fmt::join(missing, ", "));
  }
  return line;
}

}  // namespace gpuq

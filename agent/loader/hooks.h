// The kernel hooks gpuq knows, their programs per tier, and the plan for the
// running kernel, made before anything is loaded from what BTF (vmlinux and
// module), kallsyms and the feature probes allow (docs/probe-tiers.md):
//   btf-fentry   CO-RE bodies reading amdkfd structs, on trampolines
//   btf-kprobe   the same bodies on kprobes
//   args-kprobe  bodies reading only function arguments (uapi structs and
//                pointers used as opaque keys): no amdgpu BTF needed
//   tracepoint   (not a function hook tier) syscall tracepoints only
#pragma once

#include <set>
#include <string>
#include <vector>

#include "loader/kernel_features.h"

namespace gpuq {

enum class HookMode { kFentry, kKprobe, kTracepoint, kNone };
const char* HookModeName(HookMode mode);

enum class ProbeTier {
  kBtfFentry,
  kBtfKprobe,
  kArgsKprobe,
  kTracepoint,
  kNone
};
/// "btf-fentry", "btf-kprobe", "args-kprobe", "tracepoint", "none": the
/// `tier` label of gpuq_probe_attached.
const char* TierName(ProbeTier tier);
/// The attach mode of a tier ("fentry", "kprobe", ...).
HookMode ModeOf(ProbeTier tier);

/// --probe-tier: auto plans per hook; args forces the BTF-free kprobe
/// bodies (tests, users who distrust BTF); tracepoint forces the
/// syscall-tracepoint tier.
enum class TierRequest { kAuto, kArgs, kTracepoint };
const char* TierRequestName(TierRequest request);
/// Parses "auto", "args" or "tracepoint"; false for anything else.
bool ParseTierRequest(const std::string& text, TierRequest* out);

/// One hook and the BPF programs (by name, bpf/gpuq.bpf.c) of each mode.
struct HookSpec {
  const char* probe;     ///< stable name, the `probe` label
  const char* function;  ///< kernel function
  const char* fentry_entry;
  const char* fentry_exit;  ///< nullptr when the hook has no exit program
  const char* kprobe_entry;
  const char* kprobe_exit;
  /// Reads amdkfd structs through CO-RE: useless without their BTF.
  bool needs_kfd_types;
  /// What the hook serves, for grouped output: one of HookGroups().
  const char* group = "lifecycle";
  /// Never fails the load: if the kernel refuses its programs, the hook is
  /// reported (mode none, with the reason) and the others load without it.
  bool optional = false;
  /// args-kprobe tier programs (bpf/args_tier.bpf.h), nullptr when the hook
  /// has no BTF-free body. May name the kprobe twins when those read only
  /// arguments already (create_ioctl, evict_trigger, op_update).
  const char* args_entry = nullptr;
  const char* args_exit = nullptr;
  /// tracepoint tier programs (bpf/tracepoint_tier.bpf.h); the hooks of
  /// group "tracepoint" have only these.
  const char* tp_entry = nullptr;
  const char* tp_exit = nullptr;
  /// A core kernel function, not amdgpu's: it serves the KFD hooks, so it
  /// is planned only where a function hook carries queue creates.
  bool core_kernel = false;
  /// The function's name in kernels that renamed it (same arguments): the
  /// hook attaches there when `function` is absent.
  const char* renamed_to = nullptr;
  /// The exit programs read the return value with bpf_get_func_ret()
  /// (Linux 5.17), not from a declared argument list: where the kernel lacks
  /// the helper the fexit program cannot load, so the hook runs on kprobes.
  bool exit_needs_func_ret = false;
  /// Serves secondary KFD contexts (AMDKFD_IOC_CREATE_PROCESS, 7.2+):
  /// planned only where the kernel has them (KernelFeatures::kfd_contexts).
  bool kfd_contexts = false;
  /// How the hook learns queue creates, if it does.
  enum class Creates {
    kNo,
    /// From the created `struct queue` (kfd_procfs_add_queue): the BTF
    /// tiers' create records; the args-kprobe body only learns its pointer.
    kQueueObject,
    /// From the create ioctl's uapi args (any tier): the create records
    /// where the queue object cannot be read. The core-kernel hooks and the
    /// tracepoint tier are planned by whether this hook attaches.
    kIoctlArgs,
  };
  Creates creates = Creates::kNo;
};

/// Every hook, in a stable order, grouped (hooks of a group are adjacent).
const std::vector<HookSpec>& Hooks();

/// A group of hooks (HookSpec::group) and what its records feed.
struct HookGroup {
  const char* name;   ///< HookSpec::group
  const char* feeds;  ///< what its records feed, as the tier summary says it
  /// The tracepoint tier feeds the same from the KFD ioctls it decodes and
  /// the process ends it sees; where it does not, the group's families are
  /// absent in that tier (docs/probe-tiers.md, "What each tier gives").
  bool tracepoint_feeds_too;
};
/// Every group of Hooks(), in Hooks() order.
const std::vector<HookGroup>& HookGroups();

/// The groups of the optional hooks, in Hooks() order: the loader adds them
/// back one by one when the kernel refuses the whole set.
const std::vector<std::string>& OptionalHookGroups();
/// A hook of the tracepoint tier (no kernel function).
bool IsTracepointHook(const HookSpec& spec);
/// A hook only the args-kprobe tier runs (no BTF programs): it learns what
/// the BTF bodies read from amdkfd's structs.
bool IsArgsOnlyHook(const HookSpec& spec);
/// The program names of `spec` in `tier` (entry, then exit if any).
std::vector<std::string> ProgramsOf(const HookSpec& spec, ProbeTier tier);

struct HookPlan {
  const HookSpec* spec;
  ProbeTier tier;
  std::string reason;  ///< why this tier (or why none)
  /// The kernel function the programs attach to: spec->function, or
  /// spec->renamed_to where this kernel has only that.
  std::string target = spec->function;
  HookMode mode() const { return ModeOf(tier); }
};

/// The function `spec` attaches to on a kernel whose functions (kallsyms or
/// BTF) are `present`: its own, else its later name, else its own.
std::string TargetOf(const HookSpec& spec,
                     const std::set<std::string>& present);

/// Every kernel function some hook may attach to (names and later names):
/// what ProbeKernel is asked for.
std::vector<std::string> HookFunctions();

struct PlanOptions {
  bool allow_fentry = true;  ///< false: --no-fentry
  TierRequest request = TierRequest::kAuto;
};

/// Chooses a tier per hook before anything is loaded.
std::vector<HookPlan> PlanHooks(const KernelFeatures& features,
                                const PlanOptions& options);

/// Why no hook of `plans` (none planned) can attach: the first hook's
/// reason, or with --probe-tier=tracepoint the tracepoint hooks' (the
/// function hooks' is only that they were not asked for).
std::string NoHookReason(const std::vector<HookPlan>& plans,
                         TierRequest request);

/// The one line --once and the daemon print: which tiers run and what the
/// running set lacks compared with the BTF tiers.
std::string TierSummary(const std::vector<HookPlan>& plans);

}  // namespace gpuq

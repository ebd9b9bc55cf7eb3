// The kernel hooks gpuq knows, their candidate modes, and the choice of mode
// for the running kernel: fentry where BTF has the function, else kprobe
// where kallsyms has it, else none.
#pragma once

#include <string>
#include <vector>

#include "loader/kernel_features.h"

namespace gpuq {

enum class HookMode { kFentry, kKprobe, kNone };
const char* HookModeName(HookMode mode);

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
  /// What the hook serves, for grouped output: "lifecycle", "runlist",
  /// "mes", "eviction" or "attribution".
  const char* group = "lifecycle";
  /// Never fails the load: if the kernel refuses its programs, the hook is
  /// reported (mode none, with the reason) and the others load without it.
  bool optional = false;
};

/// Every hook, in a stable order, grouped (hooks of a group are adjacent).
const std::vector<HookSpec>& Hooks();
/// The hook one of whose programs is `program`, or nullptr.
const HookSpec* HookOfProgram(const std::string& program);
/// The program names of `spec` in `mode` (entry, then exit if any).
std::vector<std::string> ProgramsOf(const HookSpec& spec, HookMode mode);

struct HookPlan {
  const HookSpec* spec;
  HookMode mode;
  std::string reason;  ///< why this mode (or why none)
};

/// Chooses a mode per hook. `allow_fentry` false forces the kprobe twin.
std::vector<HookPlan> PlanHooks(const KernelFeatures& features,
                                bool allow_fentry);

}  // namespace gpuq

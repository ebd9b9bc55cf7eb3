// The libbpf lifecycle of the kernel side, shared by the agent and the host
// BPF tests: probe the kernel -> plan one tier per hook (hooks.h) -> open
// with exactly those programs -> load -> attach each hook, checked one by
// one. Nothing is decided from libbpf's log text.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "loader/hooks.h"
#include "loader/kernel_features.h"
#include "loader/probe_status.h"

struct gpuq_bpf;
struct bpf_link;

namespace gpuq {

/// Owns the skeleton and its links. Thread-safety: not thread-safe; the maps'
/// fds may be used from any thread while it lives.
class BpfLoader {
 public:
  struct Options {
    HostPaths paths;
    bool allow_fentry = true;
    TierRequest request = TierRequest::kAuto;
    /// --btf FILE: amdgpu's types from this BTF (loader/custom_btf.h).
    std::string btf_path{};
    /// What ProbeKernel found for `paths` and HookFunctions(), where the
    /// caller probed already (`check` prints it): else Load probes. Under
    /// QEMU's TCG one probe is seconds (kallsyms, BTF, feature probes).
    const KernelFeatures* probed = nullptr;
  };

  /// Plans, loads and attaches. Returns nullptr when nothing could be
  /// loaded or attached; *error then says why in one line. `status` gets one
  /// entry per hook either way; `summary`, if set, the one-line tier
  /// summary (TierSummary) of what attached.
  static std::unique_ptr<BpfLoader> Load(const Options& options,
                                         std::vector<ProbeStatus>* status,
                                         std::string* error,
                                         std::string* summary = nullptr);

  /// Loads (without attaching) every program of `tier` through the verifier.
  /// Returns the load error, "" on success. For the host BPF tier and
  /// `check --verify`. `btf_custom_path`, if set, replaces the kernel's BTF
  /// for CO-RE relocation (tests use it to relocate against amdkfd layouts
  /// on a host without amdgpu).
  /// `features`, if set, limits it to hooks whose function has BTF there
  /// (btf_funcs; fentry needs it: `check --verify` passes what this kernel
  /// has, so 6.1 does not fail on mes_v12_0_remove_hw_queue) and gives the
  /// trampolines their targets' ids.
  static std::string VerifyPrograms(ProbeTier tier,
                                    const std::string& btf_custom_path = "",
                                    const KernelFeatures* features = nullptr);

  /// Opens (never loads) the object once per tier with every hook at that
  /// tier: "" if every program the hook table names is in the object, else
  /// the first one missing. Needs no privileges (opening only parses the
  /// ELF), so the unprivileged build checks hooks.cc against bpf/.
  static std::string FindEveryProgram();

  ~BpfLoader();
  BpfLoader(const BpfLoader&) = delete;
  BpfLoader& operator=(const BpfLoader&) = delete;

  int EventsFd() const;
  int DropsFd() const;
  /// The loaded programs' fds (owned by the loader): their recursion_misses
  /// count the runs the kernel skipped (BpfEventSource).
  std::vector<int> ProgramFds() const;

 private:
  BpfLoader() = default;
  gpuq_bpf* skel_ = nullptr;
  std::vector<bpf_link*> links_;
};

/// The last lines libbpf logged (its warnings are kept, not printed).
std::string LibbpfLogTail();
/// Keeps libbpf's messages for LibbpfLogTail() instead of stderr (idempotent).
void InstallLibbpfLogger();

}  // namespace gpuq

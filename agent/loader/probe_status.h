// What each kernel hook ended up as: exported as gpuq_probe_attached and
// printed by `gpuq-agent check` and --once.
#pragma once

#include <string>

namespace gpuq {

struct ProbeStatus {
  std::string probe;     ///< hook name: queue_create, queue_destroy, ...
  std::string function;  ///< kernel function it targets
  std::string mode;      ///< "fentry", "kprobe" or "none"
  bool attached = false;
  std::string detail;   ///< why not attached, or the fallback in use
  std::string group{};  ///< HookSpec::group ("lifecycle", "runlist", ...)
  /// "btf-fentry", "btf-kprobe", "args-kprobe", "tracepoint" or "none"
  /// (the doorbell uprobes: "uprobe").
  std::string tier{};
};

}  // namespace gpuq

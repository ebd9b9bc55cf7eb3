// The attach targets of the fentry and fexit programs, handed to libbpf by
// BTF id instead of by name.
//
// libbpf 1.1 (bookworm's) resolves a trampoline's target by name at load
// (find_kernel_btf_id): a linear search of vmlinux's BTF, then of each
// module's in turn, every one from vmlinux's first type, and amdgpu comes
// after its 15 or so dependencies. Under QEMU's TCG that was about 10 s of
// an fentry-tier start for 35 programs. ScanBtf's one pass over amdgpu's BTF
// (kernel_features.h) already has each id: section handlers for "fentry+"
// and "fexit+" (libbpf_register_prog_handler, libbpf 0.8+) take them from
// the active TraceTargetScope at load, as libbpf's own would have set them.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "loader/kernel_features.h"

struct bpf_object;

namespace gpuq {

/// Registers the fentry and fexit section handlers, once per process; true
/// when they are in place. Objects opened after it use them: a program whose
/// target is neither in the active scope nor set with
/// bpf_program__set_attach_target (libbpf's search) then fails to load with
/// a logged reason. Where it returns false, libbpf's own handlers resolve
/// every target by name.
bool InstallTraceHandlers();

/// A trampoline program's target: its function, and that function's BTF
/// FUNC where the probe found it (id 0: libbpf searches by name).
struct TraceTarget {
  std::string function;
  BtfFunc btf;
};

/// While alive, the fentry and fexit programs of `obj` named in `targets`
/// (by program name) load against their functions' ids, amdgpu's against
/// amdgpu's BTF object (found here: it needs CAP_SYS_ADMIN, as libbpf's
/// search does); one without an id is given to libbpf's search by name
/// (bpf_program__set_attach_target). One scope at a time: a second waits.
class TraceTargetScope {
 public:
  TraceTargetScope(bpf_object* obj,
                   const std::map<std::string, TraceTarget>& targets);
  ~TraceTargetScope();
  TraceTargetScope(const TraceTargetScope&) = delete;
  TraceTargetScope& operator=(const TraceTargetScope&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuq

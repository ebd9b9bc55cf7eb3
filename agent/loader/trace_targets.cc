#include "loader/trace_targets.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "common/log.h"

namespace gpuq {

// What the live scope gives the loads (outside the anonymous namespace: the
// scope's State holds one).
struct TraceTargetsOfLoad {
  const bpf_object* obj = nullptr;
  std::map<std::string, TraceTarget> by_program;
  int amdgpu_fd = -1;  // amdgpu's BTF object, where a target is amdgpu's
};

namespace {

std::mutex scope_mu;   // held by the live scope for its lifetime
std::mutex active_mu;  // guards `active` (read by loads on any thread)
const TraceTargetsOfLoad* active = nullptr;

}  // namespace

struct TraceTargetScope::State {
  std::unique_lock<std::mutex> exclusive;  // one scope at a time
  TraceTargetsOfLoad targets;
};

namespace {

// The kernel's BTF object of `module` (bpf_btf_get_next_id: CAP_SYS_ADMIN),
// -1 if none. libbpf's load_module_btfs walks the same ids.
int OpenModuleBtf(const char* module) {
  __u32 id = 0;
  while (bpf_btf_get_next_id(id, &id) == 0) {
    const int fd = bpf_btf_get_fd_by_id(id);
    if (fd < 0) continue;  // gone since, or not permitted
    char name[64] = {};
    bpf_btf_info info;
    std::memset(&info, 0, sizeof(info));
    info.name = reinterpret_cast<uintptr_t>(name);
    info.name_len = sizeof(name);
    __u32 length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0 && info.kernel_btf &&
        std::strcmp(name, module) == 0) {
      return fd;
    }
    close(fd);
  }
  return -1;
}

// libbpf's prog_prepare_load_fn for fentry and fexit: what
// libbpf_prepare_prog_load does for these sections (nothing but the attach
// target: they are neither sleepable nor optional-attach-type), by id.
int PrepareTraceLoad(bpf_program* prog, bpf_prog_load_opts* opts,
                     long /*cookie*/) {
  if (opts->attach_btf_id != 0) return 0;  // bpf_program__set_attach_target
  std::lock_guard<std::mutex> lock(active_mu);
  const char* name = bpf_program__name(prog);
  // libbpf 1.1 has no bpf_program__get_obj: a program name is unique in
  // its object.
  const TraceTarget* target = nullptr;
  if (active != nullptr &&
      bpf_object__find_program_by_name(active->obj, name) == prog) {
    const auto it = active->by_program.find(name);
    if (it != active->by_program.end()) target = &it->second;
  }
  if (target == nullptr) {
    LogAt(LogLevel::kWarn, "BPF program {}: no attach target given", name);
    return -ESRCH;
  }
  const BtfFunc& btf = target->btf;
  if (btf.id == 0) return -ESRCH;  // the scope's search found none (logged)
  if (btf.amdgpu && active->amdgpu_fd < 0) {
    LogAt(LogLevel::kWarn,
          "BPF program {}: amdgpu's BTF object cannot be opened (needs "
          "CAP_SYS_ADMIN)",
          name);
    return -ESRCH;
  }
  opts->attach_btf_obj_fd = btf.amdgpu ? active->amdgpu_fd : 0;
  opts->attach_btf_id = btf.id;
  return 0;
}

int AttachTrace(const bpf_program* prog, long /*cookie*/, bpf_link** link) {
  *link = bpf_program__attach_trace(prog);
  return *link == nullptr ? -errno : 0;
}

// The handler's id, 0 if libbpf refused it.
int Register(const char* section, bpf_attach_type type) {
  libbpf_prog_handler_opts opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.sz = sizeof(opts);
  opts.prog_prepare_load_fn = PrepareTraceLoad;
  opts.prog_attach_fn = AttachTrace;
  const int id =
      libbpf_register_prog_handler(section, BPF_PROG_TYPE_TRACING, type, &opts);
  if (id < 0) {
    LogAt(LogLevel::kWarn,
          "libbpf refused a handler for {} ({}): targets resolved by name",
          section, std::strerror(-id));
  }
  return id > 0 ? id : 0;
}

}  // namespace

bool InstallTraceHandlers() {
  // Both or neither: a program is resolved one way or the other. libbpf
  // keeps registered handlers for the process's life (unregistering frees
  // the definitions that opened objects point to).
  static const bool installed = [] {
    const int fentry = Register("fentry+", BPF_TRACE_FENTRY);
    if (fentry == 0) return false;
    if (Register("fexit+", BPF_TRACE_FEXIT) != 0) return true;
    libbpf_unregister_prog_handler(fentry);  // no object opened with it yet
    return false;
  }();
  return installed;
}

TraceTargetScope::TraceTargetScope(
    bpf_object* obj, const std::map<std::string, TraceTarget>& targets)
    : state_(new State{std::unique_lock<std::mutex>(scope_mu),
                       TraceTargetsOfLoad{obj, targets}}) {
  bool amdgpu = false;
  for (const auto& [program, target] : targets) {
    amdgpu |= target.btf.amdgpu;
    if (target.btf.id != 0) continue;
    bpf_program* prog = bpf_object__find_program_by_name(obj, program.c_str());
    // A failure leaves no target: the load then fails on this program.
    if (prog == nullptr ||
        bpf_program__set_attach_target(prog, 0, target.function.c_str()) != 0) {
      LogAt(LogLevel::kWarn, "BPF program {}: no BTF FUNC {} found", program,
            target.function);
    }
  }
  if (amdgpu) state_->targets.amdgpu_fd = OpenModuleBtf("amdgpu");
  std::lock_guard<std::mutex> lock(active_mu);
  active = &state_->targets;
}

TraceTargetScope::~TraceTargetScope() {
  {
    std::lock_guard<std::mutex> lock(active_mu);
    active = nullptr;
  }
  // A loaded program holds its own reference to the BTF object.
  if (state_->targets.amdgpu_fd >= 0) close(state_->targets.amdgpu_fd);
}

}  // namespace gpuq

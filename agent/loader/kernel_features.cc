#include "loader/kernel_features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/capability.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/sysfs_read.h"

namespace gpuq {
namespace {

// "name.constprop.0" / "name.isra.0": a copy GCC made with some arguments
// removed or changed, which callers call instead of `name` (".cold" and
// ".part" parts are entered through `name` itself). `name` if so, else "".
std::string CloneOf(const std::string& symbol) {
  for (const char* kind : {".constprop.", ".isra."}) {
    const size_t at = symbol.find(kind);
    if (at != std::string::npos && at > 0) return symbol.substr(0, at);
  }
  return "";
}

void ScanKallsyms(const std::string& path,
                  const std::vector<std::string>& wanted, KernelFeatures* out) {
  const std::set<std::string> want(wanted.begin(), wanted.end());
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // "ffffffffc0a01230 t kfd_procfs_add_queue\t[amdgpu]"
    std::istringstream fields(line);
    std::string addr, type, name, module;
    fields >> addr >> type >> name >> module;
    if (module == "[amdgpu]") out->amdgpu_loaded = true;
    if (type != "t" && type != "T") continue;
    if (want.count(name) != 0) out->kallsyms.insert(name);
    if (module == "[amdgpu]" && name == "kfd_ioctl_create_process") {
      out->kfd_contexts = true;
    }
    const std::string cloned = CloneOf(name);
    if (!cloned.empty() && want.count(cloned) != 0) out->clones[cloned] = name;
  }
}

// Whether struct `type` of `b` has member `member`.
bool HasMember(const btf* b, const char* type, const char* member) {
  const int id = btf__find_by_name_kind(b, type, BTF_KIND_STRUCT);
  if (id <= 0) return false;
  const btf_type* t = btf__type_by_id(b, id);
  const btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i, ++m) {
    const char* name = btf__name_by_offset(b, m->name_off);
    if (name != nullptr && std::string(name) == member) return true;
  }
  return false;
}

// Parameters of FUNC `fn` in `b` (-1: no such FUNC).
int ParamCount(const btf* b, const char* fn) {
  const int id = btf__find_by_name_kind(b, fn, BTF_KIND_FUNC);
  if (id <= 0) return -1;
  const btf_type* proto = btf__type_by_id(b, btf__type_by_id(b, id)->type);
  return proto == nullptr ? -1 : btf_vlen(proto);
}

// Whether enum `type` of `b` has enumerator `name`.
bool HasEnumerator(const btf* b, const char* type, const char* name) {
  const int id = btf__find_by_name_kind(b, type, BTF_KIND_ENUM);
  if (id <= 0) return false;
  const btf_type* t = btf__type_by_id(b, id);
  const struct btf_enum* e = btf_enum(t);
  for (int i = 0; i < btf_vlen(t); ++i, ++e) {
    const char* n = btf__name_by_offset(b, e->name_off);
    if (n != nullptr && std::string(n) == name) return true;
  }
  return false;
}

// The trigger argument appeared in 6.0 (see KernelFeatures::evict_trigger).
bool EvictTakesTriggerByRelease(const std::string& release) {
  unsigned major = 0;
  std::sscanf(release.c_str(), "%u", &major);
  return major == 0 || major >= 6;  // unknown release: the common case
}

void ScanBtf(const std::string& btf_dir, const std::vector<std::string>& wanted,
             KernelFeatures* out) {
  btf* vmlinux = btf__parse((btf_dir + "/vmlinux").c_str(), nullptr);
  if (libbpf_get_error(vmlinux) != 0) return;
  out->vmlinux_btf = true;
  btf* amdgpu = nullptr;
  if (out->amdgpu_btf) {
    amdgpu = btf__parse_split((btf_dir + "/amdgpu").c_str(), vmlinux);
    if (libbpf_get_error(amdgpu) != 0) amdgpu = nullptr;
  }
  // Split BTF resolves base types too, so one lookup covers both.
  const btf* search = amdgpu != nullptr ? amdgpu : vmlinux;
  for (const std::string& fn : wanted) {
    if (btf__find_by_name_kind(search, fn.c_str(), BTF_KIND_FUNC) > 0) {
      out->btf_funcs.insert(fn);
    }
  }
  out->kfd_types =
      btf__find_by_name_kind(search, "kfd_process", BTF_KIND_STRUCT) > 0 &&
      btf__find_by_name_kind(search, "queue", BTF_KIND_STRUCT) > 0;
  out->func_ret =
      HasEnumerator(vmlinux, "bpf_func_id", "BPF_FUNC_get_func_ret");
  if (out->kfd_types) {
    out->kfd_contexts = HasMember(search, "kfd_process", "context_id");
    const int params = ParamCount(search, "kfd_process_evict_queues");
    if (params >= 0) out->evict_trigger = params >= 2;
  }
  if (amdgpu != nullptr) btf__free(amdgpu);
  btf__free(vmlinux);
}

// "Character devices:" section of /proc/devices: "<major> kfd".
unsigned KfdMajor(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  bool chars = false;
  while (std::getline(in, line)) {
    if (line == "Character devices:") chars = true;
    if (line == "Block devices:") chars = false;
    std::istringstream fields(line);
    unsigned major = 0;
    std::string name;
    if (chars && (fields >> major >> name) && name == "kfd") return major;
  }
  return 0;
}

// The whole of a small kernel file ("" if unreadable).
std::string Slurp(const std::string& path) {
  std::string text;
  return ReadWholeFile(path, &text) == 0 ? text : std::string();
}

bool PreemptsIn(const std::string& mode) {
  return mode == "full" || mode == "lazy" || mode == "rt";
}

// The words of `text` (space separated).
std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

}  // namespace

void ReadPreemptModel(const std::string& sched_preempt,
                      const std::string& cmdline, const std::string& version,
                      KernelFeatures* out) {
  for (const std::string& w : Words(sched_preempt)) {
    if (w.size() > 2 && w.front() == '(' && w.back() == ')') {
      const std::string mode = w.substr(1, w.size() - 2);
      out->preempts_programs = PreemptsIn(mode);
      out->preempt_note = "preempt=" + mode + " (debugfs sched/preempt)";
      return;
    }
  }
  const std::vector<std::string> uname = Words(version);
  if (uname.empty()) {
    out->preempts_programs = false;
    out->preempt_note = "unknown (uname -v not readable)";
    return;
  }
  auto has = [&uname](const char* word) {
    return std::find(uname.begin(), uname.end(), word) != uname.end();
  };
  if (has("PREEMPT_RT")) {
    out->preempts_programs = true;
    out->preempt_note = "PREEMPT_RT (uname -v)";
    return;
  }
  if (has("PREEMPT_DYNAMIC")) {
    for (const std::string& w : Words(cmdline)) {
      if (w.rfind("preempt=", 0) == 0) {
        out->preempts_programs = PreemptsIn(w.substr(8));
        out->preempt_note = w + " (kernel command line)";
        return;
      }
    }
    // The boot default is the kernel's config, which is not readable here:
    // assume the model that can lose records.
    out->preempts_programs = true;
    out->preempt_note =
        "PREEMPT_DYNAMIC, mode unknown (debugfs sched/preempt not readable): "
        "assumed preemptible";
    return;
  }
  out->preempts_programs = has("PREEMPT");
  out->preempt_note = out->preempts_programs
                          ? "PREEMPT (uname -v)"
                          : "none or voluntary (uname -v has no PREEMPT)";
}

KernelFeatures ProbeKernel(const HostPaths& paths,
                           const std::vector<std::string>& functions) {
  KernelFeatures f;
  f.amdgpu_btf = PathExists(paths.KernelBtf() + "/amdgpu");
  f.kfd_sysfs = PathExists(paths.Kfd());
  // perf's kprobe PMU (4.17+), else the legacy tracefs interface libbpf
  // falls back to.
  f.kprobes =
      PathExists(paths.sysfs + "/bus/event_source/devices/kprobe/type") ||
      PathExists(paths.sysfs + "/kernel/tracing/kprobe_events") ||
      PathExists(paths.sysfs + "/kernel/debug/tracing/kprobe_events");
  f.cap_sys_admin = HasCapSysAdmin();
  f.kfd_major = KfdMajor(paths.procfs + "/devices");
  std::ifstream(paths.procfs + "/sys/kernel/osrelease") >> f.release;
  f.evict_trigger = EvictTakesTriggerByRelease(f.release);
  ReadPreemptModel(Slurp(paths.sysfs + "/kernel/debug/sched/preempt"),
                   Slurp(paths.procfs + "/cmdline"),
                   Slurp(paths.procfs + "/sys/kernel/version"), &f);
  ScanKallsyms(paths.procfs + "/kallsyms", functions, &f);
  ScanBtf(paths.KernelBtf(), functions, &f);
  // Guesses, replaced by what the feature probes see when they can run.
  f.fentry = f.vmlinux_btf;
  f.tracepoints = f.vmlinux_btf;
  const char* guess = "not probed (needs BPF privileges): assumed from ";
  f.fentry_note = std::string(guess) + "vmlinux BTF";
  f.kprobe_note = std::string(guess) + "sysfs";
  f.tracepoint_note = std::string(guess) + "vmlinux BTF";
  ProbeAttachKinds(&f);
  return f;
}

namespace {

// Whether this process's effective set holds `cap` (libcap); false when it
// cannot be read.
bool Effective(cap_value_t cap) {
  cap_t caps = cap_get_proc();
  if (caps == nullptr) return false;
  cap_flag_value_t value = CAP_CLEAR;
  const bool read = cap_get_flag(caps, cap, CAP_EFFECTIVE, &value) == 0;
  cap_free(caps);
  return read && value == CAP_SET;
}

}  // namespace

bool HasBpfPrivileges() {
  // CAP_BPF and CAP_PERFMON since Linux 5.8 (a17b53c4a4b5); CAP_SYS_ADMIN
  // alone before.
  return Effective(CAP_SYS_ADMIN) ||
         (Effective(CAP_BPF) && Effective(CAP_PERFMON));
}

bool HasCapSysAdmin() { return Effective(CAP_SYS_ADMIN); }

bool KernelHasPreemptKfuncs() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (libbpf_get_error(vmlinux) != 0) return false;
  const bool found =
      btf__find_by_name_kind(vmlinux, "bpf_preempt_disable", BTF_KIND_FUNC) >
          0 &&
      btf__find_by_name_kind(vmlinux, "bpf_preempt_enable", BTF_KIND_FUNC) > 0;
  btf__free(vmlinux);
  return found;
}

}  // namespace gpuq

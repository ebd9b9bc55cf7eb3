#include "loader/kernel_features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/capability.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string_view>

#include "common/sysfs_read.h"
#include "loader/kallsyms_scan.h"

namespace gpuq {
namespace {

// Whether struct `id` of `b` has member `member`.
bool HasMember(const btf* b, int id, std::string_view member) {
  if (id <= 0) return false;
  const btf_type* t = btf__type_by_id(b, id);
  const btf_member* m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i, ++m) {
    const char* name = btf__name_by_offset(b, m->name_off);
    if (name != nullptr && name == member) return true;
  }
  return false;
}

// Parameters of FUNC `id` in `b` (-1: no such FUNC).
int ParamCount(const btf* b, int id) {
  if (id <= 0) return -1;
  const btf_type* proto = btf__type_by_id(b, btf__type_by_id(b, id)->type);
  return proto == nullptr ? -1 : btf_vlen(proto);
}

// Whether enum `id` of `b` has enumerator `name`.
bool HasEnumerator(const btf* b, int id, std::string_view name) {
  if (id <= 0) return false;
  const btf_type* t = btf__type_by_id(b, id);
  const struct btf_enum* e = btf_enum(t);
  for (int i = 0; i < btf_vlen(t); ++i, ++e) {
    const char* n = btf__name_by_offset(b, e->name_off);
    if (n != nullptr && n == name) return true;
  }
  return false;
}

// The trigger argument appeared in 6.0 (see KernelFeatures::evict_trigger).
bool EvictTakesTriggerByRelease(const std::string& release) {
  unsigned major = 0;
  std::sscanf(release.c_str(), "%u", &major);
  return major == 0 || major >= 6;  // unknown release: the common case
}

}  // namespace

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
  // Split BTF resolves base types too, so one pass covers both. One pass
  // over every type (about 150k) rather than a linear
  // btf__find_by_name_kind per name: every agent start does this. Each id
  // is the first of its name and kind, as btf__find_by_name_kind's.
  const btf* search = amdgpu != nullptr ? amdgpu : vmlinux;
  const std::set<std::string, std::less<>> want(wanted.begin(), wanted.end());
  int kfd_process = 0, queue = 0, evict_queues = 0, bpf_func_id = 0;
  const auto first = [](int* id, unsigned found) {
    if (*id == 0) *id = static_cast<int>(found);
  };
  const unsigned count = btf__type_cnt(search);
  const unsigned vmlinux_count = btf__type_cnt(vmlinux);
  for (unsigned id = 1; id < count; ++id) {
    const btf_type* t = btf__type_by_id(search, id);
    const unsigned kind = btf_kind(t);
    if (kind != BTF_KIND_FUNC && kind != BTF_KIND_STRUCT &&
        kind != BTF_KIND_ENUM) {
      continue;
    }
    const char* text = btf__name_by_offset(search, t->name_off);
    if (text == nullptr || *text == '\0') continue;
    const std::string_view name(text);
    if (kind == BTF_KIND_FUNC) {
      if (want.find(name) != want.end()) {  // the first of its name stays
        out->btf_funcs.emplace(name, BtfFunc{id, id >= vmlinux_count});
      }
      if (name == "kfd_process_evict_queues") first(&evict_queues, id);
    } else if (kind == BTF_KIND_STRUCT) {
      if (name == "kfd_process") first(&kfd_process, id);
      if (name == "queue") first(&queue, id);
    } else if (id < vmlinux_count && name == "bpf_func_id") {
      first(&bpf_func_id, id);
    }
  }
  out->kfd_types = kfd_process > 0 && queue > 0;
  out->func_ret = HasEnumerator(search, bpf_func_id, "BPF_FUNC_get_func_ret");
  if (out->kfd_types) {
    out->kfd_contexts = HasMember(search, kfd_process, "context_id");
    const int params = ParamCount(search, evict_queues);
    if (params >= 0) out->evict_trigger = params >= 2;
  }
  if (amdgpu != nullptr) btf__free(amdgpu);
  btf__free(vmlinux);
}

namespace {

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
  KallsymsScan symbols = ScanKallsyms(paths.procfs + "/kallsyms", functions);
  f.kallsyms = std::move(symbols.present);
  f.clones = std::move(symbols.clones);
  f.amdgpu_loaded = symbols.amdgpu_loaded;
  f.kfd_contexts = symbols.kfd_create_process;
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

std::set<std::string> BtfFuncNames(const KernelFeatures& f) {
  std::set<std::string> names;
  for (const auto& entry : f.btf_funcs) names.insert(entry.first);
  return names;
}

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

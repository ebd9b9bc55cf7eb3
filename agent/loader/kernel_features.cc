#include "loader/kernel_features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace gpuq {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

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
    if (want.count(name) != 0 && (type == "t" || type == "T")) {
      out->kallsyms.insert(name);
    }
  }
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

}  // namespace

KernelFeatures ProbeKernel(const HostPaths& paths,
                           const std::vector<std::string>& functions) {
  KernelFeatures f;
  f.amdgpu_btf = Exists(paths.KernelBtf() + "/amdgpu");
  f.kfd_sysfs = Exists(paths.Kfd());
  // perf's kprobe PMU (4.17+), else the legacy tracefs interface libbpf
  // falls back to.
  f.kprobes = Exists(paths.sysfs + "/bus/event_source/devices/kprobe/type") ||
              Exists(paths.sysfs + "/kernel/tracing/kprobe_events") ||
              Exists(paths.sysfs + "/kernel/debug/tracing/kprobe_events");
  f.cap_sys_admin = HasCapSysAdmin();
  f.kfd_major = KfdMajor(paths.procfs + "/devices");
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

constexpr int kCapSysAdmin = 21, kCapPerfmon = 38, kCapBpf = 39;

// Effective capabilities of this process (/proc/self/status CapEff).
unsigned long long EffectiveCaps() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      const size_t hex = line.find_first_not_of(" \t", 7);
      if (hex == std::string::npos) return 0;
      unsigned long long caps = 0;
      std::from_chars(line.data() + hex, line.data() + line.size(), caps, 16);
      return caps;
    }
  }
  return 0;
}

bool Has(unsigned long long caps, int cap) { return (caps >> cap) & 1ull; }

}  // namespace

bool HasBpfPrivileges() {
  const unsigned long long caps = EffectiveCaps();
  return Has(caps, kCapSysAdmin) ||
         (Has(caps, kCapBpf) && Has(caps, kCapPerfmon));
}

bool HasCapSysAdmin() { return Has(EffectiveCaps(), kCapSysAdmin); }

}  // namespace gpuq

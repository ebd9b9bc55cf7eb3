// Feature probes run before any hook is planned: load, attach and fire one
// tiny program of each kind (bpf/feature_probe.bpf.c) on getppid(2), which
// this process then calls. A kernel that refuses trampolines at load
// (lockdown, an LSM, no JIT support), has kprobes disarmed
// (/sys/kernel/debug/kprobes/enabled = 0: attach succeeds, nothing fires) or
// no raw tracepoints is thereby known before planning, without reading
// libbpf's log.
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>

#include "feature_probe.skel.h"
#include "loader/bpf_loader.h"
#include "loader/fire_check.h"
#include "loader/kernel_features.h"

namespace gpuq {
namespace {

enum Kind { kFentry = 0, kKprobe = 1, kTracepoint = 2 };

// getppid's body as vmlinux BTF (fentry) and kallsyms (kprobe) name it on
// x86-64 and arm64; the first present is used.
constexpr const char* kFentryTargets[] = {
    "__do_sys_getppid", "__x64_sys_getppid", "__arm64_sys_getppid"};
constexpr const char* kKprobeTargets[] = {
    "__x64_sys_getppid", "__arm64_sys_getppid", "__do_sys_getppid"};

std::string FentryTarget() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (libbpf_get_error(vmlinux) != 0) return "";
  std::string found;
  for (const char* name : kFentryTargets) {
    if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0) {
      found = name;
      break;
    }
  }
  btf__free(vmlinux);
  return found;
}

// Loads only `kind`'s program, lets `attach` attach it, calls getppid() and
// reports whether it fired. Returns "" on success, else why not.
std::string TryKind(
    Kind kind, const std::function<bpf_link*(feature_probe_bpf*)>& attach,
    const std::function<bool(feature_probe_bpf*)>& before_load) {
  feature_probe_bpf* skel = feature_probe_bpf__open();
  if (skel == nullptr) {
    return fmt::format("cannot open the probe object: {}",
                       std::strerror(errno));
  }
  bpf_program* progs[] = {skel->progs.probe_fentry, skel->progs.probe_kprobe,
                          skel->progs.probe_tracepoint};
  for (int i = 0; i < 3; ++i) bpf_program__set_autoload(progs[i], i == kind);
  skel->rodata->target_tgid = static_cast<uint32_t>(getpid());
  std::string why;
  if (before_load && !before_load(skel)) {
    why = "no target function";
  } else if (const int err = feature_probe_bpf__load(skel); err != 0) {
    why = fmt::format("refused at load ({})", std::strerror(-err));
  } else if (bpf_link* link = attach(skel); link == nullptr) {
    why = fmt::format("refused at attach ({})", std::strerror(errno));
  } else {
    // 20 tries 5 ms apart: at most 0.1 s for a hook that never fires
    // (fire_check.h says why one try is not enough).
    const bool fired = FiresWithin(
        20, std::chrono::milliseconds(5),
        [] {
          for (int i = 0; i < 3; ++i) syscall(SYS_getppid);
        },
        [&] { return skel->bss->hits[kind] != 0; });
    if (!fired) why = "attached but never fired";
    bpf_link__destroy(link);
  }
  feature_probe_bpf__destroy(skel);
  return why;
}

}  // namespace

void ProbeAttachKinds(KernelFeatures* f) {
  if (!HasBpfPrivileges()) return;
  // libbpf's warnings about a refused probe are expected here: kept, not
  // printed.
  InstallLibbpfLogger();
  const std::string fentry_target = FentryTarget();
  std::string why = TryKind(
      kFentry,
      [](feature_probe_bpf* s) {
        return bpf_program__attach(s->progs.probe_fentry);
      },
      [&](feature_probe_bpf* s) {
        return !fentry_target.empty() &&
               bpf_program__set_attach_target(s->progs.probe_fentry, 0,
                                              fentry_target.c_str()) == 0;
      });
  f->fentry = why.empty();
  f->fentry_note =
      why.empty()
          ? fmt::format("fentry on {} loads, attaches and fires", fentry_target)
          : fmt::format("fentry {}{}", why,
                        fentry_target.empty()
                            ? ""
                            : " (probed on " + fentry_target + ")");

  std::string kprobe_target;
  why = TryKind(
      kKprobe,
      [&](feature_probe_bpf* s) -> bpf_link* {
        for (const char* name : kKprobeTargets) {
          bpf_link* link =
              bpf_program__attach_kprobe(s->progs.probe_kprobe, false, name);
          if (link != nullptr) {
            kprobe_target = name;
            return link;
          }
        }
        return nullptr;
      },
      nullptr);
  f->kprobes = why.empty();
  f->kprobe_note =
      why.empty()
          ? fmt::format("kprobe on {} attaches and fires", kprobe_target)
          : "kprobes " + why +
                (why == "attached but never fired"
                     ? " (disarmed? /sys/kernel/debug/kprobes/enabled)"
                     : "");

  why = TryKind(
      kTracepoint,
      [](feature_probe_bpf* s) {
        return bpf_program__attach(s->progs.probe_tracepoint);
      },
      nullptr);
  f->tracepoints = why.empty();
  f->tracepoint_note = why.empty()
                           ? "raw tracepoint sys_enter attaches and fires"
                           : "raw tracepoints " + why;
  f->attach_probed = true;
}

}  // namespace gpuq

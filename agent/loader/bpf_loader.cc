#include "loader/bpf_loader.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <gpuq/abi.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <deque>
#include <mutex>

#include "gpuq.skel.h"

namespace gpuq {
namespace {

std::mutex log_mu;
std::deque<std::string> log_lines;

// libbpf's messages are kept for error reports instead of going to stderr:
// a kernel without amdgpu makes it print pages of expected failures.
int KeepLibbpfLog(enum libbpf_print_level level, const char* format,
                  va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string line(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(line.data(), line.size() + 1, format, args);
  // A verifier log is one message of any length; its verdict is at the end.
  constexpr size_t kHead = 1024, kTail = 6144;
  if (line.size() > kHead + kTail) {
    line =
        line.substr(0, kHead) + "\n[...]\n" + line.substr(line.size() - kTail);
  }
  std::lock_guard<std::mutex> lock(log_mu);
  log_lines.push_back(std::move(line));
  if (log_lines.size() > 60) log_lines.pop_front();
  return 0;
}

void InstallLogger() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(KeepLibbpfLog); });
}

bpf_program* Program(gpuq_bpf* skel, const std::string& name) {
  return bpf_object__find_program_by_name(skel->obj, name.c_str());
}

// Opens the skeleton with exactly the programs of `plans` set to load.
gpuq_bpf* OpenFor(const std::vector<HookPlan>& plans, std::string* error,
                  const std::string& btf_custom_path = "") {
  LIBBPF_OPTS(bpf_object_open_opts, opts);
  if (!btf_custom_path.empty()) opts.btf_custom_path = btf_custom_path.c_str();
  gpuq_bpf* skel = gpuq_bpf__open_opts(&opts);
  if (skel == nullptr) {
    *error =
        fmt::format("cannot open the BPF object: {}", std::strerror(errno));
    return nullptr;
  }
  if (skel->rodata->gpuq_abi_version != GPUQ_ABI_VERSION) {
    *error = fmt::format("BPF object ABI {} != agent ABI {}: rebuild",
                         skel->rodata->gpuq_abi_version, GPUQ_ABI_VERSION);
    gpuq_bpf__destroy(skel);
    return nullptr;
  }
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, skel->obj) {
    bpf_program__set_autoload(prog, false);
  }
  bool create_hooked = false;
  bool ioctl_hooked = false;
  for (const HookPlan& plan : plans) {
    for (const std::string& name : ProgramsOf(*plan.spec, plan.mode)) {
      bpf_program* program = Program(skel, name);
      if (program == nullptr) {  // hooks.cc and bpf/ disagree: a build bug
        *error = fmt::format("the BPF object has no program {} (hook {})", name,
                             plan.spec->probe);
        gpuq_bpf__destroy(skel);
        return nullptr;
      }
      bpf_program__set_autoload(program, true);
    }
    const std::string probe = plan.spec->probe;
    if (plan.mode != HookMode::kNone) {
      if (probe == "queue_create") create_hooked = true;
      if (probe == "create_ioctl") ioctl_hooked = true;
    }
  }
  skel->rodata->create_via_ioctl = !create_hooked && ioctl_hooked;
  return skel;
}

bool AnyMode(const std::vector<HookPlan>& plans, HookMode mode) {
  for (const HookPlan& p : plans) {
    if (p.mode == mode) return true;
  }
  return false;
}

std::vector<std::string> PlannedFunctions() {
  std::vector<std::string> functions;
  for (const HookSpec& spec : Hooks()) functions.emplace_back(spec.function);
  return functions;
}

}  // namespace

std::string LibbpfLogTail() {
  std::lock_guard<std::mutex> lock(log_mu);
  std::string out;
  for (const auto& line : log_lines) out += line;
  return out;
}

namespace {

void ClearLibbpfLog() {
  std::lock_guard<std::mutex> lock(log_mu);
  log_lines.clear();
}

// The program libbpf names in its last "prog '<name>': ..." warning (load,
// relocation and attach-target errors all say so), and that line.
std::string FailedProgram(std::string* line) {
  std::lock_guard<std::mutex> lock(log_mu);
  for (auto it = log_lines.rbegin(); it != log_lines.rend(); ++it) {
    const std::string::size_type start = it->find("prog '");
    if (start == std::string::npos) continue;
    const std::string::size_type end = it->find('\'', start + 6);
    if (end == std::string::npos) continue;
    *line = *it;
    while (!line->empty() && line->back() == '\n') line->pop_back();
    return it->substr(start + 6, end - start - 6);
  }
  return "";
}

}  // namespace

std::unique_ptr<BpfLoader> BpfLoader::Load(const Options& options,
                                           std::vector<ProbeStatus>* status,
                                           std::string* error) {
  InstallLogger();
  const KernelFeatures features =
      ProbeKernel(options.paths, PlannedFunctions());
  std::vector<HookPlan> plans = PlanHooks(features, options.allow_fentry);

  auto report = [&](const std::vector<bool>& attached,
                    const std::vector<std::string>& details) {
    status->clear();
    for (size_t i = 0; i < plans.size(); ++i) {
      status->push_back({plans[i].spec->probe, plans[i].spec->function,
                         HookModeName(plans[i].mode), attached[i],
                         details[i].empty() ? plans[i].reason : details[i],
                         plans[i].spec->group});
    }
  };
  std::vector<bool> attached(plans.size(), false);
  std::vector<std::string> details(plans.size());

  if (!AnyMode(plans, HookMode::kFentry) &&
      !AnyMode(plans, HookMode::kKprobe)) {
    report(attached, details);
    *error = !features.kfd_sysfs && !features.amdgpu_loaded
                 ? "amdkfd is not present on this kernel (no /sys/class/kfd, "
                   "no amdgpu symbols): no hook can attach"
                 : "no KFD hook can attach on this kernel: " + plans[0].reason;
    return nullptr;
  }

  auto kprobe_or_none = [&](const HookPlan& plan) {
    return features.kprobes && features.kallsyms.count(plan.spec->function)
               ? HookMode::kKprobe
               : HookMode::kNone;
  };
  std::unique_ptr<BpfLoader> loader(new BpfLoader());
  int err = 0;
  bool global_fallback_done = false;
  // Each round either loads, or takes one hook (optional: alone; else all
  // fentry hooks) down a mode, so it ends within 2 * plans.size() rounds.
  for (size_t round = 0; round <= 2 * plans.size(); ++round) {
    if (loader->skel_ != nullptr) gpuq_bpf__destroy(loader->skel_);
    loader->skel_ = OpenFor(plans, error);
    if (loader->skel_ == nullptr) return nullptr;
    ClearLibbpfLog();
    err = gpuq_bpf__load(loader->skel_);
    if (err == 0) break;
    std::string line;
    const HookSpec* failed = HookOfProgram(FailedProgram(&line));
    size_t i = 0;
    while (failed != nullptr && i < plans.size() && plans[i].spec != failed) {
      ++i;
    }
    if (failed != nullptr && i < plans.size() && failed->optional &&
        plans[i].mode != HookMode::kNone) {
      // One optional hook refused: it alone steps down (fentry -> kprobe
      // -> none); the lifecycle hooks never depend on it.
      const HookMode from = plans[i].mode;
      plans[i].mode = from == HookMode::kFentry ? kprobe_or_none(plans[i])
                                                : HookMode::kNone;
      details[i] = fmt::format(
          "{} refused by this kernel ({}){}", HookModeName(from), line,
          plans[i].mode == HookMode::kKprobe ? ": kprobe fallback" : "");
      continue;
    }
    if (!global_fallback_done && AnyMode(plans, HookMode::kFentry)) {
      // The kernel refused tracing programs (BTF present, trampolines not
      // allowed: lockdown, LSM, or too many args). Retry with kprobes.
      global_fallback_done = true;
      const std::string why =
          fmt::format("fentry refused by this kernel ({}): kprobe fallback",
                      std::strerror(-err));
      for (size_t j = 0; j < plans.size(); ++j) {
        if (plans[j].mode != HookMode::kFentry) continue;
        plans[j].mode = kprobe_or_none(plans[j]);
        details[j] = why;
      }
      continue;
    }
    break;  // a lifecycle hook's kprobe refused: nothing left to try
  }
  if (err != 0) {
    report(attached, details);
    *error = fmt::format("loading the BPF programs failed: {}; libbpf said: {}",
                         std::strerror(-err), LibbpfLogTail());
    return nullptr;
  }

  bool any = false;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].mode == HookMode::kNone) continue;
    std::vector<bpf_link*> links;
    std::string failure;
    for (const std::string& name : ProgramsOf(*plans[i].spec, plans[i].mode)) {
      bpf_link* link = bpf_program__attach(Program(loader->skel_, name));
      if (link == nullptr) {
        failure =
            fmt::format("attaching {} failed: {}", name, std::strerror(errno));
        break;
      }
      links.push_back(link);
    }
    if (!failure.empty()) {
      // A hook is all or nothing: an entry without its exit leaks state.
      for (bpf_link* link : links) bpf_link__destroy(link);
      details[i] = failure;
      continue;
    }
    loader->links_.insert(loader->links_.end(), links.begin(), links.end());
    attached[i] = true;
    any = true;
  }
  report(attached, details);
  if (!any) {
    *error = "no KFD hook could be attached (see `gpuq-agent check`)";
    return nullptr;
  }
  return loader;
}

std::string BpfLoader::VerifyPrograms(HookMode mode,
                                      const std::string& btf_custom_path,
                                      const std::set<std::string>* present) {
  InstallLogger();
  std::vector<HookPlan> plans;
  for (const HookSpec& spec : Hooks()) {
    const bool here = present == nullptr || present->count(spec.function) > 0;
    plans.push_back({&spec, here ? mode : HookMode::kNone, ""});
  }
  std::string error;
  gpuq_bpf* skel = OpenFor(plans, &error, btf_custom_path);
  if (skel == nullptr) return error;
  const int err = gpuq_bpf__load(skel);
  gpuq_bpf__destroy(skel);
  if (err != 0) {
    return fmt::format("{} ({})", std::strerror(-err), LibbpfLogTail());
  }
  return "";
}

BpfLoader::~BpfLoader() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
  if (skel_ != nullptr) gpuq_bpf__destroy(skel_);
}

int BpfLoader::EventsFd() const { return bpf_map__fd(skel_->maps.events); }
int BpfLoader::DropsFd() const { return bpf_map__fd(skel_->maps.drops); }

}  // namespace gpuq

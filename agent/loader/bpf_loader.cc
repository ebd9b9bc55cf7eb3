#include "loader/bpf_loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <gpuq/abi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "common/log.h"
#include "gpuq.skel.h"
#include "loader/custom_btf.h"
#include "loader/trace_targets.h"

namespace gpuq {
namespace {

std::mutex log_mu;
std::deque<std::string> log_lines;

// libbpf's messages are kept for error reports instead of going to stderr:
// a kernel without amdgpu makes it print pages of expected failures. With
// --log.level=debug (-v) every one of them is also logged, as libbpf-tools'
// libbpf_print_fn does under --verbose.
int KeepLibbpfLog(enum libbpf_print_level level, const char* format,
                  va_list args) {
  const bool forward = Log().Enabled(LogLevel::kDebug);
  if (level == LIBBPF_DEBUG && !forward) return 0;
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string line(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(line.data(), line.size() + 1, format, args);
  if (forward) {
    size_t end = line.size();
    while (end > 0 && line[end - 1] == '\n') --end;
    Log().Write(LogLevel::kDebug, line.substr(0, end));  // "libbpf: ..."
    if (level == LIBBPF_DEBUG) return 0;  // never kept for error reports
  }
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

}  // namespace

void InstallLibbpfLogger() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(KeepLibbpfLog); });
}

namespace {

void InstallLogger() { InstallLibbpfLogger(); }

bpf_program* Program(gpuq_bpf* skel, const std::string& name) {
  return bpf_object__find_program_by_name(skel->obj, name.c_str());
}

// Opens the skeleton with exactly the programs of `plans` set to load;
// `targets` gets their fentry and fexit programs' attach targets, for the
// TraceTargetScope of their load.
gpuq_bpf* OpenFor(const std::vector<HookPlan>& plans, std::string* error,
                  std::map<std::string, TraceTarget>* targets,
                  const std::string& btf_custom_path = "",
                  const KernelFeatures* features = nullptr,
                  const std::map<std::string, BtfFunc>* btf_ids = nullptr) {
  const bool by_id = InstallTraceHandlers();  // before the open
  // LIBBPF_OPTS spelled out: its statement expression is a GNU extension
  // clang -Wpedantic refuses (the sanitizer build, tests/fuzz).
  bpf_object_open_opts opts;
  std::memset(&opts, 0, sizeof(opts));
  opts.sz = sizeof(opts);
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
  bool create_btf = false;
  bool ioctl_hooked = false;
  bool args = false;
  for (const HookPlan& plan : plans) {
    for (const std::string& name : ProgramsOf(*plan.spec, plan.tier)) {
      bpf_program* program = Program(skel, name);
      if (program == nullptr) {  // hooks.cc and bpf/ disagree: a build bug
        *error = fmt::format("the BPF object has no program {} (hook {})", name,
                             plan.spec->probe);
        gpuq_bpf__destroy(skel);
        return nullptr;
      }
      bpf_program__set_autoload(program, true);
      // A trampoline is bound to its function at load: plan.target, the
      // name this kernel has (its section may give an earlier one).
      const bpf_attach_type attach = bpf_program__expected_attach_type(program);
      if (plan.tier != ProbeTier::kBtfFentry ||
          bpf_program__type(program) != BPF_PROG_TYPE_TRACING ||
          (attach != BPF_TRACE_FENTRY && attach != BPF_TRACE_FEXIT)) {
        continue;
      }
      if (by_id) {
        BtfFunc btf;
        if (btf_ids != nullptr) {
          const auto it = btf_ids->find(plan.target);
          if (it != btf_ids->end()) btf = it->second;
        }
        (*targets)[name] = {plan.target, btf};
        continue;
      }
      // libbpf's handlers: the section's name, unless renamed (libbpf
      // resolves the new name now).
      const std::string section = bpf_program__section_name(program);
      const bool renamed = section.substr(section.find('/') + 1) != plan.target;
      if (renamed && bpf_program__set_attach_target(program, 0,
                                                    plan.target.c_str()) != 0) {
        *error =
            fmt::format("cannot set {}'s attach target {}", name, plan.target);
        gpuq_bpf__destroy(skel);
        return nullptr;
      }
    }
    const HookSpec::Creates creates = plan.spec->creates;
    if (creates == HookSpec::Creates::kQueueObject &&
        (plan.tier == ProbeTier::kBtfFentry ||
         plan.tier == ProbeTier::kBtfKprobe)) {
      create_btf = true;
    }
    if (creates == HookSpec::Creates::kIoctlArgs &&
        plan.tier != ProbeTier::kNone) {
      ioctl_hooked = true;
    }
    if (plan.tier == ProbeTier::kArgsKprobe) args = true;
  }
  // The args-kprobe queue_create only learns the queue's pointer: the
  // create record then comes from the ioctl's uapi args.
  skel->rodata->create_via_ioctl = !create_btf && ioctl_hooked;
  skel->rodata->args_tier = args;
  if (features != nullptr) {
    skel->rodata->kfd_major = features->kfd_major;
    skel->rodata->evict_trigger_arg = features->evict_trigger;
  }
  return skel;
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

}  // namespace

namespace {

// Attaches `program` to `target`: a kprobe by the function name this kernel
// has (its SEC name may be the function's earlier name), anything else as
// its section says (trampolines were bound at load).
bpf_link* Attach(bpf_program* program, const std::string& target) {
  if (bpf_program__type(program) != BPF_PROG_TYPE_KPROBE) {
    return bpf_program__attach(program);
  }
  const bool retprobe =
      std::strncmp(bpf_program__section_name(program), "kretprobe", 9) == 0;
  return bpf_program__attach_kprobe(program, retprobe, target.c_str());
}

// The --btf file of this load ("" without one); read by libbpf at load.
thread_local std::string load_btf_path;

bool LoadsWith(const std::vector<HookPlan>& plans,
               const KernelFeatures& features, gpuq_bpf** skel, int* err,
               std::string* error) {
  if (*skel != nullptr) gpuq_bpf__destroy(*skel);
  std::map<std::string, TraceTarget> targets;
  *skel = OpenFor(plans, error, &targets, load_btf_path, &features,
                  &features.btf_funcs);
  if (*skel == nullptr) return false;
  ClearLibbpfLog();
  const TraceTargetScope scope((*skel)->obj, targets);
  *err = gpuq_bpf__load(*skel);
  return *err == 0;
}

// `plans` with every optional hook outside `groups` set to none.
std::vector<HookPlan> Only(const std::vector<HookPlan>& plans,
                           const std::set<std::string>& groups) {
  std::vector<HookPlan> out = plans;
  for (HookPlan& p : out) {
    if (p.spec->optional && groups.count(p.spec->group) == 0) {
      p.tier = ProbeTier::kNone;
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<BpfLoader> BpfLoader::Load(const Options& options,
                                           std::vector<ProbeStatus>* status,
                                           std::string* error,
                                           std::string* summary) {
  InstallLogger();
  KernelFeatures features = options.probed != nullptr
                                ? *options.probed
                                : ProbeKernel(options.paths, HookFunctions());
  CustomBtf custom;
  if (!options.btf_path.empty()) {
    if (!PrepareCustomBtf(options.btf_path,
                          options.paths.KernelBtf() + "/vmlinux", &custom,
                          error)) {
      return nullptr;
    }
    features.custom_btf = true;
    features.kfd_types = custom.kfd_types;
    features.amdgpu_btf = false;  // module BTF is not used with an override
  }
  load_btf_path = custom.path;
  // The flattened copy is only needed until the last load below.
  struct Cleanup {
    const CustomBtf& btf;
    ~Cleanup() {
      if (btf.temporary) unlink(btf.path.c_str());
      load_btf_path.clear();
    }
  } cleanup{custom};
  // Every tier is decided here, before anything is loaded: BTF, kallsyms and
  // the feature probes (fentry, kprobes, tracepoints that load and fire).
  std::vector<HookPlan> plans =
      PlanHooks(features, {options.allow_fentry, options.request});
  std::vector<bool> attached(plans.size(), false);
  std::vector<std::string> details(plans.size());

  auto report = [&]() {
    status->clear();
    std::vector<HookPlan> final_plans = plans;
    for (size_t i = 0; i < plans.size(); ++i) {
      status->push_back({plans[i].spec->probe, plans[i].target,
                         HookModeName(plans[i].mode()), attached[i],
                         details[i].empty() ? plans[i].reason : details[i],
                         plans[i].spec->group, TierName(plans[i].tier)});
      if (!attached[i]) final_plans[i].tier = ProbeTier::kNone;
    }
    if (summary != nullptr) *summary = TierSummary(final_plans);
  };

  bool any_planned = false;
  for (const HookPlan& p : plans) any_planned |= p.tier != ProbeTier::kNone;
  if (!any_planned) {
    report();
    *error = !features.kfd_sysfs && !features.amdgpu_loaded
                 ? "amdkfd is not present on this kernel (no /sys/class/kfd, "
                   "no amdgpu symbols): no hook can attach"
                 : "no KFD hook can attach on this kernel: " +
                       NoHookReason(plans, options.request);
    return nullptr;
  }

  std::unique_ptr<BpfLoader> loader(new BpfLoader());
  int err = 0;
  if (!LoadsWith(plans, features, &loader->skel_, &err, error)) {
    if (loader->skel_ == nullptr) return nullptr;  // OpenFor failed
    // The plan said the kernel allows these kinds of programs, yet it
    // refused one. Without reading libbpf's log: the lifecycle hooks alone,
    // then each optional group added back on its own.
    std::set<std::string> groups;
    if (!LoadsWith(Only(plans, groups), features, &loader->skel_, &err,
                   error)) {
      if (loader->skel_ == nullptr) return nullptr;
      report();
      *error =
          fmt::format("loading the BPF programs failed: {}; libbpf said: {}",
                      std::strerror(-err), LibbpfLogTail());
      return nullptr;
    }
    for (const std::string& group : OptionalHookGroups()) {
      std::set<std::string> with = groups;
      with.insert(group);
      if (LoadsWith(Only(plans, with), features, &loader->skel_, &err, error)) {
        groups = with;
        continue;
      }
      if (loader->skel_ == nullptr) return nullptr;
      for (size_t i = 0; i < plans.size(); ++i) {
        if (plans[i].spec->group != group ||
            plans[i].tier == ProbeTier::kNone) {
          continue;
        }
        details[i] = fmt::format("the kernel refused the {} programs ({})",
                                 group, std::strerror(-err));
        plans[i].tier = ProbeTier::kNone;
      }
    }
    if (!LoadsWith(Only(plans, groups), features, &loader->skel_, &err,
                   error)) {
      if (loader->skel_ == nullptr) return nullptr;
      report();
      *error = fmt::format("loading the BPF programs failed: {}",
                           std::strerror(-err));
      return nullptr;
    }
  }

  bool any = false;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].tier == ProbeTier::kNone) continue;
    std::vector<bpf_link*> links;
    std::string failure;
    for (const std::string& name : ProgramsOf(*plans[i].spec, plans[i].tier)) {
      bpf_link* link = Attach(Program(loader->skel_, name), plans[i].target);
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
  report();
  if (!any) {
    *error = "no KFD hook could be attached (see `gpuq-agent check`)";
    return nullptr;
  }
  return loader;
}

namespace {

// Every hook at `tier`, or none where its function is not in `present`.
std::vector<HookPlan> EveryHookAt(ProbeTier tier,
                                  const std::set<std::string>* present) {
  std::vector<HookPlan> plans;
  for (const HookSpec& spec : Hooks()) {
    const std::string target =
        present == nullptr ? spec.function : TargetOf(spec, *present);
    const bool here = present == nullptr || present->count(target) > 0;
    plans.push_back({&spec, here ? tier : ProbeTier::kNone, "", target});
  }
  return plans;
}

}  // namespace

std::string BpfLoader::FindEveryProgram() {
  InstallLogger();
  for (ProbeTier tier : {ProbeTier::kBtfFentry, ProbeTier::kBtfKprobe,
                         ProbeTier::kArgsKprobe, ProbeTier::kTracepoint}) {
    std::string error;
    std::map<std::string, TraceTarget> targets;
    gpuq_bpf* skel = OpenFor(EveryHookAt(tier, nullptr), &error, &targets);
    if (skel == nullptr) return error;
    gpuq_bpf__destroy(skel);
  }
  return "";
}

std::string BpfLoader::VerifyPrograms(ProbeTier tier,
                                      const std::string& btf_custom_path,
                                      const KernelFeatures* features) {
  InstallLogger();
  std::string error;
  std::map<std::string, TraceTarget> targets;
  // The kernel's ids only: every program is verified with the BPF object's
  // own constants (rodata), as before any probe.
  const std::set<std::string> present =
      features != nullptr ? BtfFuncNames(*features) : std::set<std::string>();
  gpuq_bpf* skel =
      OpenFor(EveryHookAt(tier, features != nullptr ? &present : nullptr),
              &error, &targets, btf_custom_path, nullptr,
              features != nullptr ? &features->btf_funcs : nullptr);
  if (skel == nullptr) return error;
  int err = 0;
  {
    const TraceTargetScope scope(skel->obj, targets);
    err = gpuq_bpf__load(skel);
  }
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

std::vector<int> BpfLoader::ProgramFds() const {
  std::vector<int> fds;
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, skel_->obj) {
    const int fd = bpf_program__fd(prog);  // loaded (planned) programs only
    if (fd >= 0) fds.push_back(fd);
  }
  return fds;
}

int BpfLoader::DropsFd() const { return bpf_map__fd(skel_->maps.drops); }

}  // namespace gpuq

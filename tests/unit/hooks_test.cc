// Per-hook tier planning before load (loader/hooks.cc) on fake feature sets:
// btf-fentry where BTF has the function and trampolines work, btf-kprobe
// where kallsyms has it, args-kprobe without amdgpu BTF (or when forced),
// none with a reason otherwise.
#include "loader/hooks.h"

#include <bpf/libbpf.h>
#include <fnmatch.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpuq.skel.h"
#include "sources/cgroup_watcher.h"

namespace gpuq {
namespace {

std::map<std::string, HookPlan> ByProbe(const std::vector<HookPlan>& plans) {
  std::map<std::string, HookPlan> out;
  for (const HookPlan& p : plans) out.emplace(p.spec->probe, p);
  return out;
}

// The plans of the kernel-function hooks (the tracepoint tier's are tested
// on their own below).
std::vector<HookPlan> FunctionPlans(const KernelFeatures& f,
                                    const PlanOptions& o) {
  std::vector<HookPlan> out;
  for (const HookPlan& p : PlanHooks(f, o)) {
    if (!IsTracepointHook(*p.spec)) out.push_back(p);
  }
  return out;
}

// The plans of the hooks with BTF bodies (not the args tier's own hooks).
std::vector<HookPlan> BtfBodyPlans(const KernelFeatures& f,
                                   const PlanOptions& o) {
  std::vector<HookPlan> out;
  for (const HookPlan& p : FunctionPlans(f, o)) {
    if (!IsArgsOnlyHook(*p.spec)) out.push_back(p);
  }
  return out;
}

const PlanOptions kAuto{true, TierRequest::kAuto};
const PlanOptions kNoFentry{false, TierRequest::kAuto};
const PlanOptions kArgs{true, TierRequest::kArgs};

// amdgpu-dkms: the module is loaded, kallsyms has its functions, no BTF.
KernelFeatures DkmsKernel();

// A 7.2-like kernel: amdgpu with BTF, every hooked function, secondary
// contexts.
KernelFeatures AmdgpuKernel() {
  KernelFeatures f;
  f.vmlinux_btf = f.amdgpu_btf = f.kfd_types = f.kprobes = true;
  f.fentry = f.tracepoints = f.attach_probed = true;
  f.amdgpu_loaded = f.kfd_sysfs = f.cap_sys_admin = true;
  f.kfd_contexts = true;
  for (const HookSpec& spec : Hooks()) {
    f.kallsyms.insert(spec.function);
    f.btf_funcs.emplace(spec.function, BtfFunc{});
  }
  return f;
}

TEST(HooksTest, EveryHookHasBothTwinsAndAnArgsBody) {
  for (const HookSpec& spec : Hooks()) {
    if (IsTracepointHook(spec)) {
      EXPECT_FALSE(ProgramsOf(spec, ProbeTier::kTracepoint).empty());
      EXPECT_TRUE(ProgramsOf(spec, ProbeTier::kBtfKprobe).empty());
      continue;
    }
    if (IsArgsOnlyHook(spec)) {
      EXPECT_TRUE(ProgramsOf(spec, ProbeTier::kBtfFentry).empty());
      EXPECT_TRUE(ProgramsOf(spec, ProbeTier::kBtfKprobe).empty());
      EXPECT_FALSE(ProgramsOf(spec, ProbeTier::kArgsKprobe).empty());
      EXPECT_TRUE(spec.optional) << spec.probe;
      continue;
    }
    EXPECT_FALSE(ProgramsOf(spec, ProbeTier::kBtfFentry).empty()) << spec.probe;
    EXPECT_EQ(ProgramsOf(spec, ProbeTier::kBtfFentry).size(),
              ProgramsOf(spec, ProbeTier::kBtfKprobe).size())
        << spec.probe << ": fentry and kprobe paths must cover the same";
    EXPECT_FALSE(ProgramsOf(spec, ProbeTier::kArgsKprobe).empty())
        << spec.probe << ": every hook has a BTF-free body";
    EXPECT_TRUE(ProgramsOf(spec, ProbeTier::kNone).empty());
  }
}

TEST(HooksTest, FentryWhereBtfHasTheFunction) {
  for (const HookPlan& p : BtfBodyPlans(AmdgpuKernel(), kAuto)) {
    EXPECT_EQ(p.mode(), HookMode::kFentry) << p.spec->probe;
  }
}

TEST(HooksTest, NoFentryFlagForcesKprobes) {
  for (const HookPlan& p : BtfBodyPlans(AmdgpuKernel(), kNoFentry)) {
    EXPECT_EQ(p.mode(), HookMode::kKprobe) << p.spec->probe;
  }
}

TEST(HooksTest, KprobeWhenFunctionHasNoBtf) {
  KernelFeatures f = AmdgpuKernel();
  f.btf_funcs.erase("uninit_queue");
  const auto plans = ByProbe(FunctionPlans(f, kAuto));
  EXPECT_EQ(plans.at("queue_destroy").mode(), HookMode::kKprobe);
  EXPECT_EQ(plans.at("queue_create").mode(), HookMode::kFentry);
}

TEST(HooksTest, MissingFunctionIsReportedNotFatal) {
  KernelFeatures f = AmdgpuKernel();
  f.btf_funcs.erase("kfd_procfs_add_queue");
  f.kallsyms.erase("kfd_procfs_add_queue");
  const auto plans = ByProbe(FunctionPlans(f, kAuto));
  EXPECT_EQ(plans.at("queue_create").mode(), HookMode::kNone);
  EXPECT_EQ(plans.at("queue_create").reason, "function not in this kernel");
  // The others are unaffected; create_ioctl then carries creates.
  EXPECT_EQ(plans.at("create_ioctl").mode(), HookMode::kFentry);
  EXPECT_EQ(plans.at("queue_destroy").mode(), HookMode::kFentry);
}

TEST(HooksTest, WithoutAmdgpuBtfEveryHookRunsArgsOnly) {
  const auto plans = ByProbe(FunctionPlans(DkmsKernel(), kAuto));
  for (const auto& [probe, plan] : plans) {
    EXPECT_EQ(plan.tier, ProbeTier::kArgsKprobe) << probe;
    EXPECT_EQ(plan.mode(), HookMode::kKprobe) << probe;
    EXPECT_NE(plan.reason.find("no BTF for amdgpu"), std::string::npos)
        << plan.reason;
  }
  // The args programs are those of the args tier, never a CO-RE body.
  EXPECT_EQ(ProgramsOf(*plans.at("queue_destroy").spec, ProbeTier::kArgsKprobe),
            (std::vector<std::string>{"args_kprobe_uninit_queue"}));
  EXPECT_EQ(ProgramsOf(*plans.at("runlist_unmap").spec, ProbeTier::kArgsKprobe),
            (std::vector<std::string>{"args_kprobe_unmap_queues_cpsch",
                                      "args_kretprobe_unmap_queues_cpsch"}));
}

TEST(HooksTest, WithoutAmdgpuBtfOrKprobesNothingAttaches) {
  KernelFeatures f = DkmsKernel();
  f.kprobes = false;
  f.kprobe_note = "kprobes refused at attach (No such file or directory)";
  for (const HookPlan& p : FunctionPlans(f, kAuto)) {
    EXPECT_EQ(p.tier, ProbeTier::kNone) << p.spec->probe;
    EXPECT_NE(p.reason.find("refused at attach"), std::string::npos)
        << p.reason;
  }
}

TEST(HooksTest, ForcedArgsTierIgnoresBtf) {
  for (const HookPlan& p : FunctionPlans(AmdgpuKernel(), kArgs)) {
    EXPECT_EQ(p.tier, ProbeTier::kArgsKprobe) << p.spec->probe;
    EXPECT_NE(p.reason.find("--probe-tier=args"), std::string::npos);
  }
}

TEST(HooksTest, FentryRefusedByTheFeatureProbeMeansBtfKprobe) {
  // This CI host's kernel: BTF everywhere, but trampolines refused at load.
  KernelFeatures f = AmdgpuKernel();
  f.fentry = false;
  f.fentry_note = "fentry refused at load (Operation not permitted)";
  for (const HookPlan& p : BtfBodyPlans(f, kAuto)) {
    EXPECT_EQ(p.tier, ProbeTier::kBtfKprobe) << p.spec->probe;
    EXPECT_EQ(p.reason, f.fentry_note);
  }
}

TEST(HooksTest, NoFentryNoKprobesWithBtf) {
  KernelFeatures f = AmdgpuKernel();
  f.fentry = f.kprobes = false;
  for (const HookPlan& p : FunctionPlans(f, kAuto)) {
    EXPECT_EQ(p.tier, ProbeTier::kNone) << p.spec->probe;
  }
}

TEST(HooksTest, ModuleBtfWithoutCapSysAdminFallsBackToArgs) {
  KernelFeatures f = AmdgpuKernel();
  f.cap_sys_admin = false;  // CAP_BPF + CAP_PERFMON only
  for (const HookPlan& p : FunctionPlans(f, kAuto)) {
    EXPECT_EQ(p.tier, ProbeTier::kArgsKprobe) << p.spec->probe;
    EXPECT_NE(p.reason.find("CAP_SYS_ADMIN"), std::string::npos);
  }
}

TEST(HooksTest, TierNamesAndRequests) {
  EXPECT_STREQ(TierName(ProbeTier::kBtfFentry), "btf-fentry");
  EXPECT_STREQ(TierName(ProbeTier::kBtfKprobe), "btf-kprobe");
  EXPECT_STREQ(TierName(ProbeTier::kArgsKprobe), "args-kprobe");
  EXPECT_STREQ(TierName(ProbeTier::kTracepoint), "tracepoint");
  EXPECT_STREQ(TierName(ProbeTier::kNone), "none");
  TierRequest r = TierRequest::kTracepoint;
  EXPECT_TRUE(ParseTierRequest("args", &r));
  EXPECT_EQ(r, TierRequest::kArgs);
  EXPECT_TRUE(ParseTierRequest("auto", &r));
  EXPECT_EQ(r, TierRequest::kAuto);
  EXPECT_FALSE(ParseTierRequest("btf", &r));
}

TEST(HooksTest, SummaryNamesTiersAndWhatIsMissing) {
  KernelFeatures f = DkmsKernel();
  f.kallsyms.erase("mes_v12_0_remove_hw_queue");
  const std::string line = TierSummary(PlanHooks(f, kAuto));
  EXPECT_NE(line.find("args-kprobe (27 hooks)"), std::string::npos) << line;
  EXPECT_NE(line.find("not hooked: mes_remove_v12"), std::string::npos) << line;
  // The args tier's own hooks are not "missing" where the BTF bodies run.
  EXPECT_EQ(TierSummary(PlanHooks(AmdgpuKernel(), kAuto)),
            "probe tier: btf-fentry (25 hooks)");
}

TEST(HooksTest, ArgsOnlyHooksRunOnlyInTheArgsTier) {
  for (const auto& [probe, plan] :
       ByProbe(FunctionPlans(AmdgpuKernel(), kAuto))) {
    if (!IsArgsOnlyHook(*plan.spec)) continue;
    EXPECT_EQ(plan.tier, ProbeTier::kNone) << probe;
    EXPECT_NE(plan.reason.find("not needed"), std::string::npos) << plan.reason;
  }
  const auto dkms = ByProbe(FunctionPlans(DkmsKernel(), kAuto));
  EXPECT_EQ(dkms.at("process_seen").tier, ProbeTier::kArgsKprobe);
  EXPECT_EQ(ProgramsOf(*dkms.at("process_seen").spec, ProbeTier::kArgsKprobe),
            (std::vector<std::string>{"args_kprobe_kfd_ioctl"}));
  EXPECT_EQ(
      ProgramsOf(*dkms.at("process_teardown").spec, ProbeTier::kArgsKprobe),
      (std::vector<std::string>{
          "args_kprobe_kfd_process_dequeue_from_all_devices",
          "args_kretprobe_kfd_process_dequeue_from_all_devices"}));
}

TEST(HooksTest, BuiltInAmdgpuNeedsNoCapSysAdmin) {
  KernelFeatures f = AmdgpuKernel();
  f.cap_sys_admin = false;
  f.amdgpu_btf = false;  // CONFIG_DRM_AMDGPU=y: the types are in vmlinux
  for (const HookPlan& p : BtfBodyPlans(f, kAuto)) {
    EXPECT_EQ(p.mode(), HookMode::kFentry) << p.spec->probe;
  }
}

TEST(HooksTest, NoAmdgpuAtAll) {
  KernelFeatures f;  // this CI host: BTF, no kprobes, no amdgpu
  f.vmlinux_btf = true;
  f.kallsyms.insert("exit_mm_release");  // vmlinux has it, BTF too
  f.btf_funcs.emplace("exit_mm_release", BtfFunc{});
  for (const HookPlan& p : FunctionPlans(f, kAuto)) {
    EXPECT_EQ(p.mode(), HookMode::kNone) << p.spec->probe;
    // the exit read serves the KFD hooks: not needed, for the same reason
    EXPECT_EQ(p.reason, p.spec->core_kernel
                            ? "not needed: no function hook carries creates "
                              "(amdgpu is not loaded)"
                            : "amdgpu is not loaded")
        << p.spec->probe;
  }
}

TEST(HooksTest, LifecycleHooksAreRequiredRunlistAndEvictionHooksOptional) {
  for (const HookSpec& spec : Hooks()) {
    const std::string group = spec.group;
    EXPECT_EQ(spec.optional, group != "lifecycle" && group != "tracepoint")
        << spec.probe;
    // Each optional hook has an exit: its events are written at return.
    // The args tier's own hooks only learn identities, the core kernel
    // hooks only read for the KFD hooks' records, and a context's exit is
    // written as its file's release begins, like process_exit's.
    if (spec.optional && !IsArgsOnlyHook(spec) && !spec.core_kernel &&
        !spec.kfd_contexts) {
      EXPECT_EQ(ProgramsOf(spec, ProbeTier::kBtfFentry).size(), 2u)
          << spec.probe;
    }
  }
}

TEST(HooksTest, GroupsAreContiguousForGroupedOutput) {
  std::vector<std::string> seen;
  for (const HookSpec& spec : Hooks()) {
    if (seen.empty() || seen.back() != spec.group) {
      for (const std::string& g : seen) EXPECT_NE(g, spec.group) << spec.probe;
      seen.emplace_back(spec.group);
    }
  }
  // HookGroups() lists every group of the table, in the table's order.
  std::vector<std::string> listed;
  for (const HookGroup& g : HookGroups()) listed.emplace_back(g.name);
  EXPECT_EQ(seen, listed);
}

TEST(HooksTest, TheExitReadRunsOnlyBesideTheKfdHooks) {
  // exit_mm_release reads vmlinux types only: fentry with amdgpu BTF, the
  // same kprobe program without it (amdgpu-dkms).
  const auto btf = ByProbe(FunctionPlans(AmdgpuKernel(), kAuto));
  ASSERT_EQ(btf.count("exit_read"), 1u);
  const HookSpec& spec = *btf.at("exit_read").spec;
  EXPECT_TRUE(spec.core_kernel);
  EXPECT_STREQ(spec.function, "exit_mm_release");
  EXPECT_EQ(btf.at("exit_read").tier, ProbeTier::kBtfFentry);
  EXPECT_EQ(ProgramsOf(spec, ProbeTier::kBtfFentry),
            (std::vector<std::string>{"fentry_exit_mm_release"}));
  EXPECT_EQ(
      ByProbe(FunctionPlans(AmdgpuKernel(), kNoFentry)).at("exit_read").tier,
      ProbeTier::kBtfKprobe);
  const auto dkms = ByProbe(FunctionPlans(DkmsKernel(), kAuto));
  EXPECT_EQ(dkms.at("exit_read").tier, ProbeTier::kArgsKprobe);
  EXPECT_EQ(ProgramsOf(spec, ProbeTier::kArgsKprobe),
            (std::vector<std::string>{"kprobe_exit_mm_release"}));
  // Where no function hook carries creates it has nothing to read for,
  // though the kernel function is there (the tracepoint tier reads at
  // exit_group itself).
  KernelFeatures no_create = AmdgpuKernel();
  no_create.kallsyms.erase("kfd_ioctl_create_queue");
  no_create.btf_funcs.erase("kfd_ioctl_create_queue");
  const HookPlan lone =
      ByProbe(FunctionPlans(no_create, kAuto)).at("exit_read");
  EXPECT_EQ(lone.tier, ProbeTier::kNone);
  EXPECT_EQ(lone.reason,
            "not needed: no function hook carries creates (function not in "
            "this kernel)");
  const auto tp = ByProbe(FunctionPlans(
      AmdgpuKernel(), PlanOptions{true, TierRequest::kTracepoint}));
  EXPECT_EQ(tp.at("exit_read").tier, ProbeTier::kNone);
}

TEST(HooksTest, ProgramNamesFollowTheFunction) {
  const auto plans = ByProbe(FunctionPlans(AmdgpuKernel(), kAuto));
  const HookSpec& unmap = *plans.at("runlist_unmap").spec;
  EXPECT_STREQ(unmap.function, "unmap_queues_cpsch");
  EXPECT_EQ(ProgramsOf(unmap, ProbeTier::kBtfFentry),
            (std::vector<std::string>{"fentry_unmap_queues_cpsch",
                                      "fexit_unmap_queues_cpsch"}));
  EXPECT_EQ(ProgramsOf(unmap, ProbeTier::kBtfKprobe),
            (std::vector<std::string>{"kprobe_unmap_queues_cpsch",
                                      "kretprobe_unmap_queues_cpsch"}));
  EXPECT_EQ(
      ProgramsOf(*plans.at("queue_create").spec, ProbeTier::kBtfFentry).front(),
      "fentry_kfd_procfs_add_queue");
}

// Program names are spelled out in full on both sides (hooks.cc and bpf/),
// so nothing pastes them together: each name a hook gives is checked here
// against the BPF object (opened, not loaded: no privileges needed). It
// exists, its section is its mode's and the hook's function, and every
// program of the object is some hook's.
TEST(HooksTest, EveryProgramIsInTheObjectUnderItsHooksSection) {
  gpuq_bpf* skel = gpuq_bpf__open();
  ASSERT_NE(skel, nullptr) << "cannot open the BPF object";
  std::set<std::string> named;
  for (const HookSpec& spec : Hooks()) {
    const std::pair<const char*, const char*> slots[] = {
        {spec.fentry_entry, "fentry/"}, {spec.fentry_exit, "fexit/"},
        {spec.kprobe_entry, "kprobe/"}, {spec.kprobe_exit, "kretprobe/"},
        {spec.args_entry, "kprobe/"},   {spec.args_exit, "kretprobe/"},
        {spec.tp_entry, "tp_btf/"},     {spec.tp_exit, "tp_btf/"}};
    for (const auto& [name, kind] : slots) {
      if (name == nullptr) continue;
      named.insert(name);
      const bpf_program* p = bpf_object__find_program_by_name(skel->obj, name);
      if (p == nullptr) {
        ADD_FAILURE() << spec.probe << ": no program " << name;
        continue;
      }
      const std::string section = bpf_program__section_name(p);
      EXPECT_EQ(section.substr(0, section.find('/') + 1), kind)
          << spec.probe << ": " << name << " in " << section;
      if (spec.tp_entry == nullptr) {
        EXPECT_EQ(section.substr(section.find('/') + 1), spec.function)
            << spec.probe << ": " << name << " in " << section;
      }
    }
  }
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, skel->obj) {
    EXPECT_EQ(named.count(bpf_program__name(prog)), 1u)
        << bpf_program__name(prog) << " (" << bpf_program__section_name(prog)
        << ") is no hook's program";
  }
  gpuq_bpf__destroy(skel);
}

// The loader's fallback (the kernel refused the whole set) adds the
// optional groups back one by one from this list: every optional hook's
// group is in it once, in table order, and no group of required hooks only.
TEST(HooksTest, OptionalGroupsComeFromTheTable) {
  const std::vector<std::string>& groups = OptionalHookGroups();
  std::set<std::string> optional;
  std::vector<std::string> in_order;
  for (const HookSpec& spec : Hooks()) {
    if (!spec.optional) continue;
    if (optional.insert(spec.group).second) in_order.emplace_back(spec.group);
  }
  EXPECT_EQ(groups, in_order);
  EXPECT_EQ(std::set<std::string>(groups.begin(), groups.end()).size(),
            groups.size());
  EXPECT_EQ(std::count(groups.begin(), groups.end(), "lifecycle"), 0);
  EXPECT_EQ(std::count(groups.begin(), groups.end(), "runlist"), 1);
}

// One hook reads creates from the queue object, one from the ioctl's args:
// the loader and the planner find them by this role, not by probe name.
TEST(HooksTest, TheCreatePathsAreRolesOfTheTable) {
  std::map<HookSpec::Creates, std::vector<std::string>> by_role;
  for (const HookSpec& spec : Hooks())
    by_role[spec.creates].push_back(spec.probe);
  EXPECT_EQ(by_role[HookSpec::Creates::kQueueObject],
            std::vector<std::string>{"queue_create"});
  EXPECT_EQ(by_role[HookSpec::Creates::kIoctlArgs],
            std::vector<std::string>{"create_ioctl"});
}

// A row of docs/architecture.md's table of kernel hooks: the probe names of its
// first cell (patterns: `evict_*`) and the functions of its second, a brace
// list expanded (`evict_process_queues_{cpsch,nocpsch}`) and a comma-separated
// one split (`sys_enter`/`sys_exit` are two names already).
struct ReadmeHookRow {
  std::vector<std::string> probes;
  std::set<std::string> functions;
  std::string line;
};

std::vector<std::string> Backticked(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t at = cell.find('`'); at != std::string::npos;) {
    const size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    out.push_back(cell.substr(at + 1, end - at - 1));
    at = cell.find('`', end + 1);
  }
  return out;
}

std::vector<std::string> ExpandBraces(const std::string& name) {
  const size_t open = name.find('{');
  const size_t close = name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {name};
  std::vector<std::string> out;
  const std::string list = name.substr(open + 1, close - open - 1);
  for (size_t from = 0;;) {
    const size_t comma = list.find(',', from);
    out.push_back(name.substr(0, open) + list.substr(from, comma - from) +
                  name.substr(close + 1));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

std::vector<ReadmeHookRow> ReadmeHookTable() {
  std::ifstream readme(std::string(GPUQ_SOURCE_DIR) + "/docs/architecture.md");
  std::vector<ReadmeHookRow> rows;
  bool in_table = false;
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("Kernel hooks (", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("| `", 0) != 0) {
      if (!rows.empty()) break;  // the line after the table
      continue;                  // the blank line, header and rule before it
    }
    const size_t first = line.find('|', 1);
    const size_t second = line.find('|', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    ReadmeHookRow row;
    row.line = line;
    row.probes = Backticked(line.substr(1, first - 1));
    for (const std::string& f :
         Backticked(line.substr(first + 1, second - first - 1))) {
      // `uninit_queue(q)`: the function and the argument the hook reads
      for (const std::string& name : ExpandBraces(f.substr(0, f.find('(')))) {
        row.functions.insert(name);
      }
    }
    rows.push_back(row);
  }
  return rows;
}

// The probes gpuq_probe_attached reports besides the hook table's.
std::set<std::string> ProbesOutsideTheHookTable() {
  std::set<std::string> out;
  for (const ProbeStatus& p : CgroupWatcher::Probes(false, "")) {
    out.insert(p.probe);
  }
  return out;
}

// The hook table (agent/loader/hooks.cc) is the one source;
// docs/architecture.md's table of kernel hooks is checked against it both ways:
// every hook but the args-kprobe tier's own (docs/probe-tiers.md names those)
// has a row naming its probe and its function (and the later name it attaches
// to), and every probe a row names is a hook's or one gpuq_probe_attached
// reports.
TEST(HooksTest, ReadmeHookTableIsTheHookTable) {
  const std::vector<ReadmeHookRow> rows = ReadmeHookTable();
  ASSERT_GT(rows.size(), 8u)
      << "docs/architecture.md's table of kernel hooks not found";
  auto matches = [](const ReadmeHookRow& row, const std::string& probe) {
    for (const std::string& pattern : row.probes) {
      if (fnmatch(pattern.c_str(), probe.c_str(), 0) == 0) return true;
    }
    return false;
  };
  std::ifstream tiers_doc(std::string(GPUQ_SOURCE_DIR) +
                          "/docs/probe-tiers.md");
  const std::string tiers((std::istreambuf_iterator<char>(tiers_doc)),
                          std::istreambuf_iterator<char>());
  for (const HookSpec& spec : Hooks()) {
    if (IsArgsOnlyHook(spec)) {
      EXPECT_NE(tiers.find(std::string("`") + spec.probe + "`"),
                std::string::npos)
          << spec.probe << " (args-kprobe only) not in docs/probe-tiers.md";
      continue;
    }
    auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
      return matches(r, spec.probe);
    });
    if (row == rows.end()) {
      ADD_FAILURE() << spec.probe
                    << " is a hook but no row of docs/architecture.md's "
                    << "table of kernel hooks names it";
      continue;
    }
    std::string functions = spec.function;
    if (spec.renamed_to != nullptr)
      functions += std::string(",") + spec.renamed_to;
    for (const std::string& fn : ExpandBraces("{" + functions + "}")) {
      EXPECT_TRUE(row->functions.count(fn))
          << spec.probe << "'s function " << fn
          << " is not in its row: " << row->line;
    }
  }
  const std::set<std::string> outside = ProbesOutsideTheHookTable();
  for (const ReadmeHookRow& row : rows) {
    for (const std::string& pattern : row.probes) {
      bool found = outside.count(pattern) > 0;
      for (const HookSpec& spec : Hooks()) {
        found = found || (!IsArgsOnlyHook(spec) &&
                          fnmatch(pattern.c_str(), spec.probe, 0) == 0);
      }
      EXPECT_TRUE(found) << "docs/architecture.md names probe `" << pattern
                         << "`, which is no hook's";
    }
  }
}

TEST(HooksTest, NeverTheTrapFunctions) {
  // kfd-probe-points.md 5: inlined/cloned (no BTF) or a vmlinux name clash.
  for (const HookSpec& spec : Hooks()) {
    for (const char* trap :
         {"execute_queues_cpsch", "remove_queue_mes", "update_queue",
          "kfd_process_notifier_release_internal"}) {
      EXPECT_STRNE(spec.function, trap) << spec.probe;
    }
  }
}

TEST(HooksTest, Debian61LacksMesV12OnlyThatHookIsMissing) {
  // amdgpu 6.1.192: no mes_v12_0_remove_hw_queue (nm and BTF, docs 1a).
  KernelFeatures f = AmdgpuKernel();
  f.btf_funcs.erase("mes_v12_0_remove_hw_queue");
  f.kallsyms.erase("mes_v12_0_remove_hw_queue");
  const auto plans = ByProbe(BtfBodyPlans(f, kAuto));
  EXPECT_EQ(plans.at("mes_remove_v12").mode(), HookMode::kNone);
  EXPECT_EQ(plans.at("mes_remove_v12").reason, "function not in this kernel");
  for (const auto& [probe, plan] : plans) {
    if (probe != "mes_remove_v12") {
      EXPECT_EQ(plan.mode(), HookMode::kFentry) << probe;
    }
  }
}

TEST(HooksTest, KallsymsWithoutKprobeSupport) {
  KernelFeatures f = AmdgpuKernel();
  f.kprobes = false;
  for (const HookPlan& p : FunctionPlans(f, kNoFentry)) {
    EXPECT_EQ(p.mode(), HookMode::kNone) << p.spec->probe;
  }
}

std::map<std::string, HookPlan> AllByProbe(const KernelFeatures& f,
                                           const PlanOptions& o) {
  return ByProbe(PlanHooks(f, o));
}

TEST(HooksTest, TracepointTierWhenNothingElseCarriesCreates) {
  // A locked-down kernel: no kprobes, trampolines refused, amdgpu-dkms.
  KernelFeatures f = DkmsKernel();
  f.kprobes = f.fentry = false;
  f.kfd_major = 235;
  const auto plans = AllByProbe(f, kAuto);
  EXPECT_EQ(plans.at("tp_ioctl").tier, ProbeTier::kTracepoint);
  EXPECT_EQ(plans.at("tp_exit").tier, ProbeTier::kTracepoint);
  EXPECT_EQ(ProgramsOf(*plans.at("tp_ioctl").spec, ProbeTier::kTracepoint),
            (std::vector<std::string>{"tp_sys_enter", "tp_sys_exit"}));
  for (const auto& [probe, plan] : plans) {
    if (!IsTracepointHook(*plan.spec)) {
      EXPECT_EQ(plan.tier, ProbeTier::kNone) << probe;
    }
  }
  const std::string line = TierSummary(PlanHooks(f, kAuto));
  EXPECT_NE(line.find("tracepoint (2 hooks)"), std::string::npos) << line;
  EXPECT_NE(line.find("no runlist unmaps and maps, MES queue adds and "
                      "removes, evictions and restores, the causes of "
                      "runlist operations: those families are absent"),
            std::string::npos)
      << line;
}

TEST(HooksTest, EveryHookGroupIsDescribedOnce) {
  std::vector<std::string> described;
  for (const HookGroup& g : HookGroups()) described.emplace_back(g.name);
  std::vector<std::string> used;
  for (const HookSpec& spec : Hooks()) {
    if (used.empty() || used.back() != spec.group)
      used.emplace_back(spec.group);
  }
  // Hooks of a group are adjacent, so `used` is the groups in Hooks() order.
  EXPECT_EQ(described, used);
}

TEST(HooksTest, TracepointTierNeverMixedWithFunctionHooks) {
  // BTF and fentry work but the create ioctl is not hookable: the
  // tracepoint tier takes over and every function hook steps aside.
  KernelFeatures f = AmdgpuKernel();
  f.kfd_major = 235;
  f.btf_funcs.erase("kfd_ioctl_create_queue");
  f.kallsyms.erase("kfd_ioctl_create_queue");
  const auto plans = AllByProbe(f, kAuto);
  EXPECT_EQ(plans.at("tp_ioctl").tier, ProbeTier::kTracepoint);
  EXPECT_EQ(plans.at("queue_destroy").tier, ProbeTier::kNone);
  EXPECT_EQ(plans.at("queue_destroy").reason,
            "the tracepoint tier runs instead");
}

TEST(HooksTest, TracepointTierForcedOrUnavailable) {
  KernelFeatures f = AmdgpuKernel();
  f.kfd_major = 235;
  auto plans = AllByProbe(f, {true, TierRequest::kTracepoint});
  EXPECT_EQ(plans.at("tp_ioctl").tier, ProbeTier::kTracepoint);
  EXPECT_EQ(plans.at("queue_create").tier, ProbeTier::kNone);
  // Where function hooks run, the tracepoints are not planned nor missed.
  plans = AllByProbe(f, kAuto);
  EXPECT_EQ(plans.at("tp_ioctl").tier, ProbeTier::kNone);
  EXPECT_EQ(plans.at("tp_ioctl").reason, "not needed: function hooks run");
  // No /dev/kfd major, or no raw tracepoints: said so.
  f.kfd_major = 0;
  plans = AllByProbe(f, {true, TierRequest::kTracepoint});
  EXPECT_EQ(plans.at("tp_ioctl").tier, ProbeTier::kNone);
  EXPECT_NE(plans.at("tp_ioctl").reason.find("/proc/devices"),
            std::string::npos);
  f.kfd_major = 235;
  f.tracepoints = false;
  f.tracepoint_note = "raw tracepoints refused at load (Permission denied)";
  plans = AllByProbe(f, {true, TierRequest::kTracepoint});
  EXPECT_NE(plans.at("tp_ioctl").reason.find("refused at load"),
            std::string::npos);
  // Nothing planned: the agent's one line names the tracepoints' reason,
  // not the function hooks' "not asked for" (7.3 once said "no KFD hook
  // can attach on this kernel: --probe-tier=tracepoint: no function hooks").
  f.tracepoint_note = "raw tracepoints attached but never fired";
  const std::vector<HookPlan> none =
      PlanHooks(f, {true, TierRequest::kTracepoint});
  for (const HookPlan& p : none) EXPECT_EQ(p.tier, ProbeTier::kNone);
  EXPECT_NE(NoHookReason(none, TierRequest::kTracepoint).find("never fired"),
            std::string::npos);
  EXPECT_EQ(NoHookReason(none, TierRequest::kAuto), none.at(0).reason);
}

TEST(HooksTest, BtfFileGivesTheBtfBodiesOnKprobes) {
  KernelFeatures f = DkmsKernel();
  f.custom_btf = f.kfd_types = true;  // --btf with amdgpu's types
  for (const HookPlan& p : BtfBodyPlans(f, kAuto)) {
    EXPECT_EQ(p.tier, ProbeTier::kBtfKprobe) << p.spec->probe;
    EXPECT_NE(p.reason.find("--btf"), std::string::npos) << p.reason;
  }
  f.kfd_types = false;  // a --btf file without them: said so, args tier
  for (const HookPlan& p : FunctionPlans(f, kAuto)) {
    EXPECT_EQ(p.tier, ProbeTier::kArgsKprobe) << p.spec->probe;
    EXPECT_NE(p.reason.find("--btf file has no amdkfd types"),
              std::string::npos);
  }
}

TEST(HooksTest, ContextHooksOnlyWhereTheKernelHasContexts) {
  KernelFeatures f = AmdgpuKernel();
  EXPECT_EQ(ByProbe(FunctionPlans(f, kAuto)).at("context_exit").tier,
            ProbeTier::kBtfFentry);
  EXPECT_EQ(
      ByProbe(FunctionPlans(DkmsKernel(), kAuto)).at("context_create").tier,
      ProbeTier::kArgsKprobe);
  f.kfd_contexts = false;  // 6.1-6.18: kfd_release exists, contexts do not
  const auto plans = ByProbe(FunctionPlans(f, kAuto));
  EXPECT_EQ(plans.at("context_exit").tier, ProbeTier::kNone);
  EXPECT_NE(plans.at("context_exit").reason.find("no secondary contexts"),
            std::string::npos);
  // Nothing else depends on them.
  EXPECT_EQ(plans.at("process_exit").tier, ProbeTier::kBtfFentry);
}

TEST(HooksTest, ARenamedFunctionIsAttachedByItsNewName) {
  // 7.3: exit_mm_release became mm_exit_exec_release(tsk, mm).
  KernelFeatures f = AmdgpuKernel();
  f.kallsyms.erase("exit_mm_release");
  f.btf_funcs.erase("exit_mm_release");
  f.kallsyms.insert("mm_exit_exec_release");
  f.btf_funcs.emplace("mm_exit_exec_release", BtfFunc{});
  auto plans = ByProbe(FunctionPlans(f, kAuto));
  EXPECT_EQ(plans.at("exit_read").tier, ProbeTier::kBtfFentry);
  EXPECT_EQ(plans.at("exit_read").target, "mm_exit_exec_release");
  EXPECT_EQ(plans.at("queue_create").target, "kfd_procfs_add_queue");
  // Both present (6.1-7.2): the original name.
  f.kallsyms.insert("exit_mm_release");
  f.btf_funcs.emplace("exit_mm_release", BtfFunc{});
  EXPECT_EQ(ByProbe(FunctionPlans(f, kAuto)).at("exit_read").target,
            "exit_mm_release");
  const std::vector<std::string> asked = HookFunctions();
  EXPECT_NE(std::find(asked.begin(), asked.end(), "mm_exit_exec_release"),
            asked.end());
}

TEST(HooksTest, NoFuncRetHelperMeansKprobesForHooksWithExitPrograms) {
  // 5.15 (Ubuntu 22.04): bpf_get_func_ret is 5.17+, so the fexit programs
  // of GPUQ_EXIT_PROGRAMS would be refused; their hooks run on kprobes,
  // the rest keeps fentry.
  KernelFeatures f = AmdgpuKernel();
  f.func_ret = false;
  const auto plans = ByProbe(FunctionPlans(f, kAuto));
  EXPECT_EQ(plans.at("runlist_unmap").tier, ProbeTier::kBtfKprobe);
  EXPECT_NE(plans.at("runlist_unmap").reason.find("bpf_get_func_ret"),
            std::string::npos);
  EXPECT_EQ(plans.at("evict_trigger").tier, ProbeTier::kBtfKprobe);
  // create_ioctl's fexit declares its arguments: no helper needed.
  EXPECT_EQ(plans.at("create_ioctl").tier, ProbeTier::kBtfFentry);
  EXPECT_EQ(plans.at("queue_create").tier, ProbeTier::kBtfFentry);
}

TEST(HooksTest, CompilerClonesAreReportedByName) {
  KernelFeatures f = AmdgpuKernel();
  // Only the clone: its arguments may differ, so nothing attaches.
  f.kallsyms.erase("unmap_queues_cpsch");
  f.btf_funcs.erase("unmap_queues_cpsch");
  f.clones["unmap_queues_cpsch"] = "unmap_queues_cpsch.constprop.0";
  // Both: the function is hooked, the clone's callers are named as missed.
  f.clones["add_queue_mes"] = "add_queue_mes.isra.0";
  const auto plans = ByProbe(FunctionPlans(f, kAuto));
  EXPECT_EQ(plans.at("runlist_unmap").tier, ProbeTier::kNone);
  EXPECT_NE(
      plans.at("runlist_unmap").reason.find("unmap_queues_cpsch.constprop.0"),
      std::string::npos);
  EXPECT_EQ(plans.at("mes_add").tier, ProbeTier::kBtfFentry);
  EXPECT_NE(plans.at("mes_add").reason.find(
                "calls through its compiler clone add_queue_mes.isra.0 are "
                "not seen"),
            std::string::npos);
}

KernelFeatures DkmsKernel() {
  KernelFeatures f = AmdgpuKernel();
  f.amdgpu_btf = f.kfd_types = false;
  f.btf_funcs.clear();  // no module BTF: no FUNC records either
  return f;
}

}  // namespace
}  // namespace gpuq

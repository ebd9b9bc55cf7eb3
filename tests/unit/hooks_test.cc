// Per-hook mode selection (loader/hooks.cc): fentry where BTF has the
// function, kprobe where kallsyms has it, none with a reason otherwise.
#include "loader/hooks.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace gpuq {
namespace {

std::map<std::string, HookPlan> ByProbe(const std::vector<HookPlan>& plans) {
  std::map<std::string, HookPlan> out;
  for (const HookPlan& p : plans) out.emplace(p.spec->probe, p);
  return out;
}

KernelFeatures AmdgpuKernel() {
  KernelFeatures f;
  f.vmlinux_btf = f.amdgpu_btf = f.kfd_types = f.kprobes = true;
  f.amdgpu_loaded = f.kfd_sysfs = f.cap_sys_admin = true;
  for (const HookSpec& spec : Hooks()) {
    f.kallsyms.insert(spec.function);
    f.btf_funcs.insert(spec.function);
  }
  return f;
}

TEST(HooksTest, EveryHookHasBothTwins) {
  for (const HookSpec& spec : Hooks()) {
    EXPECT_FALSE(ProgramsOf(spec, HookMode::kFentry).empty()) << spec.probe;
    EXPECT_EQ(ProgramsOf(spec, HookMode::kFentry).size(),
              ProgramsOf(spec, HookMode::kKprobe).size())
        << spec.probe << ": fentry and kprobe paths must cover the same";
    EXPECT_TRUE(ProgramsOf(spec, HookMode::kNone).empty());
  }
}

TEST(HooksTest, FentryWhereBtfHasTheFunction) {
  for (const HookPlan& p : PlanHooks(AmdgpuKernel(), true)) {
    EXPECT_EQ(p.mode, HookMode::kFentry) << p.spec->probe;
  }
}

TEST(HooksTest, NoFentryFlagForcesKprobes) {
  for (const HookPlan& p : PlanHooks(AmdgpuKernel(), false)) {
    EXPECT_EQ(p.mode, HookMode::kKprobe) << p.spec->probe;
  }
}

TEST(HooksTest, KprobeWhenFunctionHasNoBtf) {
  KernelFeatures f = AmdgpuKernel();
  f.btf_funcs.erase("uninit_queue");
  const auto plans = ByProbe(PlanHooks(f, true));
  EXPECT_EQ(plans.at("queue_destroy").mode, HookMode::kKprobe);
  EXPECT_EQ(plans.at("queue_create").mode, HookMode::kFentry);
}

TEST(HooksTest, MissingFunctionIsReportedNotFatal) {
  KernelFeatures f = AmdgpuKernel();
  f.btf_funcs.erase("kfd_procfs_add_queue");
  f.kallsyms.erase("kfd_procfs_add_queue");
  const auto plans = ByProbe(PlanHooks(f, true));
  EXPECT_EQ(plans.at("queue_create").mode, HookMode::kNone);
  EXPECT_EQ(plans.at("queue_create").reason, "function not in this kernel");
  // The others are unaffected; create_ioctl then carries creates.
  EXPECT_EQ(plans.at("create_ioctl").mode, HookMode::kFentry);
  EXPECT_EQ(plans.at("queue_destroy").mode, HookMode::kFentry);
}

TEST(HooksTest, WithoutAmdgpuBtfOnlyTheUapiHookRemains) {
  KernelFeatures f = AmdgpuKernel();
  f.amdgpu_btf = f.kfd_types = false;
  f.btf_funcs.clear();  // module BTF gone: no FUNC records either
  const auto plans = ByProbe(PlanHooks(f, true));
  EXPECT_EQ(plans.at("create_ioctl").mode, HookMode::kKprobe);
  for (const char* probe : {"queue_create", "queue_destroy", "process_exit"}) {
    EXPECT_EQ(plans.at(probe).mode, HookMode::kNone) << probe;
    EXPECT_NE(plans.at(probe).reason.find("no BTF for amdgpu"),
              std::string::npos)
        << plans.at(probe).reason;
  }
}

TEST(HooksTest, ModuleBtfWithoutCapSysAdminIsReportedNotSilent) {
  KernelFeatures f = AmdgpuKernel();
  f.cap_sys_admin = false;  // CAP_BPF + CAP_PERFMON only
  const auto plans = ByProbe(PlanHooks(f, true));
  for (const char* probe : {"queue_create", "queue_destroy", "process_exit"}) {
    EXPECT_EQ(plans.at(probe).mode, HookMode::kNone) << probe;
    EXPECT_NE(plans.at(probe).reason.find("CAP_SYS_ADMIN"), std::string::npos);
  }
  // The uapi-only hook needs no amdgpu BTF: it still carries creates.
  EXPECT_EQ(plans.at("create_ioctl").mode, HookMode::kFentry);
}

TEST(HooksTest, BuiltInAmdgpuNeedsNoCapSysAdmin) {
  KernelFeatures f = AmdgpuKernel();
  f.cap_sys_admin = false;
  f.amdgpu_btf = false;  // CONFIG_DRM_AMDGPU=y: the types are in vmlinux
  for (const HookPlan& p : PlanHooks(f, true)) {
    EXPECT_EQ(p.mode, HookMode::kFentry) << p.spec->probe;
  }
}

TEST(HooksTest, NoAmdgpuAtAll) {
  KernelFeatures f;  // this CI host: BTF, no kprobes, no amdgpu
  f.vmlinux_btf = true;
  for (const HookPlan& p : PlanHooks(f, true)) {
    EXPECT_EQ(p.mode, HookMode::kNone) << p.spec->probe;
    EXPECT_EQ(p.reason, "amdgpu is not loaded") << p.spec->probe;
  }
}

TEST(HooksTest, LifecycleHooksAreRequiredIssue3HooksOptional) {
  for (const HookSpec& spec : Hooks()) {
    const std::string group = spec.group;
    EXPECT_EQ(spec.optional, group != "lifecycle") << spec.probe;
    // Each optional hook has an exit: its events are written at return.
    if (spec.optional) {
      EXPECT_EQ(ProgramsOf(spec, HookMode::kFentry).size(), 2u) << spec.probe;
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
  EXPECT_EQ(seen, (std::vector<std::string>{"lifecycle", "runlist", "mes",
                                            "eviction", "attribution"}));
}

TEST(HooksTest, ProgramNamesFollowTheFunctionAndMapBack) {
  const auto plans = ByProbe(PlanHooks(AmdgpuKernel(), true));
  const HookSpec& unmap = *plans.at("runlist_unmap").spec;
  EXPECT_STREQ(unmap.function, "unmap_queues_cpsch");
  EXPECT_EQ(ProgramsOf(unmap, HookMode::kFentry),
            (std::vector<std::string>{"fentry_unmap_queues_cpsch",
                                      "fexit_unmap_queues_cpsch"}));
  EXPECT_EQ(ProgramsOf(unmap, HookMode::kKprobe),
            (std::vector<std::string>{"kprobe_unmap_queues_cpsch",
                                      "kretprobe_unmap_queues_cpsch"}));
  EXPECT_EQ(HookOfProgram("kretprobe_unmap_queues_cpsch"), &unmap);
  EXPECT_EQ(HookOfProgram("fentry_kfd_procfs_add_queue"),
            plans.at("queue_create").spec);
  EXPECT_EQ(HookOfProgram("no_such_program"), nullptr);
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
  const auto plans = ByProbe(PlanHooks(f, true));
  EXPECT_EQ(plans.at("mes_remove_v12").mode, HookMode::kNone);
  EXPECT_EQ(plans.at("mes_remove_v12").reason, "function not in this kernel");
  for (const auto& [probe, plan] : plans) {
    if (probe != "mes_remove_v12") {
      EXPECT_EQ(plan.mode, HookMode::kFentry) << probe;
    }
  }
}

TEST(HooksTest, Issue3HooksNeedAmdgpuBtf) {
  KernelFeatures f = AmdgpuKernel();
  f.amdgpu_btf = f.kfd_types = false;
  f.btf_funcs.clear();
  for (const HookPlan& p : PlanHooks(f, true)) {
    if (p.spec->optional) {
      EXPECT_EQ(p.mode, HookMode::kNone) << p.spec->probe;
    }
  }
}

TEST(HooksTest, KallsymsWithoutKprobeSupport) {
  KernelFeatures f = AmdgpuKernel();
  f.kprobes = false;
  for (const HookPlan& p : PlanHooks(f, false)) {
    EXPECT_EQ(p.mode, HookMode::kNone) << p.spec->probe;
  }
}

}  // namespace
}  // namespace gpuq

// sim_check sim-guest KEY=VALUE...: the simulator tier's guest after its
// /init (sim/guest-init.sh) mounted what it needs: loads the simulator (a
// module named amdgpu: tests/kernel/sim), checks it and the agent binary,
// makes two docker-style containers, then runs each group of checks of this
// guest's scope as a scenario of its own, in a process of its own (whatever
// goes wrong in one, the guest lives on to report the rest):
//   clients      the runtime clients in btf-fentry and btf-kprobe
//   fentry       the hook-mode scenario per tier (lifecycle.cc): every
//   kprobe       family the agent exports against the simulator's truth
//   record, short-lived, partitions
//   nobtf        the simulator reloaded without its BTF (what amdgpu-dkms
//                hosts run): the agent's planner must choose the args-kprobe
//                tier by itself, and the tracepoint tier once kprobes are
//                disarmed; their runtime clients; the forced skips
//   programs     the users' programs under one agent per tier
//   bench        bench/kfd_hooks.sh's (only when named)
// then judges what every driver did and dumps the truth.
//
//   scope         btf (every group of the simulator with its BTF), nobtf,
//                 programs, or "" (all): run_sim_tier.sh splits a kernel's
//                 checks over guests that run side by side, one core each
//   only          GPUQ_KTEST_ONLY on the host (a developer's knob): only the
//                 groups named, comma-separated ("tracepoint": the
//                 tracepoint tier's lifecycle alone); the host then reports
//                 every other check missing, so such a run never passes
//   clients       the runtime client groups this guest runs (GPUQ_CLIENTS)
//   infer         1: the programs group runs the inference program too
//   probes        the hooks every function tier attaches; context-probes
//                 those of secondary contexts (7.2+), args-context-probes
//                 the args tier's; tp-probes the tracepoint tier's
// Exit 1 when the simulator did not load (the guest then powers off).
#include "command.h"
#include "guest_process.h"
#include "guest_schedule.h"
#include "lines.h"
#include "scenario_keys.h"
#include "sim_module.h"
#include "verdict.h"

#include <csignal>
#include <cstdio>
#include <sys/stat.h>

namespace sim_check
{
namespace
{

const char *const kSimGuestUsage =
    "scope=S only=G,... clients=G,... infer=0|1 probes=\"P...\" "
    "context-probes=\"P...\" args-context-probes=\"P...\" tp-probes=\"P...\"";
const std::string kSim = "/lib/kfd-sim";
const std::string kKfd = "/sys/class/kfd/kfd";
const std::string kIdA = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";
const std::string kIdB = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";

std::string Cgroup(const std::string &id)
{
	return "/sys/fs/cgroup/system.slice/docker-" + id + ".scope";
}

// The module's symbols are in kallsyms, under [amdgpu].
bool AmdgpuInKallsyms()
{
	return ReadText("/proc/kallsyms").find("kfd_procfs_add_queue\t[amdgpu]") !=
	       std::string::npos;
}

// sim_check ARGS in a process of its own, its verdicts on the console.
void Scenario(const std::vector<std::string> &args)
{
	std::vector<std::string> argv = { "/proc/self/exe" };
	argv.insert(argv.end(), args.begin(), args.end());
	Reap(Spawn(argv, SpawnOptions()));
}

class SimGuestRun
{
      public:
	explicit SimGuestRun(const ScenarioKeys &keys);
	bool Load();
	void Run();

      private:
	bool Only(const std::string &group) const;
	bool Named(const std::string &group) const;
	void Gpus();
	void Containers();
	void Lifecycle(const std::string &name, const std::string &mode, const std::string &tier,
		       const std::string &probes, const std::string &attach_min,
		       const std::string &gives, const std::string &seeded_exact,
		       const std::vector<std::string> &flags) const;
	void Clients(const std::string &tiers) const;
	void WithoutBtf();

	const ScenarioKeys &keys_;
	std::string scope_, series_, probes_;
	std::string preempts_; // the kernel's preemption model where it preempts programs
	std::string fifo_;     // "1": every process of the guest runs SCHED_FIFO 1
	std::string sim_args_; // the simulator's parameters at every load
	bool contexts_, xnack_chain_;
	std::string hws_, mes_, nohws_, mes12_, mes121_;
};

SimGuestRun::SimGuestRun(const ScenarioKeys &keys)
    : keys_(keys), scope_(keys.Get("scope")), probes_(keys.Get("probes"))
{
	const std::string label = KernelLabel();
	series_ = label.substr(0, label.find('-'));
	// What the kernel's amdkfd has, as the simulator was built for it
	// (run_sim_tier.sh, from the real module's BTF): "contexts" = secondary
	// KFD contexts (AMDKFD_IOC_CREATE_PROCESS, 7.2+); "xnack-chain" =
	// runlists of mixed XNACK modes chained on GPUs that ask for it
	// (gmc.xnack_flags, 6.16+ in Debian's kernels).
	std::vector<std::string> features;
	ReadLines(kSim + "/features", features);
	contexts_ = xnack_chain_ = false;
	for (const std::string &feature : features) {
		contexts_ |= feature == "contexts";
		xnack_chain_ |= feature == "xnack-chain";
	}
	if (contexts_)
		probes_ += " " + keys.Get("context-probes");
	const std::string model = PreemptModel();
	preempts_ = PreemptsPrograms(model) ? model : "";
	fifo_ = RunFifoWherePreempted(model) ? "1" : "0";
	sim_args_ = fifo_ == "1" ? "worker_fifo=1" : "";
}

// GROUP is in this guest's scope, and `only` is empty or names it.
bool SimGuestRun::Only(const std::string &group) const
{
	if ((scope_ == "programs" || scope_ == "nobtf") && group != scope_)
		return false;
	if (scope_ == "btf" && (group == "programs" || group == "nobtf"))
		return false;
	return keys_.Get("only").empty() || Named(group);
}

// `only` names GROUP (a group that runs only when asked for).
bool SimGuestRun::Named(const std::string &group) const
{
	return ("," + keys_.Get("only") + ",").find("," + group + ",") != std::string::npos;
}

// GPUs by topology node: 1 HWS, 2 MES (v11), 3 NO_HWS, 4 MES v12 (6.5+), 5
// GC 12.1's MES (7.2+); extra GPUs come after these.
void SimGuestRun::Gpus()
{
	hws_ = GpuOfNode(1);
	mes_ = GpuOfNode(2);
	nohws_ = GpuOfNode(3);
	mes12_ = GpuOfNode(4);
	if (mes12_.empty())
		mes12_ = mes_;
	mes121_ = mes12_;
	std::vector<std::string> properties;
	ReadLines(std::string(kTopology) + "/5/properties", properties);
	for (const std::string &line : properties)
		if (line == "gfx_target_version 120500")
			mes121_ = GpuOfNode(5);
	std::printf("GPUQ-INFO %s gpus hws=%s mes=%s nohws=%s mes12=%s mes12.1=%s\n", KernelLabel(),
		    hws_.c_str(), mes_.c_str(), nohws_.c_str(), mes12_.c_str(), mes121_.c_str());
	std::fflush(stdout);
}

bool SimGuestRun::Load()
{
	std::vector<std::string> insmod = { "insmod", kSim + "/amdgpu.ko" };
	const std::vector<std::string> parameters = Fields(sim_args_);
	insmod.insert(insmod.end(), parameters.begin(), parameters.end());
	const int rc = RunFor(insmod, "/tmp/insmod.txt", "", 120);
	Ktime("insmod-done");
	std::string nodes;
	for (const std::string &node : Entries(kTopology))
		nodes += node + " ";
	const bool kfd = KfdPresent();
	if (rc != 0 || !kfd || !Exists(kKfd + "/proc") || !HasModuleBtf() || !AmdgpuInKallsyms()) {
		Fail("insmod", "rc=" + std::to_string(rc) + " kfd " + (kfd ? "present" : "absent") +
				   " nodes '" + nodes + "' btf " +
				   (HasModuleBtf() ? "present" : "absent"));
		Dump("insmod", "/tmp/insmod.txt");
		return false;
	}
	Pass("insmod", "rc=0, /dev/kfd, " + kKfd + "/proc, topology nodes: " + nodes +
			   ", /sys/kernel/btf/amdgpu, kallsyms [amdgpu], workers FIFO while they "
			   "work: " +
			   FirstLine("/sys/module/amdgpu/parameters/worker_fifo"));
	// The BTF names the struct of the flavor built: kfd_node only in that one.
	const std::string flavor = FirstLine(kSim + "/flavor");
	const std::string btf = ReadText("/sys/kernel/btf/amdgpu");
	const std::string got = btf.find("kfd_node") != std::string::npos ? "kfd_node" : "kfd_dev";
	Verdict(got == flavor, "btf-flavor",
		got == flavor ? "module BTF is the " + flavor + " shape (" +
				    std::to_string(btf.size()) + " bytes)"
			      : "built as " + flavor + ", BTF looks like " + got);
	Gpus();
	RunFor({ "/bin/gpuq-agent", "--version" }, "/tmp/agent-version.txt", "", 60) == 0
	    ? Pass("agent-version", OneLine("/tmp/agent-version.txt"))
	    : Fail("agent-version", OneLine("/tmp/agent-version.txt"));
	Containers();
	return true;
}

// Two docker containers and the host, in the static input of every
// comparison (/tmp/static.in: cgroup v2 id = the kernfs inode number of the
// cgroup's directory; queue-type labels: the real module's enumerator
// names, kfd_sim_btf.h).
void SimGuestRun::Containers()
{
	mkdir("/sys/fs/cgroup/system.slice", 0755);
	mkdir(Cgroup(kIdA).c_str(), 0755);
	mkdir(Cgroup(kIdB).c_str(), 0755);
	WriteText("/tmp/static.in", QueueTypeLines() + CgroupLine("/sys/fs/cgroup", "-") +
					CgroupLine(Cgroup(kIdA), kIdA.substr(0, 12)) +
					CgroupLine(Cgroup(kIdB), kIdB.substr(0, 12)) + GpuLines());
	// earlier client runs' submissions (clients-scenario)
	WriteText("/tmp/drv.past", "");
}

// The hook-mode scenario NAME: MODE and TIER are the labels
// gpuq_probe_attached must carry for each of PROBES; GIVES the optional
// family groups the tier exports (docs/probe-tiers.md "What each tier
// gives"); SEEDED_EXACT 0: the tier cannot see the destroys and exits of
// what was seeded from sysfs.
void SimGuestRun::Lifecycle(const std::string &name, const std::string &mode,
			    const std::string &tier, const std::string &probes,
			    const std::string &attach_min, const std::string &gives,
			    const std::string &seeded_exact,
			    const std::vector<std::string> &flags) const
{
	std::vector<std::string> args = {
		"lifecycle",
		name,
		"mode=" + mode,
		"tier=" + tier,
		"probes=" + probes,
		"attach-min=" + attach_min,
		"gives=" + gives,
		"seeded-exact=" + seeded_exact,
		"cgroups=" + Cgroup(kIdA) + " " + Cgroup(kIdB) + " /sys/fs/cgroup",
		"gpus=" + hws_ + " " + mes_ + " " + nohws_ + " " + mes12_ + " " + mes121_,
		std::string("contexts=") + (contexts_ ? "1" : "0"),
		std::string("xnack-chain=") + (xnack_chain_ ? "1" : "0"),
		"series=" + series_,
		"--"
	};
	args.insert(args.end(), flags.begin(), flags.end());
	Scenario(args);
}

void SimGuestRun::Clients(const std::string &tiers) const
{
	Scenario({ "clients-scenario", "tiers=" + tiers, "clients=" + keys_.Get("clients"),
		   "fifo=" + fifo_, "probes=" + probes_, "tp-probes=" + keys_.Get("tp-probes") });
}

// nobtf/amdgpu.ko is the module with its .BTF section removed, so
// /sys/kernel/btf/amdgpu is absent. The agent runs with no tier flag: its
// planner must choose the argument-only kprobe tier by itself, and the
// tracepoint tier once kprobes are disarmed. Both against the same truth
// (docs/probe-tiers.md): the args bodies learn every identity from nested
// calls, the tracepoint tier decodes the ioctls from sys_enter/sys_exit.
// Then the forced skips: every other check runs where no program can be
// skipped; that one makes the kernel skip them, as on a user's host.
void SimGuestRun::WithoutBtf()
{
	const bool loaded = Reload(kSim + "/nobtf/amdgpu.ko", Fields(sim_args_), "/tmp/nobtf.txt");
	const bool kfd = KfdPresent();
	if (!loaded || HasModuleBtf() || !kfd || !AmdgpuInKallsyms()) {
		Fail("nobtf-reload",
		     std::string("rmmod and insmod ") + (loaded ? "worked" : "failed") + ", btf " +
			 (HasModuleBtf() ? "present" : "absent") + " kfd " +
			 (kfd ? "present" : "absent") + ": " + OneLine("/tmp/nobtf.txt"));
		return;
	}
	Pass("nobtf-reload", "simulator reloaded without .BTF: /sys/kernel/btf/amdgpu absent, "
			     "/dev/kfd and [amdgpu] kallsyms present");
	Gpus();
	std::string args_probes = probes_;
	if (contexts_)
		args_probes += " " + keys_.Get("args-context-probes");
	if (!Named("tracepoint")) {
		Lifecycle("args", "kprobe", "args-kprobe", args_probes, "4", "runlist eviction",
			  "0", {});
		Clients("args:args-kprobe tp:tracepoint");
	}
	const std::string enabled = "/sys/kernel/debug/kprobes/enabled";
	if (!WriteText(enabled, "0")) {
		Fail("kprobes-off", "cannot disarm kprobes (" + enabled + ")");
		return;
	}
	Pass("kprobes-off", "kprobes disarmed (" + enabled + " = 0)");
	Lifecycle("tracepoint", "tracepoint", "tracepoint", keys_.Get("tp-probes"), "2", "", "0",
		  {});
	Scenario({ "skips-scenario", "skips:forced", "gpu=" + hws_, "cgroup=" + Cgroup(kIdB) });
	WriteText(enabled, "1");
}

void SimGuestRun::Run()
{
	const std::string gpus2 = "gpus=" + hws_ + " " + mes_;
	const std::string cgroups = "cgroups=" + Cgroup(kIdA) + " " + Cgroup(kIdB);
	if (Only("clients"))
		Clients(":btf-fentry kprobe:btf-kprobe");
	if (Only("fentry"))
		Lifecycle("fentry", "fentry", "btf-fentry", probes_, "4",
			  "runlist eviction oversubscription", "1", {});
	if (Only("kprobe"))
		Lifecycle("kprobe", "kprobe", "btf-kprobe", probes_, "4",
			  "runlist eviction oversubscription", "1", { "--no-fentry" });
	// `record --container <A> -- COMMAND`, and a bare `record` until SIGINT
	if (Only("record"))
		Scenario({ "record-scenario", gpus2, cgroups,
			   "containers=" + kIdA.substr(0, 12) + " " + kIdB.substr(0, 12) });
	// two Kubernetes Job containers, recorded through the daemon's API
	if (Only("short-lived"))
		Scenario({ "short-lived-scenario", gpus2 });
	// 8 MI300X in CPX mode (64 KFD nodes), then 4 in DPX mode (8 nodes)
	if (Only("partitions"))
		for (const std::vector<std::string> &p : std::vector<std::vector<std::string>>{
			 { "partitions", "8", "64" }, { "partitions-dpx", "2", "8" } })
			Scenario({ "partitions-scenario", p[0], p[1], p[2],
				   "module=" + kSim + "/amdgpu.ko", "sim-args=" + sim_args_,
				   cgroups });
	Ktime("nobtf-start");
	if (Only("nobtf") || Named("tracepoint"))
		WithoutBtf();
	Ktime("nobtf-done");
	if (Only("programs"))
		Scenario({ "programs-scenario", "module=" + kSim + "/amdgpu.ko",
			   "sim-args=" + sim_args_, "fifo=" + fifo_, "infer=" + keys_.Get("infer"),
			   "preempts=" + preempts_, "probes=" + probes_,
			   "tp-probes=" + keys_.Get("tp-probes") });
	if (Named("bench"))
		Scenario({ "bench-hooks", "gpu=" + hws_, "cgroup=" + Cgroup(kIdA) });

	Dump("drivers", "/tmp/drivers.out");
	sim_check::Run("drivers-behaved", { "drivers", "/tmp/drivers.out", "/tmp/drv-errors.txt" });
	std::vector<std::string> truth;
	ReadLines("/sys/kernel/debug/kfd_sim/truth", truth);
	std::string text;
	for (const std::string &line : truth)
		text += "truth: " + line + "\n";
	WriteText("/tmp/truth.txt", text);
	Dump("truth", "/tmp/truth.txt");
}

int SimGuest(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0,
			{ "scope", "only", "clients", "infer", "probes", "context-probes",
			  "args-context-probes", "tp-probes" },
			error))
		return UsageError("sim-guest: " + error + "; " + kSimGuestUsage);
	const std::string scope = keys.Get("scope");
	if ((scope != "" && scope != "btf" && scope != "nobtf" && scope != "programs") ||
	    keys.Words("probes").empty() || keys.Words("tp-probes").empty())
		return UsageError(std::string("sim-guest ") + kSimGuestUsage);
	std::signal(SIGPIPE, SIG_IGN);
	SimGuestRun guest(keys);
	if (!guest.Load())
		return 1;
	guest.Run();
	return 0;
}

const Registration kSimGuest("sim-guest", kSimGuestUsage, SimGuest);

} // namespace
} // namespace sim_check

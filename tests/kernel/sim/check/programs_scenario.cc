// sim_check programs-scenario KEY=VALUE...: the users' workloads in
// containers, every probe tier at once. Real HIP programs (hip_client,
// GPUQ_HIP_CLIENT_HOLD=1: they hold their queues after their work until
// stdin ends, then exit without HIP's teardown), HIP 5.2.3 on the null thunk
// forwarding to /dev/kfd:
//  - infer (infer=1 only, GPUQ_KTEST_INFER on the host): an inference-like
//    run over 8 GPUs (infer 8 2 2: 2 streams per GPU; per iteration an H2D
//    copy, 3 kernels, a D2H copy and an event), the longest (209 s of CPU;
//    on a fast machine the guest took 143 s with it, 86 s without);
//  - lat and batch: the users' experiment, a latency-sensitive program at
//    100 Hz on HIP's greatest-priority stream beside a batch one fenced to
//    CUs 0-15, on an HWS GPU held to 2 CP queue slots (a runlist of more
//    than 2 compute queues is oversubscribed: HWS time-slices it);
//  - fitlat and fitbatch: its second run, at the same time, where the pair
//    fits (24 slots: the simulator's fits_gpu_id; 0.3 s each);
//  - lat72 and batch72: the first pair on the newest ROCm the guest has,
//    Debian's HIP 7.2.4 with its ROCr (chrooted in its root, shared over 9p,
//    on the KFD null GPU), the figures users of ROCm 7 get
//    (programs-<tier>:experiment-7.2; a SKIP saying why where the root is
//    missing).
// Four agents, one per tier, watch them at once, each with --doorbells=uprobe
// on Debian 12's libhsa-runtime64 and the HIP 7.2 root's; every tier is
// compared with the same truths (the simulator's and each thunk's), and the
// experiment is recorded as a user would (`record`, then `report` and a
// replay). The verdicts: programs:reload, programs:run, programs:report and
// programs-<tier>:<check> for each of check_plan.h's kProgramTiers and
// kProgramChecks.
//
//   module     the simulator's amdgpu.ko (reloaded with 9 more HWS GPUs)
//   sim-args   its parameters at every load (space-separated)
//   fifo       1: the guest runs its processes SCHED_FIFO (null_gpu.h)
//   infer      1: the inference run too
//   preempts   the kernel's preemption model where it preempts programs

//   probes     the lifecycle probes every function tier attaches;
//              tp-probes the tracepoint tier's
#include "check_plan.h"
#include "command.h"
#include "guest_process.h"
#include "lines.h"
#include "null_gpu.h"
#include "scenario_keys.h"
#include "scrape.h"
#include "sim_module.h"
#include "tier_agents.h"
#include "truth_checks.h"
#include "verdict.h"

#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

const char *const kProgramsUsage =
    "module=KO sim-args=\"P=V...\" fifo=0|1 infer=0|1 preempts=MODEL "
    "probes=\"P...\" tp-probes=\"P...\"";

const std::string kHip72 = "/share/hip-7.2";

struct Program {
	std::string name;
	std::string id; // its container's id (the agent labels it by the first 12)
	std::vector<std::string> args;
	NullGpuRun run;
	pid_t pid = -1;
	int hold = -1; // the write end of its stdin: closing it ends its hold

	std::string Short() const
	{
		return id.substr(0, 12);
	}
	std::string Out() const
	{
		return "/tmp/p-" + name + ".out";
	}
	bool Held() const
	{
		std::vector<std::string> lines;
		ReadLines(Out(), lines);
		return !StartingWith(lines, "HOLD").empty();
	}
};

std::string Repeat(const std::string &pair)
{
	std::string id;
	while (id.size() < 64)
		id += pair;
	return id;
}

// Why the HIP 7.2 pair cannot run here ("" when it can).
std::string Hip72Missing()
{
	const std::string missing = MissingReason({ "rocm-7.2-missing", "hip-7.2-missing" });
	if (!missing.empty())
		return missing;
	if (access((kHip72 + "/mnt/hip_client").c_str(), X_OK) != 0)
		return "no HIP 7.2 root with hip_client at " + kHip72 +
		       " (run_sim_tier.sh's build_hip_stacks)";
	return "";
}

class ProgramsScenarioRun
{
      public:
	explicit ProgramsScenarioRun(const ScenarioKeys &keys)
	    : keys_(keys), agents_(keys.Words("probes"), keys.Words("tp-probes"))
	{
	}
	void Run();

      private:
	bool ReloadWithMoreGpus();
	void Add(const std::string &name, const std::string &pair, int node,
		 std::vector<std::string> args, const std::string &root = "");
	void StartPrograms();
	double AwaitHolds();
	void AccountCpu();
	void RunVerdict(double elapsed);
	void Truths(bool exited);
	void Live(TierAgent &member);
	void Experiment(TierAgent &member, TruthChecks &truth);
	void Doorbells(TierAgent &member);
	void Report();
	void EndHolds();
	std::string Id(const std::string &name) const;

	const ScenarioKeys &keys_;
	TierAgents agents_;
	std::vector<Program> programs_;
	std::string missing72_;
	int nodes_ = 0;
	std::string pair_gpu_, fits_gpu_, pair72_gpu_;
	pid_t recorder_ = -1;
};

std::string ProgramsScenarioRun::Id(const std::string &name) const
{
	for (const Program &p : programs_)
		if (p.name == name)
			return p.Short();
	return "-";
}

void ProgramsScenarioRun::Add(const std::string &name, const std::string &pair, int node,
			      std::vector<std::string> args, const std::string &root)
{
	Program p;
	p.name = name;
	p.id = Repeat(pair);
	p.args = std::move(args);
	p.run.cgroup = "/sys/fs/cgroup/system.slice/docker-" + p.id + ".scope";
	p.run.control = "/tmp/ngctl-" + name;
	p.run.truth = "/tmp/ng-" + name + ".truth";
	p.run.gpus = node > 0 ? "1xgfx90a" : "8xgfx90a";
	p.run.root = root;
	p.run.fifo = keys_.Get("fifo") == "1";
	if (node > 0) {
		p.run.nodes = std::to_string(node);
	} else {
		// node 1 (HWS), node 2 (MES) and 6 of the 8 added last
		p.run.nodes = "1,2";
		for (int n = nodes_ - 8; n <= nodes_ - 3; ++n)
			p.run.nodes += "," + std::to_string(n);
	}
	programs_.push_back(std::move(p));
}

// The BTF module with 9 more HWS GPUs: 6 of them and the first two for the
// inference run, the last for the pair, the one before for the pair that
// fits, the one before that for the HIP 7.2 pair; 2 CP queue slots per HWS
// GPU but the second pair's.
bool ProgramsScenarioRun::ReloadWithMoreGpus()
{
	std::vector<std::string> parameters = keys_.Words("sim-args");
	parameters.insert(parameters.end(), { "extra_hws_gpus=9", "cp_queue_slots=2" });
	const bool loaded = Reload(keys_.Get("module"), parameters, "/tmp/prog-mod.txt");
	nodes_ = GpuNodes();
	if (!loaded || !HasModuleBtf() || nodes_ < 12) {
		Fail("programs:reload", std::string("rc=") + (loaded ? "0" : "non-zero") + ", " +
					    std::to_string(nodes_) + " GPU nodes, btf " +
					    (HasModuleBtf() ? "present" : "absent") + ": " +
					    OneLine("/tmp/prog-mod.txt"));
		return false;
	}
	pair_gpu_ = GpuOfNode(nodes_);
	fits_gpu_ = GpuOfNode(nodes_ - 1);
	pair72_gpu_ = GpuOfNode(nodes_ - 2);
	if (!WriteText("/sys/module/amdgpu/parameters/fits_gpu_id", fits_gpu_)) {
		Fail("programs:reload", "cannot set the simulator's fits_gpu_id to " + fits_gpu_);
		return false;
	}
	return true;
}

void ProgramsScenarioRun::StartPrograms()
{
	// The programs' stdin pipes are close-on-exec: only this process holds
	// their write ends, so each hold ends when its own is closed.
	for (Program &p : programs_) {
		int ends[2];
		if (pipe2(ends, O_CLOEXEC) != 0)
			continue;
		mkdir(p.run.cgroup.c_str(), 0755);
		std::vector<std::string> argv = { p.run.root.empty() ? "/bin/hip_client"
								     : "/mnt/hip_client" };
		argv.insert(argv.end(), p.args.begin(), p.args.end());
		p.pid = StartOnNullGpu(p.run, { "GPUQ_HIP_CLIENT_HOLD=1" }, argv, ends[0], p.Out());
		close(ends[0]);
		p.hold = ends[1];
	}
}

// Until every program holds its queues or has died: the seconds it took.
// 174 s (6.1) and 244 s (7.3) with the null CP's idle back-off
// (tests/nullgpu/cp_idle.h); the limit is for a hung program, not a slow
// host. 849 s on 7.3 from a clean clone (about 40 s of system time per
// program, much of it its null CP's polling; a khugepaged RCU stall in the
// same guest): 1200 s, which with the agents' start and the checks after it
// stays within the guest's 1800 s.
double ProgramsScenarioRun::AwaitHolds()
{
	const double t0 = Uptime();
	while (Uptime() - t0 < 1200) {
		bool waiting = false;
		for (const Program &p : programs_)
			waiting |= !p.Held() && Running(p.pid);
		if (!waiting)
			break;
		Nap(0.2);
	}
	return Uptime() - t0;
}

// Where the guest's one CPU went while the programs ran (the phase is the
// tier's longest): CPU seconds of each agent and program, and the kernel's.
void ProgramsScenarioRun::AccountCpu()
{
	std::string text;
	auto account = [&text](const std::string &who, pid_t pid) {
		const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
		const size_t close = stat.rfind(") ");
		if (close == std::string::npos)
			return;
		const std::vector<std::string> f = Fields(stat.substr(close + 2));
		if (f.size() < 13)
			return;
		char line[256];
		std::snprintf(line, sizeof(line), "%s %.1f s user %.1f s system\n", who.c_str(),
			      std::atof(f[11].c_str()) / 100, std::atof(f[12].c_str()) / 100);
		text += line;
	};
	for (TierAgent &member : agents_.All())
		account("agent-" + member.tier, member.agent->Pid());
	for (const Program &p : programs_)
		account("prog-" + p.name, p.pid);
	std::vector<std::string> lines;
	ReadLines("/proc/stat", lines);
	for (const std::string &line : StartingWith(lines, "cpu ")) {
		const std::vector<std::string> f = Fields(line);
		char total[256];
		std::snprintf(total, sizeof(total), "guest user %.1f s system %.1f s idle %.1f s\n",
			      std::atof(f[1].c_str()) / 100, std::atof(f[3].c_str()) / 100,
			      std::atof(f[4].c_str()) / 100);
		text += total;
	}
	WriteText("/tmp/prog-cpu.txt", text);
	Dump("programs-cpu", "/tmp/prog-cpu.txt");
}

// Why a program never held (programs-run): where the threads of one still
// running wait, or how one that died ended and what the kernel said of it.
void ProgramsScenarioRun::RunVerdict(double elapsed)
{
	std::vector<std::string> args = { "programs:run", Number(elapsed) };
	RunFor({ "dmesg" }, "/tmp/prog-dmesg.txt", "/dev/null", 30);
	std::vector<std::string> dmesg;
	ReadLines("/tmp/prog-dmesg.txt", dmesg);
	for (Program &p : programs_) {
		const std::string threads = "/tmp/p-" + p.name + ".threads";
		const std::string status = "/tmp/p-" + p.name + ".status";
		unlink(threads.c_str());
		unlink(status.c_str());
		if (p.Held()) {
		} else if (Running(p.pid)) {
			WriteText(threads, Threads(p.pid));
			Dump("programs-" + p.name + "-threads", threads);
		} else {
			const std::string pid = std::to_string(p.pid);
			std::vector<std::string> said;
			for (const std::string &line : dmesg)
				if (line.find("[" + pid + "]") != std::string::npos ||
				    line.find("illed process " + pid + " ") != std::string::npos)
					said.push_back(line);
			if (said.size() > 2)
				said.erase(said.begin(), said.end() - 2);
			WriteText(status, std::to_string(Reap(p.pid)) + " " + pid + " " +
					      Join(said, " ") + "\n");
		}
		args.insert(args.end(), { p.name, p.Short(), p.Out(), threads, status });
	}
	if (!sim_check::Run("programs-run", args))
		for (const Program &p : programs_)
			Dump("programs-" + p.name, p.Out());
}

// Every program's thunk truth as truth lines (kThunkLines), its
// submissions (and while they run their pending packets) as the simulator
// side's driver truth (/tmp/drv.truth).
void ProgramsScenarioRun::Truths(bool exited)
{
	WriteText(kThunkLines, "");
	for (const Program &p : programs_) {
		if (!exited)
			DumpThunk(p.run);
		AppendThunkLines(p.run, exited, kThunkLines);
	}
	std::vector<std::string> lines, driver;
	ReadLines(kThunkLines, lines);
	for (const std::string &line : lines)
		if (StartsWith(line, "submit") || (!exited && StartsWith(line, "pending")))
			driver.push_back(line);
	WriteText("/tmp/drv.truth", Join(driver, "\n") + (driver.empty() ? "" : "\n"));
}

// The users' experiment as TIER's agent sees it, the HIP 7.2 pair's too
// (programs-experiment), after one comparison of every family the tier has
// (the lifecycle too: a record lost to a skipped program shows there) with
// the simulator's truth.
void ProgramsScenarioRun::Experiment(TierAgent &member, TruthChecks &truth)
{
	const bool runlist = member.tier != "tracepoint";
	const bool oversubscription = member.tier == "btf-fentry" || member.tier == "btf-kprobe";
	std::string families =
	    std::string(kLifecycleFamilies) + " gpuq_queues_by_priority gpuq_queues_cu_masked";
	if (runlist)
		families += std::string(" ") + kRunlistFamilies;
	if (oversubscription)
		families += std::string(" ") + kOversubscriptionFamilies;
	const std::string gives = oversubscription ? "runlist oversubscription"
				  : runlist	   ? "runlist"
						   : "";
	unlink("/tmp/truth.txt");
	if (!truth.Converge(families))
		WriteText("/tmp/truth.txt", ReadText(kSimTruth));
	const std::string check = member.group + ":experiment";
	if (sim_check::Run(
		"programs-experiment",
		{ check, check + "-7.2", kMetrics, "/tmp/cmp.out", "families=" + families,
		  "gives=" + gives, "pair=" + pair_gpu_, "fits=" + fits_gpu_,
		  "pair72=" + pair72_gpu_, "lat=" + Id("lat"), "batch=" + Id("batch"),
		  "fitlat=" + Id("fitlat"), "lat72=" + Id("lat72"), "batch72=" + Id("batch72"),
		  "missing72=" + missing72_, "hip72=" + FirstLine(kHip72 + "/mnt/hip-version"),
		  "rocr72=" + FirstLine(kHip72 + "/mnt/rocr-version") }))
		return;
	for (const std::string &log :
	     { std::string("/tmp/cmp.out"), std::string("/tmp/truth.txt"), std::string(kMetrics),
	       std::string("/tmp/ng-lat72.truth"), std::string("/tmp/ng-batch72.truth") })
		Dump(check, log);
}

// Each program's doorbells and dispatches per container and GPU against its
// thunk (programs-doorbells), scraped again for up to 30 s until exact.
void ProgramsScenarioRun::Doorbells(TierAgent &member)
{
	const std::string check = member.group + ":doorbells";
	std::vector<std::string> args = { check, kMetrics, "preempts=" + keys_.Get("preempts") };
	for (const Program &p : programs_) {
		const std::string want = "/tmp/want-" + p.name;
		RunFor({ "/proc/self/exe", "client-sums", p.run.truth }, want, "/dev/null", 60);
		args.insert(args.end(), { p.name, p.Short(), p.Out(), want });
	}
	std::vector<std::string> quiet = args;
	quiet.insert(quiet.begin(), "--quiet");
	const double t0 = Uptime();
	while (member.agent->Scrape(), !sim_check::Run("programs-doorbells", quiet)) {
		if (Uptime() - t0 >= 30)
			break;
		Nap(0.3);
	}
	if (sim_check::Run("programs-doorbells", args))
		return;
	std::vector<std::string> lines, shown;
	ReadLines(kMetrics, lines);
	for (const std::string &line : lines)
		if (StartsWith(line, "gpuq_doorbell") || StartsWith(line, "gpuq_events_dropped"))
			shown.push_back(line);
	WriteText("/tmp/db.txt", Join(shown, "\n") + "\n");
	WriteText("/tmp/db-threads.txt", Threads(member.agent->Pid()));
	Dump(check, "/tmp/db.txt");
	for (const Program &p : programs_)
		Dump(check, "/tmp/want-" + p.name);
	Dump(check, "/tmp/db-threads.txt");
}

// One agent's checks while the programs hold their queues.
void ProgramsScenarioRun::Live(TierAgent &member)
{
	TruthChecks truth(*member.agent, member.tier);
	const std::string families = std::string(kLifecycleFamilies) + " " + kSubmissionFamilies;
	truth.ExpectBoth(member.group + ":live", families, families, "");
	Experiment(member, truth);
	Doorbells(member);
	Ktime("checked-" + member.group);
}

// The experiment's capture (`record`, stopped while the programs hold)
// through `report` and replayed, against the btf-fentry agent and the
// simulator's truth (programs-report).
void ProgramsScenarioRun::Report()
{
	const int rc = Interrupt(recorder_);
	Dump("programs-record", "/tmp/exp-rec.log");
	const int report_rc = RunFor({ "/bin/gpuq-agent", "report", "/tmp/exp.cap" },
				     "/tmp/exp.txt", "/tmp/exp.err", 120);
	RunFor({ "/bin/gpuq-agent", "--once", "-o", "prometheus", "--replay", "/tmp/exp.cap" },
	       "/tmp/exp.prom", "/tmp/exp-once.err", 120);
	GuestAgent fentry(TierPort("btf-fentry"), 4);
	const TruthChecks truth(fentry, "btf-fentry");
	fentry.Scrape();
	const std::string lat = Id("lat");
	truth.CompareOnce("gpuq_queue_preemptions_total gpuq_queue_preempted_seconds_total",
			  "/tmp/exp.prom", lat);
	if (sim_check::Run("programs-report",
			   { "programs:report", std::to_string(rc), std::to_string(report_rc), lat,
			     kMetrics, "/tmp/exp.prom", "/tmp/exp.txt", "/tmp/cmp.out",
			     "/tmp/exp.cap" }))
		return;
	for (const char *log : { "/tmp/exp.txt", "/tmp/exp.err", "/tmp/exp-once.err",
				 "/tmp/exp.prom", "/tmp/cmp.out" })
		Dump("programs:report", log);
}

// The hold ends: each program exits with its queues, and KFD tears them
// down (its worker removes proc/<pid> last), up to 60 s for them all.
void ProgramsScenarioRun::EndHolds()
{
	for (Program &p : programs_)
		if (p.hold >= 0)
			close(p.hold);
	const double t0 = Uptime();
	for (const Program &p : programs_)
		while ((Running(p.pid) ||
			Exists("/sys/class/kfd/kfd/proc/" + std::to_string(p.pid))) &&
		       Uptime() - t0 < 60)
			Nap(0.05);
}

void ProgramsScenarioRun::Run()
{
	Ktime("programs-start");
	if (!ReloadWithMoreGpus())
		return;
	missing72_ = Hip72Missing();
	if (keys_.Get("infer") == "1")
		Add("infer", "1a", 0, { "infer", "8", "2", "2" });
	Add("lat", "b1", nodes_, { "latency", "0", "100", "1500", "high" });
	Add("batch", "c0", nodes_, { "batch", "0", "1500", "0x0000ffff" });
	Add("fitlat", "d0", nodes_ - 1, { "latency", "0", "100", "300", "high" });
	Add("fitbatch", "e0", nodes_ - 1, { "batch", "0", "300" });
	if (missing72_.empty()) {
		Add("lat72", "f0", nodes_ - 2, { "latency", "0", "100", "1500", "high" },
		    "hip-7.2");
		Add("batch72", "a0", nodes_ - 2, { "batch", "0", "1500", "0x0000ffff" }, "hip-7.2");
	}
	Pass("programs:reload",
	     "simulator reloaded with BTF, extra_hws_gpus=9 and cp_queue_slots=2: " +
		 std::to_string(nodes_) + " GPUs;" +
		 (programs_[0].name == "infer"
		      ? " inference on nodes " + programs_[0].run.nodes + " (HWS and MES),"
		      : "") +
		 " the pair on node " + std::to_string(nodes_) + " (HWS, gpu_id " + pair_gpu_ +
		 "), the pair that fits on node " + std::to_string(nodes_ - 1) + " (gpu_id " +
		 fits_gpu_ + ", 24 CP queue slots)" +
		 (missing72_.empty() ? ", the HIP 7.2 pair on node " + std::to_string(nodes_ - 2) +
					   " (gpu_id " + pair72_gpu_ + ")"
				     : ""));
	std::string statics = QueueTypeLines() + CgroupLine("/sys/fs/cgroup", "-");
	for (const Program &p : programs_) {
		mkdir(p.run.cgroup.c_str(), 0755);
		statics += CgroupLine(p.run.cgroup, p.Short());
	}
	WriteText("/tmp/static.in", statics + GpuLines());
	WriteText("/tmp/drv.truth", "");

	// Sampling every 500 ms: the programs hold before anything is
	// compared, so a faster rate would only take the one vCPU from the
	// programs' start (four agents read every live queue at each tick).
	// Four agents load at once: up to 240 s.
	std::vector<std::string> flags = { "--sample-interval", "500ms", "--doorbells=uprobe",
					   "--hsa-runtime", kDebianRocr };
	char root_rocr[PATH_MAX];
	if (missing72_.empty() && realpath((kHip72 + kDebianRocr).c_str(), root_rocr) != nullptr)
		flags.insert(flags.end(), { "--hsa-runtime", root_rocr });
	std::vector<std::string> groups;
	for (const std::string &tier : kProgramTiers)
		groups.push_back("programs-" + tier);
	agents_.Start(flags, groups, kProgramTiers, 240);
	Ktime("programs-agents-up");

	// The experiment recorded as a user would, for Report.
	unlink("/tmp/exp.cap");
	SpawnOptions record;
	record.output = "/tmp/exp-rec.log";
	recorder_ = Spawn(
	    { "/bin/gpuq-agent", "record", "-o", "/tmp/exp.cap", "--no-runtime-lookup" }, record);
	// the capture exists once its programs are attached
	const double t0 = Uptime();
	while (!Exists("/tmp/exp.cap") && Running(recorder_) && Uptime() - t0 < 240)
		Nap(0.1);

	StartPrograms();
	const double elapsed = AwaitHolds();
	Ktime("programs-held");
	AccountCpu();
	RunVerdict(elapsed);

	Truths(false);
	for (TierAgent *member : agents_.Present())
		Live(*member);
	Report();
	Ktime("programs-reported");

	EndHolds();
	Ktime("programs-exited");
	Truths(true);
	const std::string families = std::string(kLifecycleFamilies) + " " + kSubmissionFamilies;
	for (TierAgent *member : agents_.Present()) {
		TruthChecks(*member->agent, member->tier)
		    .ExpectBoth(member->group + ":teardown", families, families, "");
		Dump(member->group + "-metrics", kMetrics);
	}
	for (const Program &p : programs_) {
		Dump("programs-" + p.name, p.Out());
		Dump("programs-" + p.name, p.run.truth);
	}
	agents_.Stop();
	Ktime("programs-done");
}

int ProgramsScenario(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(
		args, 0,
		{ "module", "sim-args", "fifo", "infer", "preempts", "probes", "tp-probes" },
		error))
		return UsageError("programs-scenario: " + error + "; " + kProgramsUsage);
	if (keys.Get("module").empty() || keys.Words("probes").empty() ||
	    keys.Words("tp-probes").empty())
		return UsageError(std::string("programs-scenario ") + kProgramsUsage);
	std::signal(SIGPIPE, SIG_IGN);
	const std::string why = MissingReason({ "missing", "hip-missing" });
	if (!why.empty()) {
		for (const char *check : { "reload", "run", "report" })
			Skip(std::string("programs:") + check, why);
		for (const std::string &tier : kProgramTiers)
			for (const std::string &check : kProgramChecks)
				Skip("programs-" + tier + ":" + check, why);
		return 0;
	}
	ProgramsScenarioRun(keys).Run();
	return 0;
}

const Registration kProgramsScenario("programs-scenario", kProgramsUsage, ProgramsScenario);

} // namespace
} // namespace sim_check

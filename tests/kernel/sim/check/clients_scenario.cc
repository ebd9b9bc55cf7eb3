// sim_check clients-scenario KEY=VALUE...: Debian's real ROCr and HIP on the
// null GPU, every client run of a guest under the same agents, one per probe
// tier the guest checks (the btf guest's btf-fentry and btf-kprobe, the nobtf
// guest's args-kprobe and tracepoint), each on its tier's port with
// --doorbells=uprobe on every ROCr the runs map (--hsa-runtime, repeatable),
// started before the first run and stopped after the last: a user's agent
// while containers with their own ROCm come and go. (Two agents started per
// run cost 28-66 s of TCG time a run, 7 runs a guest.)
//
// The runs (NAME:STACK; no STACK: Debian 12's ROCm 5.2.3): Debian 12's ROCr
// and HIP 5.2.3 on the null thunk (libhsakmt.so.1 of tests/nullgpu)
// forwarding every queue create and destroy to /dev/kfd (null GPU 0 on KFD
// node 1, HWS; GPU 1 on node 2, MES), then the ROCm stacks users run in 2026
// (run_sim_tier.sh's ROCM_STACKS, listed in /lib/nullgpu/rocm-stacks):
// Debian's ROCr 6.4.3 and 7.2.4, whose queues the KFD null GPU forwards,
// their HIP (6.4.3, 7.2.4) and rocBLAS (6.4.4), each chrooted in its root
// shared over 9p. The null CP consumes the packets in user space.
//   rocr     rocr_client (tests/nullgpu/rocr_client.c): the HSA API itself,
//            hsa_queue_create, AQL packets, hsa_signal_store_screlease
//   hip      hip_client serve (tests/nullgpu/hip_client.cc, Debian's hipcc):
//            HIP streams, kernel launches and copies; HIP puts its streams
//            on the hardware queues of its own pool and rings through ROCr's
//            exported hsa_signal_store_screlease
//   rocblas  rocblas_client serve: rocBLAS 6.4.4's sgemm on one stream
// Each run has a container of its own: the run's thunk truth is compared
// with that container's series alone, the simulator's truth with every
// series since the agents started, the submissions of earlier runs'
// containers taken from their thunks (/tmp/drv.past). A run's groups are
// NAME[-STACK] in btf-fentry and NAME[-STACK]-SUFFIX in the others; the
// agents' own, "clients" and "clients-SUFFIX". The rocr run of the btf guest
// adds the least-privilege agents (least_privilege_agents.h), and the
// btf-fentry agent serves the GPU_MAX_HW_QUEUES experiment after the last
// run (max_hw_queues_scenario.h).
//
//   tiers      the guest's SUFFIX:TIER pairs (":btf-fentry kprobe:btf-kprobe")
//   clients    the groups this guest runs (GPUQ_CLIENTS; "": every one)
//   fifo       1: the guest runs its processes SCHED_FIFO (null_gpu.h)
//   probes     the lifecycle probes every function tier attaches;
//              tp-probes the tracepoint tier's
#include "check_plan.h"
#include "command.h"
#include "guest_process.h"
#include "least_privilege_agents.h"
#include "lines.h"
#include "max_hw_queues_scenario.h"
#include "null_gpu.h"
#include "scenario_keys.h"
#include "scrape.h"
#include "sim_driver.h"
#include "sim_module.h"
#include "tier_agents.h"
#include "truth_checks.h"
#include "verdict.h"

#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

const char *const kClientsUsage =
    "tiers=\"SUFFIX:TIER...\" clients=\"G,...\" fifo=0|1 probes=\"P...\" "
    "tp-probes=\"P...\"";

const std::string kClientTruth = "/tmp/ng.truth";
const std::string kClientControl = "/tmp/ngctl";

// A container id of 64 hex digits for NAME: FNV-1a, four times seeded.
std::string ContainerId(const std::string &name)
{
	std::string id;
	for (unsigned seed = 0; seed < 4; ++seed) {
		unsigned long long h = 1469598103934665603ULL ^ seed;
		for (unsigned char c : name) {
			h ^= c;
			h *= 1099511628211ULL;
		}
		char part[17];
		std::snprintf(part, sizeof(part), "%016llx", h);
		id += part;
	}
	return id;
}

struct ClientRun {
	std::string name;  // rocr, hip, rocblas
	std::string stack; // "": Debian 12's ROCm 5.2.3

	std::string Base() const
	{
		return name + (stack.empty() ? "" : "-" + stack);
	}
	// The ROCr its client maps: Debian 12's, or that ROCm stack's (a shared
	// root's: the file its symlink names, as /proc/PID/maps shows it).
	std::string Runtime() const
	{
		if (stack.empty())
			return kDebianRocr;
		if (name == "rocr")
			return "/rocm/" + stack + "/lib/libhsa-runtime64.so.1";
		char path[PATH_MAX];
		const std::string link = "/share/" + name + "-" + stack + kDebianRocr;
		return realpath(link.c_str(), path) ? path : link;
	}
};

// An agent's part in one run: its group, and the runs' agent.
struct Member {
	std::string group;
	TierAgent *agent;
};

class ClientsRun
{
      public:
	explicit ClientsRun(const ScenarioKeys &keys);
	void Run();

      private:
	bool On(const std::string &group) const;
	std::string Group(const std::string &base, const std::string &suffix) const;
	bool StartAgents();
	void RunClient(const ClientRun &run);
	bool Skipped(const ClientRun &run, const std::vector<Member> &members) const;
	std::vector<Member> Present(const std::vector<Member> &members) const;
	void Container(const std::string &lead);
	pid_t StartClient(const ClientRun &run, int input);
	void Steps(const ClientRun &run, SimDriver &client, const std::vector<Member> &members);
	void StepChecks(SimDriver &client, const std::vector<Member> &members,
			const std::vector<std::string> &pending,
			const std::vector<std::string> &drain);
	void CheckThunk(const std::string &check, const std::string &families,
			const std::vector<Member> &members);
	bool PausedCp(const std::vector<Member> &members);
	void Doorbells(const ClientRun &run, const std::vector<Member> &members);
	void Past();

	const ScenarioKeys &keys_;
	std::vector<std::string> suffixes_, tiers_;
	std::vector<ClientRun> runs_;
	TierAgents agents_;
	NullGpuRun client_;	// the running client's null GPU
	std::string container_; // its container, as the agent labels it
};

ClientsRun::ClientsRun(const ScenarioKeys &keys)
    : keys_(keys), agents_(keys.Words("probes"), keys.Words("tp-probes"))
{
	for (const std::string &pair : keys.Words("tiers")) {
		const size_t colon = pair.find(':');
		suffixes_.push_back(pair.substr(0, colon));
		tiers_.push_back(colon == std::string::npos ? "" : pair.substr(colon + 1));
	}
	std::vector<std::string> stacks;
	std::vector<std::string> lines;
	if (ReadLines(kNullGpuDir + "rocm-stacks", lines))
		for (const std::string &line : lines)
			for (const std::string &stack : Fields(line))
				stacks.push_back(stack);
	runs_ = { { "rocr", "" }, { "hip", "" } };
	for (const std::string &stack : stacks)
		runs_.push_back({ "rocr", stack });
	for (const std::string &stack : stacks)
		runs_.push_back({ "hip", stack });
	runs_.push_back({ "rocblas", "6.4" });
	client_.control = kClientControl;
	client_.truth = kClientTruth;
	client_.gpus = "2xgfx90a";
	client_.nodes = "1,2";
	client_.fifo = keys.Get("fifo") == "1";
}

bool ClientsRun::On(const std::string &group) const
{
	const std::string clients = keys_.Get("clients");
	return clients.empty() ||
	       ("," + clients + ",").find("," + group + ",") != std::string::npos;
}

std::string ClientsRun::Group(const std::string &base, const std::string &suffix) const
{
	return suffix.empty() ? base : base + "-" + suffix;
}

// The runs' agents, in the tiers where any client group runs, with
// --hsa-runtime on the ROCr file of each run that has one: false when none
// runs.
bool ClientsRun::StartAgents()
{
	std::vector<std::string> runtimes;
	for (const ClientRun &run : runs_) {
		const std::string file = run.Runtime();
		struct stat st;
		if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		bool seen = false;
		for (const std::string &r : runtimes)
			seen |= r == file;
		if (!seen)
			runtimes.push_back(file);
	}
	std::vector<std::string> groups, tiers;
	for (size_t i = 0; i < tiers_.size(); ++i) {
		bool any = false;
		for (const ClientRun &run : runs_)
			any |= On(Group(run.Base(), suffixes_[i]));
		if (!any)
			continue;
		groups.push_back(Group("clients", suffixes_[i]));
		tiers.push_back(tiers_[i]);
	}
	if (groups.empty())
		return false;
	// Its --container-grace outlasts the guest's runs: the simulator's
	// truth keeps every run's container, and the default 300 s removed the
	// first runs' series before the last run's checks (seen on 7.3); the
	// grace itself is the unit tier's (retire_test.cc). --recording.dir:
	// max_hw_queues records through the btf-fentry agent.
	std::vector<std::string> flags = { "--sample-interval", "100ms", "--doorbells=uprobe",
					   "--container-grace", "3600s", "--recording.dir",
					   "/tmp/recs-clients" };
	for (const std::string &runtime : runtimes)
		flags.insert(flags.end(), { "--hsa-runtime", runtime });
	Ktime("clients-start");
	agents_.Start(flags, groups, tiers, 180);
	Ktime("clients-ready");
	return true;
}

std::vector<Member> ClientsRun::Present(const std::vector<Member> &members) const
{
	std::vector<Member> present;
	for (const Member &m : members)
		if (m.agent->left.empty())
			present.push_back(m);
	return present;
}

// The run's checks skipped with the reason a missing part left
// (/lib/nullgpu/*-missing): true when one did.
bool ClientsRun::Skipped(const ClientRun &run, const std::vector<Member> &members) const
{
	std::vector<std::string> markers = { "missing", run.name + "-missing" };
	if (!run.stack.empty()) {
		markers = { "rocm-" + run.stack + "-missing" };
		if (run.name != "rocr")
			markers.push_back(run.Base() + "-missing");
	}
	const std::string why = MissingReason(markers);
	if (why.empty())
		return false;
	for (const Member &m : Present(members)) {
		std::vector<std::string> checks = ClientChecks(run.name);
		if (m.group == "rocr")
			checks.insert(checks.end(), { "least-privilege", "no-ptrace" });
		for (const std::string &check : checks)
			Skip(m.group + ":" + check, why);
	}
	return true;
}

// Container A for this run: a docker cgroup of its own, its id from the
// run's lead group, in /tmp/static.in for sim_compare. It stays (no
// --container-grace expiry while the agents run).
void ClientsRun::Container(const std::string &lead)
{
	const std::string id = ContainerId("run " + lead);
	client_.cgroup = "/sys/fs/cgroup/system.slice/docker-" + id + ".scope";
	container_ = id.substr(0, 12);
	mkdir(client_.cgroup.c_str(), 0755);
	AppendText("/tmp/static.in", CgroupLine(client_.cgroup, container_));
}

// NAME's client in the run's container, its stdin INPUT: Debian 12's on the
// null thunk, a ROCm stack's ROCr through the stack's loader, or a stack's
// HIP or rocBLAS chrooted in its root.
pid_t ClientsRun::StartClient(const ClientRun &run, int input)
{
	client_.root.clear();
	client_.stack.clear();
	std::vector<std::string> argv;
	if (run.stack.empty()) {
		client_.gpus = "2xgfx90a";
		argv = { run.name == "rocr" ? "/bin/rocr_client" : "/bin/hip_client" };
	} else if (run.name == "rocr") {
		client_.gpus = "2";
		client_.stack = run.stack;
		argv = { "/rocm/" + run.stack + "/bin/rocr_client" };
	} else {
		client_.gpus = "2";
		client_.root = run.Base();
		argv = { "/mnt/" + run.name + "_client" };
	}
	if (run.name != "rocr")
		argv.push_back("serve");
	return StartOnNullGpu(client_, {}, argv, input, "/tmp/" + run.name + ".out");
}

// The thunk's truth now (the container alive), its submissions and pending
// packets as the simulator's driver truth; FAMILIES against both, for each
// agent of the run (its group's CHECK).
void ClientsRun::CheckThunk(const std::string &check, const std::string &families,
			    const std::vector<Member> &members)
{
	DumpThunk(client_);
	WriteText(kThunkLines, "");
	AppendThunkLines(client_, false, kThunkLines);
	std::vector<std::string> lines, driver;
	ReadLines(kThunkLines, lines);
	for (const std::string &line : lines)
		if (StartsWith(line, "submit") || StartsWith(line, "pending"))
			driver.push_back(line);
	WriteText("/tmp/drv.truth", Join(driver, "\n") + (driver.empty() ? "" : "\n"));
	for (const Member &m : Present(members))
		TruthChecks(*m.agent->agent, m.agent->tier)
		    .ExpectBoth(m.group + ":" + check, families, families, container_);
}

// Pauses the null CP: false (CHECK pending failed for every agent of the
// run) unless the thunk's next dump says paused=1.
bool ClientsRun::PausedCp(const std::vector<Member> &members)
{
	WriteText(client_.control + "/pause", "");
	DumpThunk(client_);
	const std::string first = OneLine(client_.truth);
	if (ReadText(client_.truth).find("paused=1") != std::string::npos)
		return true;
	for (const Member &m : Present(members))
		Fail(m.group + ":pending", "the null CP did not report paused: " + first);
	return false;
}

// After a client's steps, its queues, creates and submissions; then the
// PENDING steps with the null CP paused (their packets stay pending), and
// the DRAIN steps once it runs again.
void ClientsRun::StepChecks(SimDriver &client, const std::vector<Member> &members,
			    const std::vector<std::string> &pending,
			    const std::vector<std::string> &drain)
{
	CheckThunk("queues", "gpuq_queues gpuq_processes", members);
	CheckThunk("creates", "gpuq_queue_creates_total", members);
	CheckThunk("submissions", kSubmissionFamilies, members);
	if (PausedCp(members)) {
		for (const std::string &step : pending)
			client.Do(step);
		CheckThunk("pending", kSubmissionFamilies, members);
	}
	unlink((client_.control + "/pause").c_str());
	for (const std::string &step : drain)
		client.Do(step);
	CheckThunk("drained", kSubmissionFamilies, members);
}

// The client's queues and packets, verdicts by every agent of the run after
// each step (the CP paused on the way: the packets written stay pending).
void ClientsRun::Steps(const ClientRun &run, SimDriver &client, const std::vector<Member> &members)
{
	if (run.name == "rocr") {
		// two client queues on GPU 0 (HWS), one on GPU 1 (MES); ROCr adds
		// its utility queue
		for (const char *step : { "queue r1 0 128", "queue r2 1 256", "queue r3 0 128",
					  "submit r1 40", "submit r2 25 barrier", "submit r3 10",
					  // as HIP 7 replays a graph: batches of 32 slots, one ring
					  // each (4 rings)
					  "batch r3 100 32 mixed",
					  // as CLR launches on gfx1250: AMD's extended kernel
					  // dispatch packets (VENDOR_SPECIFIC, AmdFormat 3), every
					  // 4th a barrier (3 rings)
					  "batch r3 60 20 ext" })
			client.Do(step);
		StepChecks(client, members,
			   { "submit r1 30 nowait", "submit r2 12 barrier nowait" },
			   { "drain r1", "drain r2" });
	} else if (run.name == "hip") {
		// HIP 5.2.3 gives a device's first stream a hardware queue of its
		// pool (and the next ones up to GPU_MAX_HW_QUEUES, 4); with
		// HSA_ENABLE_SDMA=0 the copies run as ROCr's blit kernels on its own
		// utility queue. Every packet on HIP's queues (launches, and the
		// barrier of a stream sync) is one ring. HIP 6.4.3 and 7.2.4 run the
		// same steps; HIP 7 rings once per batch of a graph's packets (its
		// value the batch's last index), so there rings are fewer than
		// packets and the doorbells check counts packets.
		for (const char *step :
		     { "stream h1 0", "stream h2 1", "stream h3 0", "launch h1 40", "launch h2 25",
		       "launch h3 10", "copy h1" })
			client.Do(step);
		// a graph launched twice: HIP 7 submits it in batches, one ring each
		// (the doorbells check counts their packets), so 7.2.4's has 300
		// nodes; the older HIPs ring once per packet, and 30 nodes show
		// their graphs as well with 540 fewer rings for every agent's uprobes
		client.Do(run.stack == "7.2" ? "graph h3 300 2" : "graph h3 30 2");
		for (const char *step : { "wait h1", "wait h2", "wait h3" })
			client.Do(step);
		StepChecks(client, members, { "launch h1 30", "launch h2 12" },
			   { "wait h1", "wait h2" });
	} else {
		// rocBLAS 6.4.4's sgemm on one stream of GPU 0 (its Tensile kernels
		// loaded from the root's code objects for gfx90a; the null CP runs
		// no kernel code)
		client.Do("sgemm 256 20");
		client.Do("wait");
		StepChecks(client, members, { "sgemm 128 5" }, { "wait" });
	}
}

// Each agent's doorbell figures for the client against what it rang (its
// truth dumped), scraped again until they pass or 30 s pass.
void ClientsRun::Doorbells(const ClientRun &run, const std::vector<Member> &members)
{
	const std::string out = "/tmp/" + run.name + ".out";
	for (const Member &m : Present(members)) {
		const std::string check = m.group + ":doorbells";
		const double t0 = Uptime();
		for (;;) {
			m.agent->agent->Scrape();
			RunFor({ "/proc/self/exe", "client-doorbells", m.group, run.name,
				 run.Runtime(), container_, kMetrics, client_.truth, out,
				 kTopology },
			       "/tmp/db.out", "", 60);
			const std::string said = ReadText("/tmp/db.out");
			if (said.find(" " + check + " PASS") != std::string::npos ||
			    Uptime() - t0 >= 30)
				break;
			Nap(0.3);
		}
		const std::string said = ReadText("/tmp/db.out");
		std::fputs(said.c_str(), stdout);
		std::fflush(stdout);
		if (said.empty() || said.find(" " + check + " FAIL") != std::string::npos) {
			std::vector<std::string> lines, shown;
			ReadLines(kMetrics, lines);
			for (const std::string &line : lines)
				if (StartsWith(line, "gpuq_doorbell") ||
				    StartsWith(line, "gpuq_probe_attached"))
					shown.push_back(line);
			WriteText("/tmp/db.txt", Join(shown, "\n") + "\n");
			Dump(m.group + "-doorbells", "/tmp/db.txt");
			Dump(m.group + "-doorbells", out);
		}
	}
}

// The submissions of the run's container, its client gone (the thunk's
// final truth), move to /tmp/drv.past for the runs after.
void ClientsRun::Past()
{
	if (!ReadText(client_.truth).empty()) {
		const std::string lines = "/tmp/past.lines";
		WriteText(lines, "");
		AppendThunkLines(client_, true, lines);
		std::vector<std::string> all, submits;
		ReadLines(lines, all);
		for (const std::string &line : all)
			if (StartsWith(line, "submit"))
				submits.push_back(line);
		if (!submits.empty())
			AppendText("/tmp/drv.past", Join(submits, "\n") + "\n");
	}
	WriteText("/tmp/drv.truth", "");
}

// NAME's client (STACK's, if set) in a container of its own, under the
// runs' agents: each group's checks for the agent in its tier, those the
// guest runs; the first group leads (its timing marks; rocr's adds the
// least-privilege agents).
void ClientsRun::RunClient(const ClientRun &run)
{
	std::vector<Member> members;
	std::string lead;
	for (TierAgent &agent : agents_.All())
		for (size_t i = 0; i < tiers_.size(); ++i) {
			const std::string group = Group(run.Base(), suffixes_[i]);
			if (agent.tier != tiers_[i] || !On(group))
				continue;
			members.push_back({ group, &agent });
		}
	for (size_t i = 0; i < tiers_.size() && lead.empty(); ++i)
		if (On(Group(run.Base(), suffixes_[i])))
			lead = Group(run.Base(), suffixes_[i]);
	if (lead.empty() || members.empty())
		return;
	for (const Member &m : members)
		if (!m.agent->left.empty())
			Fail(m.group + ":start",
			     "its agent left the runs before: " + m.agent->left);
	if (Skipped(run, members) || Present(members).empty())
		return;
	Ktime(lead + "-start");
	Container(lead);
	WriteText("/tmp/drv.truth", "");
	std::unique_ptr<LeastPrivilegeAgents> least;
	if (lead == "rocr")
		least = std::make_unique<LeastPrivilegeAgents>(keys_.Words("tp-probes"));
	// each agent still serves /metrics with its lifecycle probes attached,
	// or this run's start check fails and it leaves
	for (const Member &m : Present(members)) {
		if (!m.agent->agent->Scrape()) {
			Fail(m.group + ":start", "the agent no longer serves /metrics");
			agents_.Drop(*m.agent, "it stopped serving /metrics (before the run of " +
						   m.group + ")");
			continue;
		}
		const std::string absent = agents_.Absent(m.agent->tier);
		if (absent.empty())
			continue;
		Fail(m.group + ":start",
		     "lifecycle probes no longer attached in tier " + m.agent->tier + ":" + absent);
		agents_.Drop(*m.agent, "lifecycle probes no longer attached in tier " +
					   m.agent->tier + ":" + absent + " (before the run of " +
					   m.group + ")");
	}
	if (Present(members).empty())
		return;

	// The client: its READY (hsa_init under TCG takes seconds; HIP also
	// loads LLVM through comgr) within 180 s.
	const std::string out = "/tmp/" + run.name + ".out";
	// the last run's output (its READY) must not be read as this one's
	unlink(out.c_str());
	int ends[2];
	if (pipe2(ends, O_CLOEXEC) != 0)
		return;
	const pid_t started = StartClient(run, ends[0]);
	close(ends[0]);
	const double t0 = Uptime();
	std::string ready;
	for (;;) {
		std::vector<std::string> lines;
		ReadLines(out, lines);
		const std::vector<std::string> said = StartingWith(lines, "READY");
		if (!said.empty()) {
			const std::vector<std::string> f = Fields(said[0]);
			ready = f.size() > 1 ? f[1] : "";
			break;
		}
		if (!StartingWith(lines, "BAD").empty() || !Running(started) ||
		    Uptime() - t0 >= 180)
			break;
		Nap(0.1);
	}
	SimDriver client(run.name, started, ends[1]);
	const int failures = Failures();
	const std::string pid = ready.empty() ? "-" : ready;
	for (const Member &m : Present(members))
		sim_check::Run("client-start",
			       { m.group, m.agent->tier, m.agent->agent->Up(),
				 std::to_string(m.agent->doorbells), run.name,
				 run.stack.empty() ? "-" : run.stack, pid, container_,
				 run.Runtime(), "/proc/" + pid + "/maps", out, "/rocm" });
	if (ready.empty()) {
		Dump(lead, out);
		client.Exit();
		return;
	}
	if (Failures() != failures) {
		client.Exit();
		Past();
		return;
	}
	Ktime(lead + "-ready");
	Steps(run, client, members);
	if (least) {
		least->Check(run.name);
		least.reset();
	}

	// doorbells: what the client rang, then each agent's figures
	client.Do("truth");
	Doorbells(run, members);

	const std::string families = std::string(kLifecycleFamilies) + " " + kSubmissionFamilies;
	if (run.name == "rocr") {
		// hsa_queue_destroy: an ioctl destroy
		client.Do("destroy r2");
		CheckThunk("destroys", families, members);
	}

	// The process exits without hsa_shut_down: KFD tears it down (its
	// kworker), every gauge back to zero, the counters stay. rocr_client
	// writes 7 packets on r1 right before it exits: only the exit read
	// (bpf/exit_read.bpf.h; exit_group in the tracepoint tier) can count
	// them, the sampler never sees them.
	client.Exit(run.name == "rocr" ? "submit r1 7 nowait" : "");
	WriteText(kThunkLines, "");
	AppendThunkLines(client_, true, kThunkLines);
	std::vector<std::string> lines, submits;
	ReadLines(kThunkLines, lines);
	for (const std::string &line : lines)
		if (StartsWith(line, "submit"))
			submits.push_back(line);
	WriteText("/tmp/drv.truth", Join(submits, "\n") + (submits.empty() ? "" : "\n"));
	// after the exit, each agent's families against both truths, the
	// container's gauges at zero
	for (const Member &m : Present(members)) {
		TruthChecks(*m.agent->agent, m.agent->tier)
		    .ExpectBoth(m.group + ":teardown", families, families, container_);
		sim_check::Run("client-teardown", { m.group, kMetrics, container_ });
		Dump(m.group + "-metrics", kMetrics);
	}
	Past();
	Dump(lead + "-thunk", client_.truth);
	// the client did every command as expected and exited, and each agent
	// serves on for the next run
	for (const Member &m : Present(members)) {
		const bool serves = Scrape(TierPort(m.agent->tier), "/tmp/alive.prom");
		sim_check::Run("client-stops", { m.group, run.name, serves ? "yes" : "no", out });
	}
	Ktime(lead + "-done");
}

void ClientsRun::Run()
{
	WriteText("/tmp/drv.past", "");
	if (!StartAgents())
		return;
	for (const ClientRun &run : runs_)
		RunClient(run);
	// through the btf-fentry agent, where it watched the runs
	for (const TierAgent *agent : agents_.Present())
		if (agent->tier == "btf-fentry")
			MaxHwQueues(TierPort("btf-fentry"), client_.fifo);
	agents_.Stop();
	WriteText("/tmp/drv.past", "");
}

int ClientsScenario(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0, { "tiers", "clients", "fifo", "probes", "tp-probes" }, error))
		return UsageError("clients-scenario: " + error + "; " + kClientsUsage);
	if (keys.Words("tiers").empty() || keys.Words("probes").empty() ||
	    keys.Words("tp-probes").empty())
		return UsageError(std::string("clients-scenario ") + kClientsUsage);
	for (const std::string &pair : keys.Words("tiers"))
		if (pair.find(':') == std::string::npos)
			return UsageError("clients-scenario: " + pair + " is no SUFFIX:TIER");
	std::signal(SIGPIPE, SIG_IGN);
	ClientsRun(keys).Run();
	return 0;
}

const Registration kClientsScenario("clients-scenario", kClientsUsage, ClientsScenario);

} // namespace
} // namespace sim_check

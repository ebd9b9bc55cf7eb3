// sim_check lifecycle NAME KEY=VALUE... -- FLAGS...: one probe tier's whole
// scenario against the simulator, with the agent's daemon started with
// FLAGS: driver processes in three cgroups (two docker-style containers and
// the host) create, update, mask and destroy queues, exit with queues
// alive, slow and hang the runlist, oversubscribe it, are evicted and
// submit packets; the agent is killed and restarted mid-run (seeded from
// sysfs) and `--once` seeds the same; every family the tier exports is
// compared with the simulator's truth, and every family it does not give
// must have no series. Its verdicts are NAME:<check> lines (verdict.h).
//
//   mode, tier     the labels gpuq_probe_attached carries (fentry btf-fentry)
//   probes         the lifecycle probes that must be attached
//   attach-min     how many probes attached make the agent up
//   gives          the optional family groups the tier exports (runlist
//                  eviction oversubscription; docs/probe-tiers.md): a group
//                  it does not give must have no series, never a zero
//   seeded-exact   1: the tier sees the destroys and exits of what was
//                  seeded from sysfs; 0: the second half starts fresh
//   gpus           the simulator's GPU ids: HWS MES NO_HWS MES12 MES12.1
//   cgroups        the two containers' cgroup directories and the host's
//   contexts       1: amdkfd has secondary KFD contexts (7.2+)
//   xnack-chain    1: amdkfd chains runlists of mixed XNACK modes (6.16+)
//   series         the kernel series (queue-type numbering)
#include "command.h"
#include "guest_agent.h"
#include "guest_process.h"
#include "lines.h"
#include "scenario_keys.h"
#include "sim_driver.h"
#include "sim_module.h"
#include "truth_checks.h"
#include "verdict.h"

#include <csignal>
#include <memory>
#include <sys/stat.h>

namespace sim_check
{
namespace
{

const char *const kLifecycleUsage =
    "NAME mode=M tier=T probes=P attach-min=N gives=G seeded-exact=0|1 "
    "gpus=\"HWS MES NOHWS MES12 MES121\" cgroups=\"A B HOST\" "
    "contexts=0|1 xnack-chain=0|1 series=S -- FLAGS...";

const std::string kRunlist = kRunlistFamilies;
const std::string kEviction =
    "gpuq_evictions_total gpuq_eviction_restores_total gpuq_evicted_processes "
    "gpuq_queues_evicted";
const std::string kOversubscription = kOversubscriptionFamilies;
const std::string kSubmission = kSubmissionFamilies;
// The simulator's writable parameters (the limits a runlist is held to).
const std::string kSimParameters = "/sys/module/amdgpu/parameters/";
const std::string kKfdSysfs = "/sys/class/kfd/kfd";

struct Mode {
	std::string name;
	ScenarioKeys keys;
	std::string g_hws, g_mes, g_nohws, g_mes12, g_mes121;
	std::string cg_a, cg_b, cg_host;

	const std::string &Key(const std::string &key) const
	{
		return keys.Get(key);
	}
	// the daemon's flags, after "--"
	const std::vector<std::string> &Flags() const
	{
		return keys.Flags();
	}
	bool Gives(const std::string &group) const
	{
		for (const std::string &given : Fields(Key("gives")))
			if (given == group)
				return true;
		return false;
	}
	std::string Check(const std::string &what) const
	{
		return name + ":" + what;
	}
};

void SetParameter(const std::string &name, const std::string &value)
{
	WriteText(kSimParameters + name, value + "\n");
}

// The drivers' submissions (driver-truth) into /tmp/drv.truth.
void CheckDriverTruth(const SimDriver &driver, const std::string &cgroup)
{
	RunFor({ "/proc/self/exe", "driver-truth", driver.Output(), CgroupId(cgroup), "a6", "a7",
		 "g1" },
	       "/tmp/drv.truth", "/dev/null", 60);
}

// Three processes in three cgroups, one exiting with its queues; CU masks,
// GWS, priorities; a secondary KFD context where amdkfd has them.
void Queues(const Mode &s, const TruthChecks &truth, SimDriver &d1, SimDriver &d3)
{
	const std::string &m = s.name;
	SimDriver d2("d2", s.cg_b);
	// a1 at queue priority 15 (amdkfd's high pipe priority), b1 and c1 at 0
	// (low), the rest at ROCr's default 7 (medium)
	d1.Do("create a1 " + s.g_hws + " aql 100 0 15");
	d1.Do("create a2 " + s.g_hws + " sdma");
	d1.Do("create a3 " + s.g_mes + " aql");
	d1.Do("create a4 " + s.g_nohws + " pm4");
	d1.Do("createfail 4660");
	d2.Do("create b1 " + s.g_hws + " aql 100 0 0");
	d2.Do("create b2 " + s.g_mes + " sdma");
	d2.Do("create b3 " + s.g_mes12 + " aql");
	d2.Do("create b4 " + s.g_nohws + " sdma_xgmi");
	d3.Do("create c1 " + s.g_nohws + " aql 100 0 0");
	d3.Do("create c2 " + s.g_hws + " sdma");
	d1.Do("destroy a2");
	d2.Exit();
	if (s.Key("contexts") == "1") {
		// 7.2+: d3 (the host) opens a secondary KFD context beside its
		// primary one. Its queue ids start at 0 again (the primary's c1,
		// c2 are 0 and 1), and its MES queue sits on GC 12.1's MES.
		d3.Do("context");
		d3.Do("create x1 " + s.g_mes121 + " aql");
		d3.Do("create x2 " + s.g_nohws + " sdma_xgmi");
		d3.Do("primary");
	}
	Ktime(m + "-lifecycle");
	Run("sysfs-inventory", { s.Check("sysfs-inventory"), kKfdSysfs, kSimTruth });
	truth.ExpectTruth(s.Check("queues"),
			  "gpuq_queues gpuq_queues_by_priority gpuq_queues_by_requested_priority");
	// Priority updates by AMDKFD_IOC_UPDATE_QUEUE: a3 (MES) from 7 (medium)
	// to 15 (high), c1 (NO_HWS) from 0 (low) to 9 (medium); the gauge
	// follows (before the restart below: queues found in sysfs have no
	// priority to compare; d2 has exited already).
	d1.Do("update a3 100 15");
	d3.Do("update c1 100 9");
	truth.ExpectTruth(s.Check("priority-update"),
			  "gpuq_queues_by_priority gpuq_queues_by_requested_priority");
	// CU masks by AMDKFD_IOC_SET_CU_MASK, judged against the 104 active CUs
	// every simulated GPU has (simd_count 416 / simd_per_cu 4): a1 (HWS)
	// CUs 0-15 (restricted); c1 (NO_HWS) exactly CUs 0-103 (all_cus); a3
	// (MES, WGPs: CUs in pairs) all but CUs 48-49 (restricted), then 128
	// bits all set (all_cus: the set replaces the class). The set's HWS
	// unmap/map and MES remove/add are the update path's (cause update):
	// where the tier gives them, the runlist families are compared too.
	// Failing sets change nothing: num_cu_mask 0 on c1, CU 0 without CU 1
	// on a3 (EINVAL: its GPU has WGPs), a queue id d1 does not have
	// (EFAULT, as amdkfd's pqm_update_mqd). The masks are compared only
	// here: a restarted agent cannot know those of the queues it finds in
	// sysfs.
	d1.Do("cumask a1 0x0000ffff");
	d3.Do("cumask c1 0xffffffff 0xffffffff 0xffffffff 0x000000ff");
	d1.Do("cumask a3 0xffffffff 0xfffcffff 0xffffffff 0x000000ff");
	d1.Do("cumask a3 0xffffffff 0xffffffff 0xffffffff 0xffffffff");
	d3.Do("cumaskfail c1 22");
	d1.Do("cumaskfail a3 22 0x00000001");
	d1.Do("cumaskfail 999 14 0x0000ffff");
	truth.ExpectTruth(s.Check("cu-mask"),
			  "gpuq_queues_cu_masked" + (s.Gives("runlist") ? " " + kRunlist : ""));
	// GWS by AMDKFD_IOC_ALLOC_QUEUE_GWS (ROCr's hsaKmtAllocQueueGWS, for
	// cooperative launches): a1 (HWS) and a3 (MES) are given the GWS (one
	// queue per process and GPU may hold it); each runs the dqm's
	// update_queue, whose HWS unmap/map and MES remove/add are cause update
	// (the op_gws hook: without it they would have no cause). The GWS
	// queues the HWS runlist holds are gpuq_runlist_entries' gws_queues
	// (BTF tiers).
	if (s.Gives("runlist")) {
		d1.Do("gws a1 1");
		d1.Do("gws a3 1");
		truth.ExpectTruth(s.Check("gws"),
				  kRunlist +
				      (s.Gives("oversubscription") ? " gpuq_runlist_entries" : ""));
	}
	truth.ExpectTruth(s.Check("processes"), "gpuq_processes");
	truth.ExpectTruth(s.Check("creates"), "gpuq_queue_creates_total");
	truth.ExpectTruth(s.Check("destroys"), "gpuq_queue_destroys_total");
	truth.ExpectTruth(s.Check("exits"), "gpuq_process_exits_total");
	truth.ExpectTruth(s.Check("create-failures"), "gpuq_queue_create_failures_total");
	truth.LabelsCheck(s.Check("queue-type-labels"), s.Key("series"));
	if (s.Key("contexts") == "1") {
		// the context's file is closed: amdkfd tears it down at once, in d3
		WriteText("/tmp/context.truth", ReadText(kSimTruth));
		d3.Do("closecontext");
		truth.ExpectTruth(s.Check("context-teardown"),
				  kLifecycleFamilies + (s.Gives("runlist") ? " " + kRunlist : ""));
		Run("context-close", { s.Check("context"), "/tmp/context.truth", kSimTruth });
	}
}

// The agent is killed; the simulator goes on; --once and a new daemon must
// seed what they missed from sysfs.
void Restart(const Mode &s, GuestAgent &agent, const TruthChecks &truth, SimDriver &d1,
	     SimDriver &d3)
{
	const std::string &m = s.name;
	agent.Kill();
	d1.Do("create a5 " + s.g_mes + " sdma");
	d1.Do("destroy a1");
	d3.Do("create c3 " + s.g_hws + " aql");
	Ktime(m + "-once-start");
	WriteText("/tmp/base.truth", ReadText(kSimTruth));
	std::vector<std::string> once = { "/bin/gpuq-agent",	"--once",     "-o",
					  "prometheus",		"--interval", "1s",
					  "--no-runtime-lookup" };
	once.insert(once.end(), s.Flags().begin(), s.Flags().end());
	const int rc = RunFor(once, "/tmp/once.prom", "/tmp/once.err", 180);
	if (rc == 0)
		truth.CompareOnce("gpuq_queues gpuq_processes", "/tmp/once.prom");
	if (!Run("once-seeded", { s.Check("once"), std::to_string(rc), "/tmp/cmp.out" }))
		for (const char *log : { "/tmp/once.err", "/tmp/cmp.out", "/tmp/once.prom" })
			Dump(m + "-once", log);
	Ktime(m + "-restart");
	agent.Start(m, s.Flags());
	if (agent.Up().empty()) {
		Fail(s.Check("restart-seeded"), "the restarted agent never served /metrics");
		return;
	}
	truth.ExpectTruth(s.Check("restart-seeded"), kLifecycleFamilies);
}

void Runlist(const Mode &s, const TruthChecks &truth, SimDriver &d1)
{
	// Slow unmaps and maps, one that times out (-ETIME: the HWS hang), MES
	// remove + add, all from update ioctls.
	d1.Do("runlist " + s.g_hws + " 20000 10000 0");
	d1.Do("update a6 50");
	d1.Do("update a6 100");
	d1.Do("runlist " + s.g_hws + " 0 0 1");
	d1.Do("update a6 80");
	d1.Do("runlist " + s.g_hws + " 0 0 0");
	d1.Do("update a6 100");
	d1.Do("update a5 50");
	// A create whose runlist update hangs fails with ETIME; its queue is
	// freed in the creating thread, which is not a destroy.
	d1.Do("runlist " + s.g_hws + " 0 0 1");
	d1.Do("createfail " + s.g_hws + " 62");
	d1.Do("runlist " + s.g_hws + " 0 0 0");
	if (!s.Gives("runlist")) {
		truth.ExpectAbsent(s.Check("runlist"), kRunlist);
		truth.ExpectTruth(s.Check("runlist-lifecycle"),
				  "gpuq_queue_create_failures_total gpuq_queue_destroys_total");
		return;
	}
	truth.ExpectExported(s.Check("runlist"),
			     kRunlist +
				 " gpuq_queue_create_failures_total gpuq_queue_destroys_total",
			     "KERNEL runlist hooks, MODEL export");
	if (!Run("runlist-durations", { s.Check("runlist-durations"), kSimTruth, "/tmp/base.truth",
					kMetrics, s.g_hws })) {
		std::vector<std::string> lines, durations;
		ReadLines(kMetrics, lines);
		for (const std::string &line : lines)
			if (line.find("duration_seconds") != std::string::npos)
				durations.push_back(line);
		WriteText("/tmp/durations.txt", Join(durations, "\n") + "\n");
		Dump(s.Check("runlist-durations"), "/tmp/durations.txt");
	}
}

void Oversubscription(const Mode &s, const TruthChecks &truth, SimDriver &d1)
{
	// The HWS GPU's limits lowered (the simulator reads its parameters at
	// each map, amdkfd its device's at init): a second compute queue of d1
	// beyond 1 CP queue slot, then a second process beyond 1 process per
	// quantum; d6's exit and a11's destroy bring the runlist back within
	// them; the defaults again at a6's update.
	SetParameter("cp_queue_slots", "1");
	d1.Do("create a11 " + s.g_hws + " aql");
	SetParameter("hws_max_conc_proc", "1");
	{
		SimDriver d6("d6", s.cg_b);
		d6.Do("create f1 " + s.g_hws + " aql");
		d6.Exit();
	}
	d1.Do("destroy a11");
	SetParameter("cp_queue_slots", "24");
	SetParameter("hws_max_conc_proc", "8");
	d1.Do("update a6 100");
	// Then XNACK modes mixed on a GPU that chains on them (6.16+): d7 turns
	// XNACK on before its first queue, beside d1 (off) on the HWS GPU, and
	// exits; where amdkfd has no such test the runlist fits.
	SetParameter("xnack_chain", "1");
	{
		SimDriver d7("d7", s.cg_b);
		d7.Do("xnack 1");
		d7.Do("create x1 " + s.g_hws + " aql");
		d7.Exit();
	}
	SetParameter("xnack_chain", "0");
	if (!s.Gives("oversubscription")) {
		truth.ExpectAbsent(s.Check("oversubscription"), kOversubscription);
		return;
	}
	truth.ExpectTruth(s.Check("oversubscription"), kOversubscription);
	Run("xnack-conflicts", { s.Check("oversubscription-xnack"), kSimTruth, "/tmp/base.truth",
				 kMetrics, s.Key("xnack-chain") });
}

void Evictions(const Mode &s, const TruthChecks &truth, SimDriver &d1)
{
	// Nested TTM + userptr then two restores (one transition each way per
	// GPU); then an SVM eviction from another process, left in place until
	// d1 exits.
	d1.Do("evict 0 2");
	d1.Do("evict 0 1");
	d1.Do("restore 0");
	d1.Do("restore 0");
	{
		SimDriver d5("d5", s.cg_host);
		d5.Do("evict " + std::to_string(d1.Pid()) + " 0");
		d5.Exit();
	}
	if (!s.Gives("eviction")) {
		truth.ExpectAbsent(s.Check("evictions"), kEviction);
		return;
	}
	truth.ExpectExported(s.Check("evictions"), kEviction,
			     "KERNEL eviction hooks, MODEL export");
	Run("evicted-queues", { s.Check("evicted-queues"), kSimTruth });
}

void Submissions(const Mode &s, const TruthChecks &truth, SimDriver &d1)
{
	// AQL queues in ROCr's layout, one starting at index 1000, one (g1)
	// whose amd_queue_t is in simulated GTT mapped VM_IO | VM_PFNMAP, as
	// ROCr >= 6.2 places it on MES GPUs: process_vm_readv cannot read it
	// (EFAULT), the sampler reads it again from /proc/<pid>/mem.
	d1.Do("create a7 " + s.g_mes + " aql 100 1000");
	d1.Do("create g1 " + s.g_mes + " aql 100 0 7 gtt");
	d1.Do("submit a6 100");
	d1.Do("complete a6 60");
	d1.Do("submit a7 50");
	d1.Do("submit g1 30");
	d1.Do("complete g1 12");
	d1.Do("truth");
	CheckDriverTruth(d1, s.cg_a);
	truth.ExpectExported(s.Check("submissions"), kSubmission,
			     "SAMPLER (--sample-interval), MODEL export");
	Run("gtt-queue",
	    { s.Check("gtt-queue"), d1.Output(), "/proc/" + std::to_string(d1.Pid()) + "/smaps" });
}

void RunScenario(const Mode &s, GuestAgent &agent)
{
	const std::string &m = s.name;
	const TruthChecks truth(agent, s.Key("tier"));
	std::vector<std::string> attached = { s.Check("attached"), kMetrics, s.Key("mode"),
					      s.Key("tier") };
	for (const std::string &probe : Fields(s.Key("probes")))
		attached.push_back(probe);
	Run("mode-attached", attached);

	WriteText("/tmp/drv.truth", "");
	auto d1 = std::make_unique<SimDriver>("d1", s.cg_a);
	SimDriver d3("d3", s.cg_host);
	Queues(s, truth, *d1, d3);
	Restart(s, agent, truth, *d1, d3);
	// Seeded queues leave by ioctl and by exit teardown; new ones arrive.
	d1->Do("destroy a3");
	d1->Do("create a6 " + s.g_hws + " aql");
	d3.Exit();
	if (s.Key("seeded-exact") == "1") {
		truth.ExpectTruth(s.Check("after-restart"), kLifecycleFamilies);
	} else {
		// The BTF-free tiers see a seeded queue's destroy and a seeded
		// process's exit only through reconciliation (docs/probe-tiers.md,
		// "What differs"): the gauges, creates and failures stay exact.
		truth.ExpectTruth(s.Check("after-restart"),
				  "gpuq_queues gpuq_processes gpuq_queue_creates_total "
				  "gpuq_queue_create_failures_total");
		// From here on every process is one this agent saw create (the
		// tiers learn a process's GPUs from its creates): d1 starts again,
		// with a queue on each GPU, under a new agent.
		agent.Stop();
		d1->Exit();
		agent.Start(m, s.Flags());
		if (agent.Up().empty())
			Fail(s.Check("fresh-start"),
			     "the agent started for the fresh half never served /metrics");
		d1 = std::make_unique<SimDriver>("d1", s.cg_a);
		d1->Do("create a5 " + s.g_mes + " sdma");
		d1->Do("create a6 " + s.g_hws + " aql");
		d1->Do("create a8 " + s.g_nohws + " aql");
		if (s.g_mes12 != s.g_mes)
			d1->Do("create a9 " + s.g_mes12 + " aql");
		if (s.g_mes121 != s.g_mes12)
			d1->Do("create a10 " + s.g_mes121 + " aql");
		truth.ExpectTruth(s.Check("fresh-start"), kLifecycleFamilies);
	}

	// A burst of creates and destroys: every series exact.
	{
		SimDriver d4("d4", s.cg_b);
		Ktime(m + "-burst-start");
		d4.Do("burst " + s.g_nohws + " 2000");
		d4.Do("burst " + s.g_mes + " 1000");
		d4.Do("burst " + s.g_hws + " 1000");
		Ktime(m + "-burst-done");
		d4.Exit();
	}
	truth.ExpectTruth(s.Check("burst"), kLifecycleFamilies);

	Runlist(s, truth, *d1);
	Oversubscription(s, truth, *d1);
	Evictions(s, truth, *d1);
	Submissions(s, truth, *d1);

	// The last process exits (evicted, with queues): nothing left, every
	// exported family still equal; pending packets of dead queues are gone.
	d1->Exit();
	{
		std::vector<std::string> lines;
		ReadLines("/tmp/drv.truth", lines);
		const std::vector<std::string> submits = StartingWith(lines, "submit ");
		WriteText("/tmp/drv.truth", submits.empty() ? "" : Join(submits, "\n") + "\n");
	}
	agent.Scrape();
	std::string families = kLifecycleFamilies;
	std::string optional = kSubmission;
	if (s.Gives("runlist"))
		optional += " " + kRunlist;
	if (s.Gives("eviction"))
		optional += " " + kEviction;
	for (const std::string &family : Fields(optional))
		if (truth.Missing(family).empty())
			families += " " + family;
	truth.ExpectTruth(s.Check("final"), families);
	Dump(m + "-metrics", kMetrics);
}

int LifecycleCommand(const std::vector<std::string> &args)
{
	Mode s;
	if (args.empty())
		return UsageError(std::string("lifecycle ") + kLifecycleUsage);
	s.name = args[0];
	std::string error;
	if (!s.keys.Parse(args, 1,
			  { "mode", "tier", "probes", "attach-min", "gives", "seeded-exact", "gpus",
			    "cgroups", "contexts", "xnack-chain", "series" },
			  error))
		return UsageError("lifecycle: " + error + "; " + kLifecycleUsage);
	const std::vector<std::string> gpus = Fields(s.Key("gpus"));
	const std::vector<std::string> cgroups = Fields(s.Key("cgroups"));
	const int attach_min = std::atoi(s.Key("attach-min").c_str());
	if (gpus.size() != 5 || cgroups.size() != 3 || attach_min <= 0)
		return UsageError("lifecycle: gpus= takes 5 ids, cgroups= 3 directories, "
				  "attach-min= a count");
	s.g_hws = gpus[0], s.g_mes = gpus[1], s.g_nohws = gpus[2], s.g_mes12 = gpus[3],
	s.g_mes121 = gpus[4];
	s.cg_a = cgroups[0], s.cg_b = cgroups[1], s.cg_host = cgroups[2];
	// A write to a driver that has exited must not end the scenario.
	std::signal(SIGPIPE, SIG_IGN);

	Ktime(s.name + "-start");
	GuestAgent agent(9464, attach_min);
	agent.Start(s.name, s.Flags());
	if (agent.Up().empty()) {
		Fail(s.Check("serves"),
		     std::string("no /metrics with the lifecycle probes attached "
				 "(alive: ") +
			 (Running(agent.Pid()) ? "yes" : "no") + ")");
		Dump(s.name, "/tmp/agent-" + s.name + ".out");
		Dump(s.name, kMetrics);
		agent.Stop();
		return 0;
	}
	Pass(s.Check("serves"), "/metrics with probes attached after " + agent.Up() + "s");
	RunScenario(s, agent);
	Run("agent-stop", { s.Check("stops"), agent.Stop() });
	Dump(s.name, "/tmp/agent-" + s.name + ".out");
	return 0;
}

const Registration kLifecycle("lifecycle", kLifecycleUsage, LifecycleCommand);

} // namespace
} // namespace sim_check

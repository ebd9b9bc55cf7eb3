// sim_check programs-experiment CHECK CHECK72 METRICS CMP-OUT families=F
//     gives=G pair=GPU fits=GPU pair72=GPU lat=ID batch=ID fitlat=ID
//     lat72=ID batch72=ID missing72=WHY hip72=VERSION rocr72=VERSION
// The users' experiment as one agent (one probe tier) sees it, HIP to KFD for
// real: the latency program's stream at HIP's greatest priority (ROCr's
// hsa_amd_queue_set_priority: AMDKFD_IOC_UPDATE_QUEUE to 15), the batch
// program's fenced to CUs 0-15 of the 104 (hipExtStreamCreateWithCUMask:
// AMDKFD_IOC_SET_CU_MASK), whose queues were taken off the pair's GPU by whom
// and for how long, and the seconds that GPU's runlist was oversubscribed (2
// CP queue slots); the second pair's GPU (fits, 24 slots) must never be
// oversubscribed. Every family of F equal to the simulator's truth first:
// CMP-OUT is sim_compare's output on METRICS (TruthChecks::Converge).
//
// CHECK72: the first pair again on HIP 7.2.4 (VERSION) with its ROCr
// (containers lat72 and batch72 on pair72, 2 CP queue slots), from the same
// comparison. ROCr 6.4 and 7.2 ask KFD for priority 11 where 5.2.3 asks for
// 15 (kfd_hip_test.sh; amdkfd's pipe_priority_map makes 11-15 high) and set
// the CU mask through their own thunk; the latency program's own priority
// update unmaps the runlist it is in, so its queues are taken off the GPU
// at least once. A SKIP with missing72's reason when that is not empty.
//
// G: the optional family groups the tier exports ("runlist",
// "oversubscription"); their figures are checked only where given. lat,
// batch...: the containers' ids as the agent labels them; pair, fits: the
// pairs' GPUs. Exit 1 when a verdict failed (the guest then dumps its
// logs), 2 on bad input.
#include "command.h"
#include "programs.h"
#include "verdict.h"

#include <map>
#include <sstream>

namespace sim_check
{
namespace
{

using programs::ContainerSum;
using programs::Fixed;
using Options = std::map<std::string, std::string>;

// One pair's figures: the latency program's and its GPU's.
struct Pair {
	double high = 0, self = 0, other = 0, off = 0, over = 0, over_s = 0, queues = 0;

	Pair(const Exposition &m, const std::string &lat, const std::string &gpu)
	{
		high = ContainerSum(m, "gpuq_queues_by_priority", lat, { { "priority", "high" } });
		self = ContainerSum(m, "gpuq_queue_preemptions_total", lat,
				    { { "caused_by", "self" } });
		other = ContainerSum(m, "gpuq_queue_preemptions_total", lat,
				     { { "caused_by", "other" } });
		off = ContainerSum(m, "gpuq_queue_preempted_seconds_total", lat);
		over = m.Sum("gpuq_runlist_oversubscribed_maps_total", { { "gpu_id", gpu } });
		over_s = m.Sum("gpuq_runlist_oversubscribed_seconds_total", { { "gpu_id", gpu } });
		queues = m.Sum("gpuq_runlist_entries",
			       { { "gpu_id", gpu }, { "kind", "compute_queues" } });
	}

	std::string TakenOff(const std::string &gpu) const
	{
		return ", taken off GPU " + gpu + " " + Number(self) + " times by itself and " +
		       Number(other) + " by others, " + Fixed(off) + " s off";
	}
};

struct Gives {
	bool runlist = false, oversubscription = false;

	explicit Gives(const std::string &text)
	{
		std::istringstream in(text);
		std::string group;
		while (in >> group) {
			runlist = runlist || group == "runlist";
			oversubscription = oversubscription || group == "oversubscription";
		}
	}
};

double CuRestricted(const Exposition &m, const std::string &batch)
{
	return ContainerSum(m, "gpuq_queues_cu_masked", batch, { { "cu_mask", "restricted" } });
}

// CHECK's verdict on the first and second pairs; true when it passed.
bool Experiment(const std::string &check, Options &o, const Exposition &m, const Comparison &cmp,
		const Gives &g)
{
	const std::string &fams = o["families"], &pair_gpu = o["pair"], &fits_gpu = o["fits"];
	const Pair pair(m, o["lat"], pair_gpu), fits(m, o["fitlat"], fits_gpu);
	const double cm = CuRestricted(m, o["batch"]);
	std::string detail = cmp.Compared() + " series equal the simulator's truth (" + fams +
			     "): the latency program's high-priority queues " + Number(pair.high) +
			     ", the batch program's CU-restricted queues " + Number(cm);
	if (g.runlist)
		detail += pair.TakenOff(pair_gpu);
	if (g.oversubscription)
		detail += "; that GPU's runlist oversubscribed " + Number(pair.over) + " times, " +
			  Fixed(pair.over_s) + " s";
	detail += ". Where they fit: high-priority queues " + Number(fits.high);
	if (g.runlist)
		detail += fits.TakenOff(fits_gpu);
	if (g.oversubscription)
		detail += "; that GPU's runlist oversubscribed " + Number(fits.over) + " times, " +
			  Number(fits.queues) + " compute queues in it";
	std::string why;
	if (pair.high < 1 || fits.high < 1 || cm != 1)
		why = "the truth agrees but the experiment is not there: " + detail +
		      " (want >= 1 high-priority queue in each run, 1 CU-restricted batch queue)";
	else if (g.oversubscription && pair.over < 1)
		why = "the truth agrees but the pair's runlist never oversubscribed: " + detail;
	else if (g.oversubscription && (fits.over != 0 || fits.queues < 2))
		why = "the truth agrees but the second pair did not fit on its GPU: " + detail +
		      " (want no oversubscription, >= 2 compute queues in its runlist)";
	if (!why.empty()) {
		Fail(check, why);
		return false;
	}
	Pass(check, detail);
	return true;
}

// CHECK72's verdict on the HIP 7.2 pair; true when it did not fail.
bool Experiment72(const std::string &check, Options &o, const Exposition &m, const Comparison &cmp,
		  const Gives &g)
{
	const std::string &gpu = o["pair72"];
	const Pair pair(m, o["lat72"], gpu);
	const double cm = CuRestricted(m, o["batch72"]);
	std::string detail = cmp.Compared() + " series equal the simulator's truth; on HIP " +
			     o["hip72"] + " with ROCr " + o["rocr72"] +
			     ": the latency program's high-priority queues " + Number(pair.high) +
			     ", the batch program's CU-restricted queues " + Number(cm);
	if (g.runlist)
		detail += pair.TakenOff(gpu);
	if (g.oversubscription)
		detail += "; that GPU's runlist oversubscribed " + Number(pair.over) + " times, " +
			  Fixed(pair.over_s) + " s";
	std::string why;
	if (pair.high < 1 || cm != 1)
		why = "the truth agrees but the experiment is not there: " + detail +
		      " (want >= 1 high-priority queue, 1 CU-restricted batch queue)";
	else if (g.runlist && pair.self + pair.other < 1)
		why = "the truth agrees but the latency program's queues were never taken off the "
		      "GPU: " +
		      detail;
	else if (g.oversubscription && pair.over < 1)
		why = "the truth agrees but the pair's runlist never oversubscribed: " + detail;
	if (!why.empty()) {
		Fail(check, why);
		return false;
	}
	Pass(check, detail);
	return true;
}

int ProgramsExperiment(const std::vector<std::string> &a)
{
	static const std::vector<std::string> keys = { "families", "gives",   "pair",	   "fits",
						       "pair72",   "lat",     "batch",	   "fitlat",
						       "lat72",	   "batch72", "missing72", "hip72",
						       "rocr72" };
	Options o;
	Exposition metrics;
	Comparison cmp;
	std::string error;
	if (a.size() < 4)
		return UsageError("programs-experiment CHECK CHECK72 METRICS CMP-OUT KEY=VALUE...");
	if (!programs::ReadOptions(a, 4, keys, o, error) || !ReadExposition(a[2], metrics, error) ||
	    !ReadComparison(a[3], cmp, error))
		return UsageError(error);
	const Gives gives(o["gives"]);
	const std::string &check = a[0], &check72 = a[1], &missing72 = o["missing72"];
	bool ok;
	if (!cmp.Equal()) {
		// No figure means anything until every series equals the truth.
		const std::string detail = "simulator truth: " + cmp.Diffs(8);
		Fail(check, detail);
		ok = false;
		if (missing72.empty())
			Fail(check72, detail);
	} else {
		ok = Experiment(check, o, metrics, cmp, gives);
		if (missing72.empty())
			ok = Experiment72(check72, o, metrics, cmp, gives) && ok;
	}
	if (!missing72.empty())
		Skip(check72, "the pair on HIP 7.2.4 did not run: " + missing72);
	return ok ? 0 : 1;
}

const Registration kProgramsExperiment(
    "programs-experiment",
    "CHECK CHECK72 METRICS CMP-OUT families=F gives=G pair=GPU fits=GPU pair72=GPU lat=ID "
    "batch=ID fitlat=ID lat72=ID batch72=ID missing72=WHY hip72=VERSION rocr72=VERSION",
    ProgramsExperiment);

} // namespace
} // namespace sim_check

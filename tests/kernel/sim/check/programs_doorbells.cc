// sim_check programs-doorbells [--quiet] CHECK METRICS preempts=MODEL
//     [NAME ID CLIENT-OUT WANT]...
// Per container and GPU, the agent's doorbells (METRICS) equal the write
// indexes of the program's own (HIP's) queues in its thunk, its
// kernel-dispatch rings the dispatches the null CP consumed there (WANT: the
// client-sums of the program's thunk truth, "GPU WRITES DISPATCHES
// ..." per line), and per program those dispatches its launches (CLIENT-OUT:
// hip_client's "hip_client ... launches=N ... ok" line). NAME: the program,
// ID: its container as the agent labels it. MODEL: the kernel's preemption
// model where it preempts programs (sched/preempt), else empty.
// --quiet: no verdict; exit 0 when every figure is exact, else 1 (the guest
// scrapes again until then). Without it, the verdict; exit 1 when not exact
// (the guest then dumps its logs), 2 on bad input.
#include "command.h"
#include "programs.h"
#include "verdict.h"

#include <cstdlib>
#include <regex>

namespace sim_check
{
namespace
{

using programs::ContainerSum;

struct DoorbellResult {
	bool ok = true;
	// every doorbell count exact; only the packet classes may differ
	bool rings_ok = true;
	std::string detail;
};

// The launches hip_client printed ("" when it printed none, one per line when
// it printed several).
std::string Launches(const std::vector<std::string> &out)
{
	// POSIX ERE as sed reads it ('.' takes any character, '\r' too)
	static const std::regex line("^hip_client .* launches=([0-9]*) .*ok$",
				     std::regex::extended);
	std::string launches;
	std::smatch m;
	for (const std::string &l : out)
		if (std::regex_match(l, m, line))
			launches += (launches.empty() ? "" : "\n") + m[1].str();
	return launches;
}

bool ProgramDoorbells(const Exposition &metrics, const std::string *p, DoorbellResult &r,
		      std::string &error)
{
	const std::string &name = p[0], &id = p[1];
	std::vector<std::string> out, want;
	if (!ReadLines(p[2], out, error) || !ReadLines(p[3], want, error))
		return false;
	const std::string launches = Launches(out);
	double total = 0, wsum = 0;
	int gpus = 0;
	for (const std::string &line : want) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() < 3) {
			error = p[3] + ": not \"GPU WRITES DISPATCHES ...\": " + line;
			return false;
		}
		const std::string &g = f[0];
		const double w = std::atof(f[1].c_str()), d = std::atof(f[2].c_str());
		const double got =
		    ContainerSum(metrics, "gpuq_doorbells_total", id, { { "gpu_id", g } });
		const double kd =
		    ContainerSum(metrics, "gpuq_doorbell_packets_total", id,
				 { { "gpu_id", g }, { "packet_type", "kernel_dispatch" } });
		if (got != w || kd != d || w <= 0) {
			r.ok = false;
			if (got != w || w <= 0)
				r.rings_ok = false;
			r.detail += " " + name + " gpu " + g + ": doorbells " + Number(got) +
				    " want " + f[1] + ", kernel-dispatch " + Number(kd) + " want " +
				    f[2] + ";";
		}
		total += d;
		wsum += w;
		gpus++;
	}
	const double all = ContainerSum(metrics, "gpuq_doorbells_total", id);
	if (all != wsum) {
		r.ok = r.rings_ok = false;
		r.detail += " " + name + ": " + Number(all) + " doorbells in all, " + Number(wsum) +
			    " on its GPUs;";
	}
	const double kall = ContainerSum(metrics, "gpuq_doorbell_packets_total", id,
					 { { "packet_type", "kernel_dispatch" } });
	if (Number(kall) != launches) {
		r.ok = false;
		r.detail += " " + name + ": " + Number(kall) + " kernel-dispatch packets in all, " +
			    launches + " launches;";
	}
	if (Number(total) != launches) {
		r.ok = false;
		r.detail +=
		    " " + name + ": " + Number(total) + " dispatches, " + launches + " launches;";
	}
	r.detail += " " + name + " (" + id + "): " + std::to_string(gpus) + " GPUs, " +
		    Number(wsum) + " doorbells = HIP's packets, " + Number(total) +
		    " kernel-dispatch = launches;";
	return true;
}

int ProgramsDoorbells(const std::vector<std::string> &args)
{
	std::vector<std::string> a = args;
	const bool quiet = !a.empty() && a[0] == "--quiet";
	if (quiet)
		a.erase(a.begin());
	if (a.size() < 3 || (a.size() - 3) % 4 != 0 || a[2].rfind("preempts=", 0) != 0)
		return UsageError("programs-doorbells [--quiet] CHECK METRICS preempts=MODEL "
				  "[NAME ID CLIENT-OUT WANT]...");
	Exposition metrics;
	std::string error;
	if (!ReadExposition(a[1], metrics, error))
		return UsageError(error);
	DoorbellResult r;
	for (size_t i = 3; i < a.size(); i += 4)
		if (!ProgramDoorbells(metrics, &a[i], r, error))
			return UsageError(error);
	if (quiet)
		return r.ok ? 0 : 1;
	const std::string &check = a[0], preempts = a[2].substr(9);
	// On 7.3 a run showed every ring counted exactly in all four tiers, but
	// one ring classed as a barrier where the null CP consumed a dispatch
	// (the uprobe reads the rung slot's header; not understood yet, never
	// seen on 6.1): such a run skips, naming it.
	if (r.ok)
		Pass(check, "per container and GPU:" + r.detail);
	else if (r.rings_ok && !preempts.empty())
		Skip(check, "the kernel preempts programs (sched/preempt: " + preempts +
				"): every doorbell counted exactly, but the packet classes differ "
				"from what the null CP consumed (a known 7.3 difference, not "
				"understood yet; 6.1 checks them exactly: GPUQ_KTEST_KERNELS='6.1 "
				"7.3' GPUQ_KTEST_PROGRAMS=6.1):" +
				r.detail);
	else
		Fail(check, r.detail);
	return r.ok ? 0 : 1;
}

const Registration
    kProgramsDoorbells("programs-doorbells",
		       "[--quiet] CHECK METRICS preempts=MODEL [NAME ID CLIENT-OUT WANT]...",
		       ProgramsDoorbells);

} // namespace
} // namespace sim_check

// sim_check max-hw-queues-live [--wait] PREFIX N:CONTAINER:RECORD-EXIT...:
// max-hw-queues:live, per run (max_hw_queues.h) the agent's live queues of
// its container, its doorbells' kernel dispatches and those with the barrier
// bit, each equal to the null thunk's truth exactly; the program said ok and
// its `record` exited 0.
// --wait PREFIX N:CONTAINER: prints "agrees" once that run's scrape equals
// the truth and the agent's sampler has read the container's queues (its
// gpuq_submissions_total above 0: the round that first reads a process's
// queues reads its knobs too), else "differs" (the guest scrapes again
// until it agrees or 30 s pass).
#include "lines.h"
#include "client_runs.h"
#include "command.h"
#include "exposition.h"
#include "max_hw_queues.h"
#include "verdict.h"

#include <cstdio>

namespace sim_check
{
namespace
{

struct Figures {
	double live = 0, dispatches = 0, barrier_bit = 0, submissions = 0;
};

Figures AgentFigures(const Exposition &metrics, const std::string &container)
{
	const Labels c = { { "container", container } };
	Figures f;
	f.live = metrics.Sum("gpuq_queues", c);
	f.dispatches =
	    metrics.Sum("gpuq_doorbell_packets_total",
			{ { "container", container }, { "packet_type", "kernel_dispatch" } });
	f.barrier_bit = metrics.Sum("gpuq_doorbell_barrier_dispatches_total", c);
	f.submissions = metrics.Sum("gpuq_submissions_total", c);
	return f;
}

bool Agrees(const Figures &got, const HwQueuesTruth &want)
{
	return got.live == want.live && got.dispatches == want.dispatches &&
	       got.barrier_bit == want.barrier_bit;
}

// The program's own verdict: hip_client prints "hip_client queues ... ok".
bool SaidOk(const std::vector<std::string> &out)
{
	const std::string head = "hip_client queues ", tail = " ok";
	for (const std::string &line : out)
		if (line.size() >= head.size() + tail.size() &&
		    line.compare(0, head.size(), head) == 0 &&
		    line.compare(line.size() - tail.size(), tail.size(), tail) == 0)
			return true;
	return false;
}

std::string LastTwo(const std::vector<std::string> &out)
{
	std::string s;
	for (size_t i = out.size() > 2 ? out.size() - 2 : 0; i < out.size(); i++)
		s += out[i] + ";";
	return s;
}

int MaxHwQueuesLive(const std::vector<std::string> &all)
{
	std::vector<std::string> args = all;
	const bool wait = !args.empty() && args[0] == "--wait";
	if (wait)
		args.erase(args.begin());
	if (args.size() < 2 || (wait && args.size() != 2))
		return UsageError("max-hw-queues-live [--wait] PREFIX N:CONTAINER:RECORD-EXIT...");
	const std::string &prefix = args[0];
	std::string bad, detail, error;
	for (size_t i = 1; i < args.size(); i++) {
		HwQueuesRun run;
		HwQueuesTruth want;
		Exposition metrics;
		std::vector<std::string> out;
		if (!ParseHwQueuesRun(args[i], run, error) ||
		    !ReadHwQueuesTruth(prefix + run.n + ".held", want, error) ||
		    !ReadExposition(prefix + run.n + ".prom", metrics, error) ||
		    (!wait && !ReadLines(prefix + run.n + ".out", out, error)))
			return UsageError(error);
		const Figures got = AgentFigures(metrics, run.container);
		if (wait) {
			std::printf("%s\n", Agrees(got, want) && got.submissions > 0 ? "agrees"
										     : "differs");
			return 0;
		}
		if (run.record_exit.empty())
			return UsageError("max-hw-queues-live: run " + run.n +
					  " has no RECORD-EXIT");
		if (!SaidOk(out))
			bad += " run-" + run.n + ":" + LastTwo(out);
		if (!Agrees(got, want))
			bad += " GPU_MAX_HW_QUEUES=" + run.n + ":queues-" + Number(got.live) +
			       "-want-" + Number(want.live) + ",dispatches-" +
			       Number(got.dispatches) + "-want-" + Number(want.dispatches) +
			       ",barrier-bit-" + Number(got.barrier_bit) + "-want-" +
			       Number(want.barrier_bit);
		if (run.record_exit != "0")
			bad += " record-" + run.n + "-exit-" + run.record_exit;
		detail += " GPU_MAX_HW_QUEUES=" + run.n + ": " + Number(got.live) + " queues, " +
			  Number(got.dispatches) + " kernel dispatches, " +
			  Number(got.barrier_bit) + " with the barrier bit (" +
			  Number(want.clients) + " of the queues HIP's);";
	}
	detail = "the agent equals the null thunk's truth exactly:" + detail;
	if (bad.empty())
		Pass("max-hw-queues:live", detail);
	else
		Fail("max-hw-queues:live", bad + "; " + detail);
	return 0;
}

const Registration kMaxHwQueuesLive("max-hw-queues-live",
				    "[--wait] PREFIX N:CONTAINER:RECORD-EXIT...", MaxHwQueuesLive);

} // namespace
} // namespace sim_check

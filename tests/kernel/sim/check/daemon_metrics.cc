// sim_check daemon-metrics GROUP MODE CHECK_OUT METRICS RELEASE --probes LIST
//   [--missing LIST] [--not-needed LIST] [--no-process REASON]:
// the QEMU guest's verdicts on the daemon's /metrics (METRICS) after one
// kfdtest run (a CREATE_QUEUE that fails with EINVAL, a process exit):
//  GROUP:attached:<probe>  one gpuq_probe_attached series per hook, in MODE
//                          (none, 0, for a hook the kernel lacks or does not
//                          need) and agreeing with `check` (CHECK_OUT);
//  GROUP:create-failure    one failure series, gpu_id unknown, EINVAL, 1;
//  GROUP:queue-priority    whether this kernel's amdkfd applies a queue's
//                          priority, by RELEASE (below);
//  GROUP:process-exit      the exits sum to 1;
//  GROUP:no-queues         no live queue, no create or destroy above 0;
//  GROUP:no-drops          no event dropped for any reason, prog_skipped
//                          too (no program can be skipped in the guest);
//  GROUP:attribution       the failure and exit series carry container=""
//                          (the test process runs in the root cgroup).
// REASON (--no-process, when not empty): amdkfd makes no KFD process here
// (7.2+ without a GPU node), so the checks that need one are skipped,
// naming it.
#include "check_report.h"
#include "command.h"
#include "exposition.h"
#include "hook_list.h"
#include "lines.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

std::string Texts(const std::vector<const Sample *> &series)
{
	std::string out;
	for (const Sample *s : series)
		out += s->Text() + ";";
	return out;
}

// Samples of NAME above 0.
std::vector<const Sample *> Positive(const Exposition &m, const std::string &name)
{
	std::vector<const Sample *> out;
	for (const Sample *s : m.Series(name))
		if (s->value > 0)
			out.push_back(s);
	return out;
}

// What set_priority (kfd_mqd_manager.c) does in Debian's linux-source of each
// series this tier runs the daemon on: 6.1 and 6.12 write
// cp_hqd_queue_priority, 7.x does not ("drm/amdkfd: Disable MQD queue
// priority", mainline 7.0). "" for a release not read.
std::string QueuePriority(const std::string &release)
{
	if (release.rfind("6.1.", 0) == 0 || release.rfind("6.12.", 0) == 0)
		return "programmed";
	if (release.rfind("7.", 0) == 0)
		return "ignored";
	return "";
}

struct Daemon {
	std::string group, mode, release, no_process;
	const Exposition &m;

	std::string Check(const std::string &what) const
	{
		return group + ":" + what;
	}
	// False, and CHECK skipped naming why, where no KFD process can exist.
	bool WithProcess(const std::string &what) const
	{
		if (no_process.empty())
			return true;
		Skip(Check(what), no_process);
		return false;
	}

	void Attached(const Hook &h, const std::string &check_mode) const
	{
		const auto lines = m.Series("gpuq_probe_attached", { { "probe", h.probe } });
		const bool off = h.missing || h.not_needed;
		const std::string wm = off ? "none" : mode;
		const double wv = off ? 0 : 1;
		if (lines.size() == 1 && lines[0]->Label("mode") == wm && lines[0]->value == wv &&
		    check_mode == wm)
			Pass(Check("attached:" + h.probe),
			     lines[0]->Text() + " (check said mode=" + check_mode + ")");
		else
			Fail(Check("attached:" + h.probe),
			     "want one series mode=\"" + wm + "\" value " + Number(wv) +
				 " agreeing with check (mode=" +
				 (check_mode.empty() ? "?" : check_mode) +
				 "), got: " + Texts(lines));
	}

	void CreateFailure() const
	{
		if (!WithProcess("create-failure"))
			return;
		const auto lines = m.Series("gpuq_queue_create_failures_total");
		if (lines.size() == 1 && lines[0]->Label("gpu_id") == "unknown" &&
		    lines[0]->Label("error") == "EINVAL" && lines[0]->value == 1)
			Pass(Check("create-failure"), lines[0]->Text());
		else
			Fail(Check("create-failure"),
			     "want one series gpu_id=\"unknown\",error=\"EINVAL\" 1, got: " +
				 Texts(lines));
	}

	void QueuePriorityInfo() const
	{
		const std::string want = QueuePriority(release);
		const auto lines = m.Series("gpuq_kernel_queue_priority_info");
		if (want.empty())
			Skip(Check("queue-priority"), "no reading of this kernel's set_priority (" +
							  release + "): " + Texts(lines));
		else if (lines.size() == 1 && lines[0]->Label("queue_priority") == want &&
			 lines[0]->Label("kernel_release") == release && lines[0]->value == 1)
			Pass(Check("queue-priority"), lines[0]->Text());
		else
			Fail(Check("queue-priority"), "want one series queue_priority=\"" + want +
							  "\",kernel_release=\"" + release +
							  "\" 1, got: " + Texts(lines));
	}

	void ProcessExit() const
	{
		if (!WithProcess("process-exit"))
			return;
		const double s = m.Sum("gpuq_process_exits_total");
		const std::string series = Texts(m.Series("gpuq_process_exits_total"));
		if (s == 1)
			Pass(Check("process-exit"), series);
		else
			Fail(Check("process-exit"), "sum " + Number(s) + ", want 1: " + series);
	}

	void NoQueues() const
	{
		if (!WithProcess("no-queues"))
			return;
		const double q = m.Sum("gpuq_queues");
		const std::string c = Texts(Positive(m, "gpuq_queue_creates_total"));
		const std::string d = Texts(Positive(m, "gpuq_queue_destroys_total"));
		if (q == 0 && c.empty() && d.empty())
			Pass(Check("no-queues"),
			     "sum(gpuq_queues)=0, no creates or destroys above 0");
		else
			Fail(Check("no-queues"), "sum(gpuq_queues)=" + Number(q) +
						     " creates>0: " + (c.empty() ? "none" : c) +
						     " destroys>0: " + (d.empty() ? "none" : d));
	}

	void NoDrops() const
	{
		if (m.Sum("gpuq_events_dropped_total") == 0)
			Pass(Check("no-drops"), "no event dropped, no program skipped");
		else
			Fail(Check("no-drops"), Texts(Positive(m, "gpuq_events_dropped_total")));
	}

	void Attribution() const
	{
		if (!WithProcess("attribution"))
			return;
		auto a = m.Series("gpuq_queue_create_failures_total");
		for (const Sample *s : m.Series("gpuq_process_exits_total"))
			a.push_back(s);
		bool host = !a.empty();
		for (const Sample *s : a)
			host = host && s->Label("container").empty();
		if (host)
			Pass(Check("attribution"),
			     "failure and exit series carry container=\"\" (host)");
		else
			Fail(Check("attribution"),
			     "want container=\"\" on every failure/exit series, got: " + Texts(a));
	}
};

int DaemonMetrics(const std::vector<std::string> &argv)
{
	std::vector<std::string> args = argv;
	HookList list;
	std::string error, no_process;
	if (!TakeHookList(args, list, error))
		return UsageError(error);
	TakeOption(args, "no-process", no_process);
	if (args.size() != 5)
		return UsageError(
		    "daemon-metrics GROUP MODE CHECK_OUT METRICS RELEASE --probes LIST "
		    "[--missing LIST] [--not-needed LIST] [--no-process REASON]");
	std::vector<std::string> check_out;
	if (!ReadLines(args[2], check_out))
		return UsageError("cannot read " + args[2]);
	Exposition m;
	if (!ReadExposition(args[3], m, error))
		return UsageError(error);
	const Daemon d{ args[0], args[1], args[4], no_process, m };
	for (const Hook &h : list.hooks)
		d.Attached(h, ReportOf(check_out, h.probe).mode);
	d.CreateFailure();
	d.QueuePriorityInfo();
	d.ProcessExit();
	d.NoQueues();
	d.NoDrops();
	d.Attribution();
	return 0;
}

const Registration kDaemonMetrics("daemon-metrics",
				  "GROUP MODE CHECK_OUT METRICS RELEASE --probes LIST [--missing "
				  "LIST] [--not-needed LIST] [--no-process REASON]",
				  DaemonMetrics);

} // namespace
} // namespace sim_check

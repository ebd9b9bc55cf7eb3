// sim_check max-hw-queues-report REPORT ERRORS EXIT PREFIX N...:
// max-hw-queues:report, `gpuq-agent report hwq-1=... hwq-8=...` (its stdout
// REPORT, stderr ERRORS, exit status EXIT) compares the runs' captures side
// by side: per run N (max_hw_queues.h) a column whose queues created, kernel
// dispatches and barrier-bit dispatches are the truth's and whose runtime
// knobs are those the program was started with.
#include "lines.h"
#include "command.h"
#include "client_runs.h"
#include "max_hw_queues.h"
#include "verdict.h"

#include <regex>

namespace sim_check
{
namespace
{

// The report's row starting with TITLE: its cells joined by '|' (the columns
// are two or more spaces apart), "" when there is none.
std::string Row(const std::vector<std::string> &report, const std::string &title)
{
	for (const std::string &line : report) {
		if (line.compare(0, title.size(), title) != 0)
			continue;
		std::string cells = line.substr(title.size());
		cells.erase(0, cells.find_first_not_of(' ') == std::string::npos
				   ? cells.size()
				   : cells.find_first_not_of(' '));
		return std::regex_replace(cells, std::regex("  +"), "|");
	}
	return "";
}

int MaxHwQueuesReport(const std::vector<std::string> &args)
{
	if (args.size() < 5)
		return UsageError("max-hw-queues-report REPORT ERRORS EXIT PREFIX N...");
	std::vector<std::string> report, errors;
	std::string error;
	if (!ReadLines(args[0], report, error) || !ReadLines(args[1], errors, error))
		return UsageError(error);
	std::string created, dispatches, barrier_bit, knobs;
	for (size_t i = 4; i < args.size(); i++) {
		HwQueuesTruth t;
		if (!ReadHwQueuesTruth(args[3] + args[i] + ".held", t, error))
			return UsageError(error);
		const std::string sep = i > 4 ? "|" : "";
		created += sep + Number(t.created);
		dispatches += sep + Number(t.dispatches);
		barrier_bit += sep + Number(t.barrier_bit);
		knobs += sep + "GPU_MAX_HW_QUEUES=" + args[i] + " HSA_ENABLE_SDMA=0";
	}
	const std::string got_created = Row(report, "queues created");
	const std::string got_dispatches = Row(report, "kernel dispatches (doorbells)");
	const std::string got_barrier_bit = Row(report, "  with the barrier bit");
	const std::string got_knobs = Row(report, "runtime knobs");
	std::string bad;
	if (got_created != created)
		bad += " queues-created:" + got_created + "-want-" + created;
	if (got_dispatches != dispatches)
		bad += " dispatches:" + got_dispatches + "-want-" + dispatches;
	// the cells add the share, "N (P%)"
	if (std::regex_replace(got_barrier_bit, std::regex(" \\([0-9]*%\\)"), "") != barrier_bit)
		bad += " barrier-bit:" + got_barrier_bit + "-want-" + barrier_bit;
	if (got_knobs != knobs)
		bad += " knobs:" + got_knobs;
	if (args[2] != "0")
		bad += " report-exit-" + args[2] + ":" + (errors.empty() ? "" : errors[0]);
	const std::string detail =
	    "report compares the two runs side by side, each column the truth's: queues "
	    "created " +
	    got_created + ", kernel dispatches " + got_dispatches + ", with the barrier bit " +
	    got_barrier_bit + ", knobs " + got_knobs;
	if (bad.empty())
		Pass("max-hw-queues:report", detail);
	else
		Fail("max-hw-queues:report", bad + "; " + detail);
	return 0;
}

const Registration kMaxHwQueuesReport("max-hw-queues-report", "REPORT ERRORS EXIT PREFIX N...",
				      MaxHwQueuesReport);

} // namespace
} // namespace sim_check

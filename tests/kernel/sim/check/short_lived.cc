// sim_check short-lived PROM: two Kubernetes Job containers (job-1, job-2 in
// namespace jobs; containerd's CRI layout, bundle and cgroup removed the
// moment the task ends) each created 2 queues and exited. In the scrape PROM
// every series they produced carries their names, never a short id (their
// ids start b0000) or "unresolved". Each job: its 2 creates, its exit and the
// exit's destroy of each of its queues, exactly (both drivers create at
// once, at one FIFO priority: neither preempts the other inside a program).
#include "command.h"
#include "lines.h"
#include "text_file.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

bool IsAgentSeries(const std::string &line)
{
	return line.compare(0, 5, "gpuq_") == 0;
}

int ShortLived(const std::vector<std::string> &args)
{
	if (args.size() != 1)
		return UsageError("short-lived PROM");
	std::vector<std::string> metrics;
	std::string error;
	if (!ReadLines(args[0], metrics, error))
		return UsageError(error);
	std::string bad, detail;
	for (const std::string name : { "job-1", "job-2" }) {
		const std::string container = "container=\"" + name + "\"";
		const std::vector<std::string> job = { container, "namespace=\"jobs\"" };
		int named = 0;
		for (const std::string &line : metrics) {
			const size_t at = line.find(container);
			named += IsAgentSeries(line) && at != std::string::npos &&
				 line.find("namespace=\"jobs\"", at) != std::string::npos;
		}
		const std::string creates =
		    Number(SumOfLines(metrics, "gpuq_queue_creates_total{", job));
		const std::string destroys =
		    Number(SumOfLines(metrics, "gpuq_queue_destroys_total{", job));
		const std::string exits =
		    Number(SumOfLines(metrics, "gpuq_process_exits_total{", job));
		detail += " " + name + ": " + creates + " creates, " + destroys + " destroys, " +
			  exits + " exit;";
		if (named < 1)
			bad += " no-series-named-" + name;
		if (creates != "2" || destroys != "2" || exits != "1")
			bad += " " + name + ":creates=" + creates + ",destroys=" + destroys +
			       ",exits=" + exits + "(want-2,2,1)";
	}
	int strays = 0;
	for (const std::string &line : metrics)
		strays += IsAgentSeries(line) &&
			  (line.find("container=\"b0000") != std::string::npos ||
			   line.find("container=\"unresolved\"") != std::string::npos);
	if (strays != 0)
		bad += " " + std::to_string(strays) + "-series-under-id-or-unresolved";
	if (bad.empty())
		Pass("short-lived-named", "two 2 s Job containers, bundle and cgroup removed at "
					  "exit: every series named (" +
					      detail + ")");
	else
		Fail("short-lived-named", "missing or misnamed:" + bad);
	return 0;
}

const Registration kShortLived("short-lived", "PROM", ShortLived);

} // namespace
} // namespace sim_check

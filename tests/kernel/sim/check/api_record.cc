// sim_check api-record RECORD_STATUS REPORT_STATUS AGENT_PROM REPLAY_PROM
//   REPORT METRICS_PROM DIFF_OUT
// The recording API end to end, live: `record --from` recorded the two Job
// containers (namespace jobs) through the daemon and exited RECORD_STATUS.
// The jobs ran entirely inside the recording, so its capture's replay
// (REPLAY_PROM) gives every job series of the lifecycle, submission and
// pending families the daemon exports (AGENT_PROM, scraped since they
// ended) exactly, line for line; and its `report` (REPORT, exit
// REPORT_STATUS) gives each job the creates and submissions of the daemon's
// scrape METRICS_PROM. On failure both sides go to DIFF_OUT (AGENT/REPLAY).
#include "command.h"
#include "lines.h"
#include "text_file.h"
#include "verdict.h"

#include <algorithm>
#include <fstream>

namespace sim_check
{
namespace
{

// The job series of the compared families, sorted.
std::vector<std::string> JobSeries(const std::vector<std::string> &lines)
{
	static const char *const kFamilies[] = { "gpuq_queue_creates_total",
						 "gpuq_queue_destroys_total",
						 "gpuq_process_exits_total",
						 "gpuq_submissions_total",
						 "gpuq_queues",
						 "gpuq_queue_pending_packets" };
	std::vector<std::string> out;
	for (const std::string &line : lines) {
		if (line.find("namespace=\"jobs\"") == std::string::npos)
			continue;
		for (const char *family : kFamilies)
			if (line.compare(0, std::string(family).size() + 1,
					 std::string(family) + "{") == 0)
				out.push_back(line);
	}
	std::sort(out.begin(), out.end());
	return out;
}

// The report's column COLUMN (1-based) of container JOB's rows in namespace
// jobs; rows: CONTAINER POD NAMESPACE ID PROCS GPUS QUEUES_PEAK
// COMPUTE_PEAK CREATED SUBMISSIONS.
std::string ReportColumn(const std::vector<std::string> &report, const std::string &job,
			 size_t column)
{
	std::string out;
	for (const std::string &line : report) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() >= 3 && f[0] == job && f[2] == "jobs")
			out +=
			    (out.empty() ? "" : "\n") + (f.size() >= column ? f[column - 1] : "");
	}
	while (!out.empty() && out.back() == '\n')
		out.pop_back();
	return out;
}

int ApiRecord(const std::vector<std::string> &args)
{
	if (args.size() != 7)
		return UsageError("api-record RECORD_STATUS REPORT_STATUS AGENT_PROM REPLAY_PROM "
				  "REPORT METRICS_PROM DIFF_OUT");
	std::vector<std::string> agent, replay, report, metrics;
	std::string error;
	if (!ReadLines(args[2], agent, error) || !ReadLines(args[3], replay, error) ||
	    !ReadLines(args[4], report, error) || !ReadLines(args[5], metrics, error))
		return UsageError(error);
	const std::vector<std::string> want = JobSeries(agent), got = JobSeries(replay);
	std::string bad, detail;
	if (args[0] != "0")
		bad += " record-from-exit-" + args[0];
	if (want.empty())
		bad += " no-job-series-exported";
	if (want != got)
		bad += " replay-differs";
	if (args[1] != "0")
		bad += " report-failed";
	for (const std::string job : { "job-1", "job-2" }) {
		const std::vector<std::string> labels = { "container=\"" + job + "\"",
							  "namespace=\"jobs\"" };
		const std::string created = ReportColumn(report, job, 9);
		const std::string subs = ReportColumn(report, job, 10);
		if (created != Number(SumOfLines(metrics, "gpuq_queue_creates_total{", labels)))
			bad += " " + job + "-created-" + created;
		if (subs != Number(SumOfLines(metrics, "gpuq_submissions_total{", labels)))
			bad += " " + job + "-submissions-" + subs;
		detail += " " + job + ": " + created + " created, " + subs + " submissions;";
	}
	if (bad.empty()) {
		Pass("api-record",
		     "record --from through the daemon's API around two Job containers: "
		     "its replay gives their " +
			 std::to_string(want.size()) +
			 " series exactly, its report their creates and submissions (" + detail +
			 ")");
		return 0;
	}
	Fail("api-record", bad);
	std::ofstream diff(args[6]);
	for (const std::string &line : want)
		diff << "AGENT " << line << "\n";
	for (const std::string &line : got)
		diff << "REPLAY " << line << "\n";
	return 0;
}

const Registration
    kApiRecord("api-record",
	       "RECORD_STATUS REPORT_STATUS AGENT_PROM REPLAY_PROM REPORT METRICS_PROM DIFF_OUT",
	       ApiRecord);

} // namespace
} // namespace sim_check

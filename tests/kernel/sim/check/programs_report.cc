// sim_check programs-report CHECK RECORD-RC REPORT-RC CONTAINER METRICS REPLAY
//     REPORT-TEXT CMP-OUT CAPTURE
// The experiment's capture (CAPTURE: `record`, stopped while the programs
// hold, exit RECORD-RC) through `report` (REPORT-TEXT, exit REPORT-RC), the
// users' question: how often were the latency program's queues (CONTAINER)
// taken off the GPU, by itself and by others, and for how long. Its row of
// "Preemptions caused and suffered" must say what the btf-fentry agent
// counted (METRICS, held to the simulator's truth by programs-experiment),
// and the capture's replay (REPLAY, `--once -o prometheus --replay`) equal
// the simulator's truth for that container (CMP-OUT: sim_compare on REPLAY):
// its preemptions, and its seconds off the GPU within the truth's bracket
// (the recorder's programs stamp their own records, not the agent's times).
// Exit 1 when the verdict failed (the guest then dumps its logs), 2 on bad
// input.
#include "command.h"
#include "programs.h"
#include "verdict.h"

#include <sys/stat.h>

namespace sim_check
{
namespace
{

using programs::ContainerSum;
using programs::Fixed;

// CONTAINER's rows of the report's "PREEMPTIONS CAUSED AND SUFFERED" section
// (up to its blank line), one per line.
std::vector<std::string> Rows(const std::vector<std::string> &text, const std::string &container)
{
	std::vector<std::string> rows;
	bool in = false;
	for (const std::string &line : text) {
		if (line.rfind("PREEMPTIONS CAUSED AND SUFFERED", 0) == 0) {
			in = true;
			continue;
		}
		if (in && line.empty())
			break;
		const std::vector<std::string> f = Fields(line);
		if (in && !f.empty() && f[0] == container)
			rows.push_back(line);
	}
	return rows;
}

// Each row's FIELD-th field (from 0); FIELD 4 and on: those fields joined
// by a blank. One row's per line.
std::string Column(const std::vector<std::string> &rows, size_t field)
{
	std::string text;
	for (size_t r = 0; r < rows.size(); r++) {
		const std::vector<std::string> f = Fields(rows[r]);
		std::string one;
		for (size_t i = field; i < f.size() && (field >= 4 || i == field); i++)
			one += (one.empty() ? "" : " ") + f[i];
		text += (r ? "\n" : "") + one;
	}
	return text;
}

std::string Bytes(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0 ? std::to_string(st.st_size) : "";
}

int ProgramsReport(const std::vector<std::string> &a)
{
	if (a.size() != 9)
		return UsageError("programs-report takes 9 arguments, not " +
				  std::to_string(a.size()));
	const std::string &check = a[0], &rc = a[1], &rrc = a[2], &lat = a[3];
	Exposition metrics, replay;
	std::vector<std::string> text;
	Comparison cmp;
	std::string error;
	if (!ReadExposition(a[4], metrics, error) || !ReadLines(a[6], text, error) ||
	    !ReadComparison(a[7], cmp, error))
		return UsageError(error);
	// Only shown: sim_compare holds the replay to the truth.
	std::string got_off =
	    ReadExposition(a[5], replay, error)
		? Fixed(ContainerSum(replay, "gpuq_queue_preempted_seconds_total", lat))
		: "unreadable (" + error + ")";
	const double want_self =
	    ContainerSum(metrics, "gpuq_queue_preemptions_total", lat, { { "caused_by", "self" } });
	const double want_other = ContainerSum(metrics, "gpuq_queue_preemptions_total", lat,
					       { { "caused_by", "other" } });
	const double want_off = ContainerSum(metrics, "gpuq_queue_preempted_seconds_total", lat);
	const std::vector<std::string> rows = Rows(text, lat);
	const std::string got_self = Column(rows, 2), got_other = Column(rows, 3),
			  off = Column(rows, 4);
	std::string truth = cmp.Diffs(4);
	if (truth.empty())
		truth = cmp.Compared();
	const std::string detail =
	    "the latency container " + lat + ": " + got_self + " times by itself, " + got_other +
	    " by others, " + off + " off the GPU (the replay: " + got_off +
	    " s); the btf-fentry agent: " + Number(want_self) + ", " + Number(want_other) + ", " +
	    Fixed(want_off) + " s; the replay against the simulator's truth: " + truth;
	if (rc == "0" && rrc == "0" && !rows.empty() && got_self == Number(want_self) &&
	    got_other == Number(want_other) && want_self + want_other > 0 && cmp.Equal()) {
		Pass(check,
		     "report on the experiment's capture (" + Bytes(a[8]) + " bytes): " + detail);
		return 0;
	}
	Fail(check, "record exit " + rc + ", report exit " + rrc + ": " + detail);
	return 1;
}

const Registration kProgramsReport("programs-report",
				   "CHECK RECORD-RC REPORT-RC CONTAINER METRICS REPLAY REPORT-TEXT "
				   "CMP-OUT CAPTURE",
				   ProgramsReport);

} // namespace
} // namespace sim_check

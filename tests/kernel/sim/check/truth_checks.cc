#include "truth_checks.h"

#include "command.h"
#include "guest_process.h"
#include "lines.h"
#include "mode_inputs.h"
#include "verdict.h"

#include <fstream>
#include <unistd.h>

namespace sim_check
{
namespace
{

constexpr const char *kCompareIn = "/tmp/cmp.in";
constexpr const char *kCompareOut = "/tmp/cmp.out";
constexpr const char *kThunkOut = "/tmp/cmpt.out";

// PATH's lines, each after PREFIX, onto OUT.
void Prefixed(std::ofstream &out, const std::string &prefix, const std::string &path)
{
	std::vector<std::string> lines;
	ReadLines(path, lines);
	for (const std::string &line : lines)
		out << prefix << line << "\n";
}

bool ResultOk(const std::string &path)
{
	std::vector<std::string> lines;
	ReadLines(path, lines);
	return !StartingWith(lines, "RESULT ok").empty();
}

int Compare(const std::string &families, const std::string &input, const std::string &output,
	    const std::string &only = "")
{
	return RunFor({ "/bin/sim_compare", "--fams", families, "--only", only, input }, output,
		      "/tmp/sim_compare.err", 120);
}

// The queues KFD's sysfs lists, each "sysfs queue: <gpuid file> = <gpu>".
std::string SysfsQueues()
{
	std::string out;
	const std::string root = "/sys/class/kfd/kfd/proc";
	for (const std::string &proc : Entries(root)) {
		const std::string queues = root + "/" + proc + "/queues";
		for (const std::string &queue : Entries(queues)) {
			const std::string file = queues + "/" + queue + "/gpuid";
			std::string gpu = ReadText(file);
			if (!gpu.empty() && gpu.back() == '\n')
				gpu.pop_back();
			out += "sysfs queue: " + file + " = " + gpu + "\n";
		}
	}
	return out;
}

// Each line of FROM after PREFIX, into TO.
void PrefixFile(const std::string &prefix, const std::string &from, const std::string &to)
{
	std::ofstream out(to);
	Prefixed(out, prefix, from);
}

} // namespace

bool TruthChecks::CompareOnce(const std::string &families, const std::string &metrics,
			      const std::string &only) const
{
	{
		std::ofstream in(kCompareIn);
		Prefixed(in, "", "/tmp/static.in");
		Prefixed(in, "BASE ", "/tmp/base.truth");
		for (const char *now : { kSimTruth, "/tmp/drv.truth", "/tmp/drv.past" })
			Prefixed(in, "NOW ", now);
		Prefixed(in, "MET ", metrics);
	}
	Compare(families, kCompareIn, kCompareOut, only);
	return ResultOk(kCompareOut);
}

bool CompareWithThunks(const std::string &families, const std::string &only,
		       const std::string &metrics, const std::string &output)
{
	const std::string input = output + ".in";
	{
		std::ofstream in(input);
		Prefixed(in, "", "/tmp/static.in");
		Prefixed(in, "NOW ", kThunkLines);
		Prefixed(in, "MET ", metrics);
	}
	Compare(families, input, output, only);
	return ResultOk(output);
}

bool TruthChecks::CompareThunk(const std::string &families, const std::string &only) const
{
	return CompareWithThunks(families, only, kMetrics, kThunkOut);
}

void TruthChecks::ExpectBoth(const std::string &check, const std::string &sim_families,
			     const std::string &thunk_families, const std::string &only) const
{
	unlink(kThunkOut);
	if (Converge(sim_families))
		CompareThunk(thunk_families, only);
	if (Run("expect-both", { check, sim_families, thunk_families, kCompareOut, kThunkOut,
				 kThunkLines, Dropped() }))
		return;
	PrefixFile("truth: ", kSimTruth, "/tmp/truth.txt");
	for (const char *log : { kCompareOut, kThunkOut, "/tmp/truth.txt", kThunkLines, kMetrics })
		Dump(check, log);
}

std::string TruthChecks::Dropped() const
{
	std::vector<std::string> lines;
	ReadLines(kMetrics, lines);
	const std::string dropped = sim_check::Dropped(lines);
	return dropped.empty() ? "none" : dropped;
}

bool TruthChecks::Converge(const std::string &families) const
{
	const double t0 = Uptime();
	for (;;) {
		agent_.Scrape();
		if (CompareOnce(families, kMetrics))
			return true;
		if (Uptime() - t0 >= 30)
			return false;
		Nap(0.3);
	}
}

void TruthChecks::ExpectTruth(const std::string &check, const std::string &families) const
{
	Converge(families);
	if (Run("expect-truth", { check, families, kCompareOut, kMetrics }))
		return;
	PrefixFile("truth: ", kSimTruth, "/tmp/truth.txt");
	WriteText("/tmp/sysfs-queues.txt", SysfsQueues());
	RunFor({ "/bin/bpftool", "map", "dump", "name", "live_queues" }, "/tmp/live-queues.raw",
	       "/dev/null", 60);
	PrefixFile("live_queues: ", "/tmp/live-queues.raw", "/tmp/live-queues.txt");
	for (const char *log : { kCompareOut, "/tmp/truth.txt", "/tmp/sysfs-queues.txt",
				 "/tmp/live-queues.txt", kMetrics })
		Dump(check, log);
}

std::string TruthChecks::Missing(const std::string &families) const
{
	std::vector<std::string> lines;
	ReadLines(kMetrics, lines);
	std::string missing;
	for (std::string family : Fields(families)) {
		const std::string suffix = "_count";
		if (family.size() > suffix.size() &&
		    family.compare(family.size() - suffix.size(), suffix.size(), suffix) == 0)
			family.resize(family.size() - suffix.size());
		if (StartingWith(lines, "# TYPE " + family + " ").empty())
			missing += (missing.empty() ? "" : " ") + family;
	}
	return missing;
}

void TruthChecks::ExpectExported(const std::string &check, const std::string &families,
				 const std::string &pending) const
{
	agent_.Scrape();
	const std::string missing = Missing(families);
	if (!missing.empty()) {
		Skip(check,
		     "not exported by this agent yet: " + missing + " (pending: " + pending + ")");
		return;
	}
	ExpectTruth(check, families);
}

void TruthChecks::ExpectAbsent(const std::string &check, const std::string &families) const
{
	agent_.Scrape();
	std::vector<std::string> args = { check, tier_, kMetrics };
	const std::vector<std::string> listed = Fields(families);
	args.insert(args.end(), listed.begin(), listed.end());
	if (Run("families-absent", args))
		return;
	std::vector<std::string> lines, found;
	ReadLines(kMetrics, lines);
	for (const std::string &family : listed)
		for (const std::string &line : StartingWith(lines, family))
			if (line.size() > family.size() &&
			    (line[family.size()] == '{' || line[family.size()] == ' '))
				found.push_back(line);
	WriteText("/tmp/absent.txt", Join(found, "\n") + (found.empty() ? "" : "\n"));
	Dump(check, "/tmp/absent.txt");
}

void TruthChecks::LabelsCheck(const std::string &check, const std::string &series) const
{
	const std::string creates = "gpuq_queue_creates_total";
	agent_.Scrape();
	CompareOnce(creates, kMetrics);
	// The same input with the other kernels' queue-type numbering.
	RunFor({ "/proc/self/exe", "queue-types-other", series }, "/tmp/cmp-other.in2", "/dev/null",
	       60);
	{
		std::vector<std::string> lines;
		ReadLines(kCompareIn, lines);
		std::ofstream out("/tmp/cmp-other.in2", std::ios::app);
		for (const std::string &line : lines)
			if (!StartsWith(line, "QTYPE "))
				out << line << "\n";
	}
	Compare(creates, "/tmp/cmp-other.in2", "/tmp/cmp-other.out");
	if (!Run("queue-type-labels", { check, series, "/sys/kernel/debug/kfd_sim/queue_types",
					kCompareOut, "/tmp/cmp-other.out", kMetrics })) {
		Dump(check, kCompareOut);
		Dump(check, "/tmp/cmp-other.out");
	}
}

} // namespace sim_check

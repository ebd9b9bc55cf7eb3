// sim_check forced-skips CHECK AGENT_PID RUNNING BPFTOOL PROM: the one run that lets the
// kernel skip the agent's programs (the tracepoint tier's agent, a driver's
// burst and two loops of syscalls SCHED_OTHER on one vCPU: a tick preempts a
// task inside sys_enter's or sys_exit's program and the next task to enter
// it is skipped). The agent AGENT_PID must be the only one RUNNING (pidof
// gpuq-agent), or other programs' misses would be counted too. BPFTOOL is `bpftool prog show`: the
// kernel's recursion_misses of each program loaded (only the agent's programs are loaded then),
// PROM the agent's scrape once it is FIFO again and no skip can happen.
// gpuq_events_dropped_total{reason="prog_skipped"} must equal their sum, exactly, and be above 0,
// and gpuq_program_skipped_runs_total each program's: a program the agent does not count (the
// cgroup watcher's) must have none, or the sum would miss them. An agent that ignored a skip would
// export less.
#include "command.h"
#include "lines.h"
#include "mode_inputs.h"
#include "text_file.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

// "NAME N" per program of `bpftool prog show` (its first line "ID: type
// name NAME ... recursion_misses N"; bpftool prints the count only when it
// is not 0).
std::vector<std::string> ProgramMisses(const std::vector<std::string> &bpftool)
{
	std::vector<std::string> out;
	for (const std::string &line : bpftool) {
		const std::vector<std::string> f = Fields(line);
		const size_t colon = f.empty() ? 0 : f[0].find_first_not_of("0123456789");
		if (f.empty() || line[0] != f[0][0] || colon == 0 || colon != f[0].size() - 1 ||
		    f[0][colon] != ':')
			continue;
		std::string name;
		double misses = 0;
		for (size_t i = 0; i + 1 < f.size(); i++) {
			if (f[i] == "name")
				name = f[i + 1];
			if (f[i] == "recursion_misses")
				misses = AwkNumber(f[i + 1]);
		}
		out.push_back(name + " " + Number(misses));
	}
	return out;
}

// The values of the lines that begin with PREFIX, one a line, as awk
// prints $NF + 0.
std::string ValuesOf(const std::vector<std::string> &metrics, const std::string &prefix)
{
	std::string out;
	for (const std::string &line : metrics)
		if (line.compare(0, prefix.size(), prefix) == 0)
			out += (out.empty() ? "" : "\n") + Number(AwkNumber(Fields(line).back()));
	return out;
}

int ForcedSkips(const std::vector<std::string> &args)
{
	if (args.size() != 5)
		return UsageError("forced-skips CHECK AGENT_PID RUNNING BPFTOOL PROM");
	const std::string &check = args[0];
	if (args[2] != args[1]) {
		Fail(check, "another agent runs beside the tracepoint tier's (" + args[2] +
				"): its programs' misses would be counted too");
		return 0;
	}
	std::vector<std::string> bpftool, metrics;
	std::string error;
	if (!ReadLines(args[3], bpftool, error) || !ReadLines(args[4], metrics, error))
		return UsageError(error);
	const std::vector<std::string> kernel = ProgramMisses(bpftool);
	double want = 0;
	std::string per, bad, programs;
	for (const std::string &line : kernel) {
		const std::vector<std::string> f = Fields(line);
		const std::string name = f.size() > 0 ? f[0] : "", n = f.size() > 1 ? f[1] : "";
		want += AwkNumber(n);
		programs += line + ";";
		if (AwkNumber(n) > 0)
			per += (per.empty() ? "" : ", ") + name + " " + Number(AwkNumber(n));
		if (name.empty())
			continue;
		const std::string agent =
		    ValuesOf(metrics, "gpuq_program_skipped_runs_total{program=\"" + name + "\"}");
		if (agent.empty() && n == "0")
			continue;
		if (agent != n)
			bad += " " + name + ":agent-" + (agent.empty() ? "none" : agent) +
			       "-kernel-" + n;
	}
	std::string got = ValuesOf(metrics, "gpuq_events_dropped_total{reason=\"prog_skipped\"}");
	if (got.empty())
		got = "none";
	const std::string total = Number(want);
	if (want > 0 && got == total && bad.empty())
		Pass(check,
		     "the kernel skipped the agent's programs " + total + " times (" + per +
			 "); the agent exports prog_skipped " + got +
			 " and each program's count in gpuq_program_skipped_runs_total; drops: " +
			 Dropped(metrics));
	else if (want == 0)
		Fail(check,
		     "no program was skipped under SCHED_OTHER load: nothing forced (programs: " +
			 programs + ")");
	else
		Fail(check, "the kernel skipped the agent's programs " + total + " times (" + per +
				"), the agent exports prog_skipped " + got +
				"; per program:" + (bad.empty() ? " equal" : bad));
	return 0;
}

const Registration kForcedSkips("forced-skips", "CHECK AGENT_PID RUNNING BPFTOOL PROM",
				ForcedSkips);

} // namespace
} // namespace sim_check

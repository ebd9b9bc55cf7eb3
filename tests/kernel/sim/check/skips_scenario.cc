// sim_check skips-scenario CHECK KEY=VALUE...: the one run that lets the
// kernel skip the agent's programs. Every other check runs where no program
// can be skipped (the guest's processes share one SCHED_FIFO priority,
// sim/guest-init.sh); this one makes the kernel skip them, as on a user's
// host: the tracepoint tier's agent, a driver's burst and two loops of
// syscalls SCHED_OTHER, then the agent FIFO again, no other agent running
// (forced-skips judges). A kernel that never preempts a program (6.1:
// voluntary) cannot be made to skip one: the check is skipped there, naming
// the model.
//
//   gpu      the HWS GPU's id (the burst's)
//   cgroup   container B's cgroup directory
#include "command.h"
#include "guest_agent.h"
#include "guest_process.h"
#include "scenario_keys.h"
#include "sim_driver.h"
#include "verdict.h"

#include <csignal>
#include <cstdlib>
#include <sched.h>

namespace sim_check
{
namespace
{

const char *const kSkipsUsage = "CHECK gpu=HWS cgroup=B";

// Every thread of PID to POLICY (priority PRIORITY), as `chrt -a -p`.
void Schedule(pid_t pid, int policy, int priority)
{
	sched_param param{};
	param.sched_priority = priority;
	for (const std::string &task : Entries("/proc/" + std::to_string(pid) + "/task"))
		sched_setscheduler(std::atoi(task.c_str()), policy, &param);
}

int SkipsScenario(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (args.empty() || !keys.Parse(args, 1, { "gpu", "cgroup" }, error))
		return UsageError("skips-scenario: " + (error.empty() ? "no CHECK" : error) + "; " +
				  kSkipsUsage);
	const std::string &check = args[0];
	std::string model = ReadText("/sys/kernel/debug/sched/preempt");
	model = model.substr(0, model.find('\n'));
	const bool preempts = model.find("(full)") != std::string::npos ||
			      model.find("(lazy)") != std::string::npos ||
			      model.find("(rt)") != std::string::npos;
	if (!preempts || sched_getscheduler(0) != SCHED_FIFO) {
		Skip(check, "no skip can be forced: this kernel never preempts a BPF program "
			    "(sched/preempt: " +
				model + "); the newest kernel's guest runs this check");
		return 0;
	}
	std::signal(SIGPIPE, SIG_IGN);
	WriteText("/tmp/agent-skips.out", "");
	// the tracepoint tier's two hooks
	GuestAgent agent(9464, 2);
	agent.Start("skips", { "--probe-tier=tracepoint" });
	if (agent.Up().empty()) {
		Fail(check, "the tracepoint tier's agent did not serve with its probes attached");
		Dump(check, "/tmp/agent-skips.out");
		agent.Stop();
		return 0;
	}
	// every thread of it time-shared from now on, as on a user's host
	Schedule(agent.Pid(), SCHED_OTHER, 0);
	{
		SimDriver driver("d9", keys.Get("cgroup"));
		Schedule(driver.Pid(), SCHED_OTHER, 0);
		std::vector<pid_t> loops;
		for (int i = 0; i < 2; ++i)
			loops.push_back(Spawn({ "chrt", "-o", "0", "sh", "-c",
						"i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); : < "
						"/proc/uptime; done" },
					      {}));
		driver.Do("burst " + keys.Get("gpu") + " 300");
		for (pid_t loop : loops)
			Reap(loop);
		driver.Exit();
	}
	Schedule(agent.Pid(), SCHED_FIFO, 1);
	// the counts can no longer move; the agent reads the kernel's at each
	// scrape
	RunFor({ "bpftool", "prog", "show" }, "/tmp/skips-bpftool.txt", "/dev/null", 60);
	RunFor({ "pidof", "gpuq-agent" }, "/tmp/skips-pidof.txt", "/dev/null", 10);
	agent.Scrape();
	std::string running = ReadText("/tmp/skips-pidof.txt");
	running = running.substr(0, running.find('\n'));
	if (!Run("forced-skips", { check, std::to_string(agent.Pid()), running,
				   "/tmp/skips-bpftool.txt", kMetrics }))
		for (const char *log :
		     { "/tmp/skips-bpftool.txt", kMetrics, "/tmp/agent-skips.out" })
			Dump(check, log);
	agent.Stop();
	return 0;
}

const Registration kSkipsScenario("skips-scenario", kSkipsUsage, SkipsScenario);

} // namespace
} // namespace sim_check

// sim_check record-scenario KEY=VALUE...: `gpuq-agent record` as users run
// it. `record --container <A> -- sh -c ...` around a command that moves a
// driver into container A (record-command: the command's exit status comes
// back), while a driver in container B creates a queue during the
// recording (record-container: the capture holds A's operations only); then
// a bare `record` stopped by SIGINT after a queue of B's was created
// (record-sigint).
//
//   gpus        the HWS and MES GPUs' ids
//   cgroups     containers A's and B's cgroup directories
//   containers  their short ids (the container label's value)
#include "command.h"
#include "guest_process.h"
#include "scenario_keys.h"
#include "sim_driver.h"
#include "verdict.h"

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

const char *const kRecordUsage = "gpus=\"HWS MES\" cgroups=\"A B\" containers=\"A B\"";

// `--once -o prometheus --replay CAPTURE` into PROM (its stderr in ERRORS).
void Replay(const std::string &capture, const std::string &prom, const std::string &errors)
{
	RunFor({ "/bin/gpuq-agent", "--once", "-o", "prometheus", "--replay", capture }, prom,
	       errors, 60);
}

// `record --container A -- COMMAND`: COMMAND says it started (the recording
// is attached by then), waits until B's driver created rb1, then runs a
// driver of its own in A and exits 7.
void RecordCommand(const std::vector<std::string> &gpus, const std::vector<std::string> &cgroups,
		   const std::string &short_a, SimDriver &b)
{
	WriteText("/tmp/ra.cmds", "create ra1 " + gpus[0] + " aql\ncreate ra2 " + gpus[1] +
				      " sdma\ndestroy ra1\nexit\n");
	unlink("/tmp/rec.started");
	unlink("/tmp/rec.go");
	const std::string command =
	    ": > /tmp/rec.started; while [ ! -e /tmp/rec.go ]; do sleep 0.05; done; "
	    "echo $$ > " +
	    cgroups[0] +
	    "/cgroup.procs && /bin/kfd_sim_driver < /tmp/ra.cmds > /tmp/ra.out 2>&1; exit 7";
	SpawnOptions options;
	options.output = "/tmp/rec.log";
	const pid_t record =
	    Spawn({ "/bin/gpuq-agent", "record", "-o", "/tmp/rec.cap", "--no-runtime-lookup",
		    "--container", short_a, "--", "sh", "-c", command },
		  options);
	const double t0 = Uptime();
	while (!Exists("/tmp/rec.started") && Running(record) && Uptime() - t0 < 300)
		Nap(0.05);
	b.Do("create rb1 " + gpus[0] + " aql");
	WriteText("/tmp/rec.go", "");
	int rc = 124;
	if (WaitExit(record, 300 - (Uptime() - t0))) {
		rc = Reap(record);
	} else {
		kill(record, SIGKILL);
		Reap(record);
	}
	Dump("record", "/tmp/rec.log");
	AppendFile("/tmp/ra.out", kDriversOut);
	Verdict(rc == 7, "record-command",
		rc == 7 ? "the command's exit status 7 came back"
			: "exit " + std::to_string(rc) + ", want 7");
}

// A bare `record` until SIGINT (up to 60 s, then SIGKILL): its exit status.
int RecordUntilInterrupted(SimDriver &b, const std::string &mes)
{
	unlink("/tmp/int.cap");
	SpawnOptions options;
	options.output = "/tmp/int.log";
	const pid_t record = Spawn(
	    { "/bin/gpuq-agent", "record", "-o", "/tmp/int.cap", "--no-runtime-lookup" }, options);
	// the capture exists once its programs are attached
	const double t0 = Uptime();
	while (!Exists("/tmp/int.cap") && Running(record) && Uptime() - t0 < 180)
		Nap(0.1);
	b.Do("create rb2 " + mes + " sdma");
	return Interrupt(record);
}

int RecordScenario(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0, { "gpus", "cgroups", "containers" }, error))
		return UsageError("record-scenario: " + error + "; " + kRecordUsage);
	const std::vector<std::string> gpus = keys.Words("gpus");
	const std::vector<std::string> cgroups = keys.Words("cgroups");
	const std::vector<std::string> containers = keys.Words("containers");
	if (gpus.size() != 2 || cgroups.size() != 2 || containers.size() != 2)
		return UsageError(std::string("record-scenario ") + kRecordUsage);
	std::signal(SIGPIPE, SIG_IGN);
	SimDriver b("r2", cgroups[1]);
	RecordCommand(gpus, cgroups, containers[0], b);
	Replay("/tmp/rec.cap", "/tmp/rec.prom", "/tmp/rec-once.err");
	if (!Run("record-container",
		 { "/tmp/rec.prom", containers[0], containers[1], b.Output() })) {
		Dump("record-prom", "/tmp/rec.prom");
		Dump("record-prom", "/tmp/rec-once.err");
	}
	const int rc = RecordUntilInterrupted(b, gpus[1]);
	Dump("record-int", "/tmp/int.log");
	Replay("/tmp/int.cap", "/tmp/int.prom", "/tmp/int-once.err");
	if (!Run("record-sigint", { std::to_string(rc), "/tmp/int.prom", containers[1] }))
		Dump("record-int", "/tmp/int-once.err");
	b.Exit();
	return 0;
}

const Registration kRecordScenario("record-scenario", kRecordUsage, RecordScenario);

} // namespace
} // namespace sim_check

#include "max_hw_queues_scenario.h"

#include "check_plan.h"
#include "command.h"
#include "guest_process.h"
#include "lines.h"
#include "null_gpu.h"
#include "scrape.h"
#include "verdict.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

bool Said(const std::string &path, const std::string &prefix)
{
	std::vector<std::string> lines;
	ReadLines(path, lines);
	for (const std::string &line : lines)
		if (line.find(prefix) != std::string::npos)
			return true;
	return false;
}

bool SaidFirst(const std::string &path, const std::string &prefix)
{
	std::vector<std::string> lines;
	ReadLines(path, lines);
	return !StartingWith(lines, prefix).empty();
}

// One run at GPU_MAX_HW_QUEUES=N: "N:CONTAINER:RECORD-EXIT".
std::string HwQueuesRunArg(int port, bool fifo, const std::string &n)
{
	const std::string id = std::string(32, n[0]) + std::string(32, 'f');
	const std::string container = id.substr(0, 12);
	const std::string prefix = "/tmp/mhq" + n;
	NullGpuRun run;
	run.cgroup = "/sys/fs/cgroup/system.slice/docker-" + id + ".scope";
	run.control = "/tmp/ngctl-mhq" + n;
	run.truth = prefix + ".truth";
	run.gpus = "1xgfx90a";
	run.nodes = "1";
	run.fifo = fifo;
	mkdir(run.cgroup.c_str(), 0755);
	for (const char *suffix : { ".cap", ".rec", ".out", ".held", ".prom" })
		unlink((prefix + suffix).c_str());
	SpawnOptions options;
	options.output = prefix + ".rec";
	const pid_t record = Spawn({ "/bin/gpuq-agent", "record", "--from",
				     "http://127.0.0.1:" + std::to_string(port), "--container",
				     container, "-o", prefix + ".cap" },
				   options);
	double t0 = Uptime();
	while (!Said(prefix + ".rec", "until Ctrl-C") && Running(record) && Uptime() - t0 < 30)
		Nap(0.1);
	Ktime("mhq" + n + "-recording");
	int ends[2];
	pid_t program = -1;
	if (pipe2(ends, O_CLOEXEC) == 0) {
		program =
		    StartOnNullGpu(run, { "GPU_MAX_HW_QUEUES=" + n, "GPUQ_HIP_CLIENT_HOLD=1" },
				   { "/bin/hip_client", "queues", "8" }, ends[0], prefix + ".out");
		close(ends[0]);
	}
	t0 = Uptime();
	while (!SaidFirst(prefix + ".out", "HOLD") && !SaidFirst(prefix + ".out", "BAD") &&
	       Running(program) && Uptime() - t0 < 300)
		Nap(0.2);
	Ktime("mhq" + n + "-held");
	DumpThunk(run);
	// the truth while it holds its streams (it writes its own at exit)
	WriteText(prefix + ".held", ReadText(run.truth));
	t0 = Uptime();
	while (Scrape(port, prefix + ".prom"),
	       RunFor({ "/proc/self/exe", "max-hw-queues-live", "--wait", "/tmp/mhq",
			n + ":" + container },
		      prefix + ".agrees", "/dev/null", 60),
	       ReadText(prefix + ".agrees") != "agrees\n" && Uptime() - t0 < 30)
		Nap(0.3);
	Ktime("mhq" + n + "-agreed");
	const int recorded = Interrupt(record);
	Ktime("mhq" + n + "-recorded");
	// its stdin ends: it exits
	close(ends[1]);
	WaitExit(program, 60);
	Ktime("mhq" + n + "-exited");
	return n + ":" + container + ":" + std::to_string(recorded);
}

} // namespace

void MaxHwQueues(int port, bool fifo)
{
	const std::string why = MissingReason({ "missing", "hip-missing" });
	if (!why.empty()) {
		for (const std::string &check : kMaxHwQueuesChecks)
			Skip("max-hw-queues:" + check, why);
		return;
	}
	std::vector<std::string> live = { "/tmp/mhq" };
	for (const char *n : { "1", "8" })
		live.push_back(HwQueuesRunArg(port, fifo, n));
	if (!Run("max-hw-queues-live", live))
		for (const char *log :
		     { "/tmp/mhq1.out", "/tmp/mhq8.out", "/tmp/mhq1.truth", "/tmp/mhq8.truth",
		       "/tmp/mhq1.held", "/tmp/mhq8.held", "/tmp/mhq1.rec", "/tmp/mhq8.rec" })
			Dump("max-hw-queues:live", log);
	const int rc =
	    RunFor({ "/bin/gpuq-agent", "report", "hwq-1=/tmp/mhq1.cap", "hwq-8=/tmp/mhq8.cap" },
		   "/tmp/mhq-report.txt", "/tmp/mhq-report.err", 120);
	if (!Run("max-hw-queues-report", { "/tmp/mhq-report.txt", "/tmp/mhq-report.err",
					   std::to_string(rc), "/tmp/mhq", "1", "8" }))
		for (const char *log : { "/tmp/mhq-report.txt", "/tmp/mhq-report.err",
					 "/tmp/mhq1.held", "/tmp/mhq8.held" })
			Dump("max-hw-queues:report", log);
}

} // namespace sim_check

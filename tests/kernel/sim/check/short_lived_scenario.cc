// sim_check short-lived-scenario KEY=VALUE...: short-lived containers keep
// their names. Two Kubernetes Job containers (containerd's CRI layout: a
// cri-containerd scope under kubepods, the bundle's config.json with the CRI
// annotations, both removed the moment the task ends, as containerd does)
// each create queues and submit for about 2 s, then exit, while
// `record --from` records through the daemon's API (short-lived,
// api-record judge). The bundle stands for containerd's; the host tier
// (tests/bpf/short_lived_podman_test.sh) runs real podman containers for
// the doorbell series.
//
//   gpus   the HWS and MES GPUs' ids
#include "command.h"
#include "guest_agent.h"
#include "guest_process.h"
#include "lines.h"
#include "scenario_keys.h"
#include "scrape.h"
#include "sim_driver.h"
#include "verdict.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

const char *const kShortLivedUsage = "gpus=\"HWS MES\"";
const std::string kPod = "/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/"
			 "kubepods-besteffort-pod7c0ffee0_1234_4abc_8def_0123456789ab.slice";
const std::string kTasks = "/run/containerd/io.containerd.runtime.v2.task/k8s.io";
constexpr int kShortLivedPort = 9464;

// Job N's container id: b, then N in 63 digits.
std::string JobId(int n)
{
	char id[65];
	std::snprintf(id, sizeof(id), "b%063d", n);
	return id;
}

std::string JobCgroup(int n)
{
	return kPod + "/cri-containerd-" + JobId(n) + ".scope";
}

// Makes containerd's bundle for job N, then its cgroup, in containerd's
// order: the shim writes config.json before runc makes the cgroup, and the
// agent looks the container up as soon as the cgroup appears (cgroup_mkdir).
void CreateJob(int n)
{
	const std::string job = std::to_string(n);
	RunFor({ "mkdir", "-p", kTasks + "/" + JobId(n) }, "/dev/null", "", 10);
	WriteText(kTasks + "/" + JobId(n) + "/config.json",
		  "{\"ociVersion\":\"1.1.0\",\"annotations\":{\"io.kubernetes.cri.container-name\":"
		  "\"job-" +
		      job + "\",\"io.kubernetes.cri.sandbox-name\":\"batch-" + job +
		      "-xk2p\",\"io.kubernetes.cri.sandbox-namespace\":\"jobs\"}}");
	RunFor({ "mkdir", "-p", JobCgroup(n) }, "/dev/null", "", 10);
}

// What containerd does as soon as the task exits: the bundle goes, and the
// cgroup once the kernel lets it (up to 30 s).
void RemoveJob(int n)
{
	RunFor({ "rm", "-rf", kTasks + "/" + JobId(n) }, "/dev/null", "", 10);
	const double t0 = Uptime();
	while (rmdir(JobCgroup(n).c_str()) != 0 && Uptime() - t0 < 30)
		Nap(0.1);
}

// `record --from` the daemon's API until it says it records (30 s).
pid_t StartApiRecord()
{
	SpawnOptions options;
	options.output = "/tmp/api-rec.log";
	const pid_t pid =
	    Spawn({ "/bin/gpuq-agent", "record", "--from",
		    "http://127.0.0.1:" + std::to_string(kShortLivedPort), "-o", "/tmp/api.cap" },
		  options);
	const double t0 = Uptime();
	while (ReadText("/tmp/api-rec.log").find("until Ctrl-C") == std::string::npos &&
	       Running(pid) && Uptime() - t0 < 30)
		Nap(0.1);
	return pid;
}

void Jobs(const std::vector<std::string> &gpus)
{
	std::unique_ptr<SimDriver> jobs[2];
	for (int n = 1; n <= 2; ++n) {
		CreateJob(n);
		const std::string job = "s" + std::to_string(n);
		jobs[n - 1] =
		    std::make_unique<SimDriver>("short" + std::to_string(n), JobCgroup(n));
		jobs[n - 1]->Send("create " + job + "a " + gpus[0] + " aql");
		jobs[n - 1]->Send("create " + job + "b " + gpus[1] + " sdma");
		jobs[n - 1]->Send("submit " + job + "a 40");
	}
	Nap(2);
	for (auto &job : jobs)
		job->Leave();
	for (auto &job : jobs)
		job->AwaitGone();
	for (int n = 1; n <= 2; ++n)
		RemoveJob(n);
}

int ShortLivedScenario(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0, { "gpus" }, error))
		return UsageError("short-lived-scenario: " + error + "; " + kShortLivedUsage);
	const std::vector<std::string> gpus = keys.Words("gpus");
	if (gpus.size() != 2)
		return UsageError(std::string("short-lived-scenario ") + kShortLivedUsage);
	std::signal(SIGPIPE, SIG_IGN);
	WriteText("/tmp/agent-short.out", "");
	GuestAgent agent(kShortLivedPort, 4, true);
	agent.Start("short", { "--runtime.run-dir", "/run", "--recording.dir", "/tmp/recs" });
	const pid_t record = StartApiRecord();
	Jobs(gpus);
	Nap(3);
	agent.Scrape();
	if (!Run("short-lived", { kMetrics })) {
		std::vector<std::string> lines, shown;
		ReadLines(kMetrics, lines);
		for (const std::string &line : lines)
			if (line.find("job-") != std::string::npos ||
			    line.find("container=\"b0000") != std::string::npos ||
			    line.find("unresolved") != std::string::npos ||
			    StartsWith(line, "gpuq_events_dropped_total"))
				shown.push_back(line);
		WriteText("/tmp/short.prom", Join(shown, "\n") + "\n");
		for (const char *log :
		     { "/tmp/short.prom", "/tmp/agent-short.out", "/tmp/short1.out" })
			Dump("short-lived", log);
	}
	const int rc = Interrupt(record);
	Dump("api-record", "/tmp/api-rec.log");
	Scrape(kShortLivedPort, "/tmp/m-api.prom");
	RunFor({ "/bin/gpuq-agent", "--once", "-o", "prometheus", "--replay", "/tmp/api.cap" },
	       "/tmp/api.prom", "/tmp/api-once.err", 60);
	const int report_rc =
	    RunFor({ "/bin/gpuq-agent", "report", "/tmp/api.cap" }, "/tmp/api-report.txt", "", 60);
	if (!Run("api-record",
		 { std::to_string(rc), std::to_string(report_rc), "/tmp/m-api.prom",
		   "/tmp/api.prom", "/tmp/api-report.txt", kMetrics, "/tmp/api-diff.txt" }))
		for (const char *log : { "/tmp/api-diff.txt", "/tmp/api-report.txt",
					 "/tmp/api-once.err", "/tmp/agent-short.out" })
			Dump("api-record-diff", log);
	agent.Stop();
	return 0;
}

const Registration kShortLivedScenario("short-lived-scenario", kShortLivedUsage,
				       ShortLivedScenario);

} // namespace
} // namespace sim_check

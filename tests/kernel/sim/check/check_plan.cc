// sim_check expected-checks sim KEY=VALUE... | qemu KEY=VALUE...
//   the checks a guest of that tier and scope must report, one per line
// sim_check client-plan KEY=VALUE...
//   the runtime client groups a main pair of the simulator tier runs,
//   comma-separated (its guests' GPUQ_CLIENTS)
// sim_check judge-guest LABEL LOG EXPECTED BOOT-RC
//   one "ok   - ", "FAIL - " or "skip - " line per check EXPECTED lists (a
//   file, one per line) from the guest's "GPUQ-KTEST <label> <check>
//   PASS|FAIL|SKIP <detail>" lines in LOG; a check without one fails, and so
//   does one the guest reported that EXPECTED lacks (it would never be
//   counted, even when it passes: seen with two new checks). A FAIL is
//   followed by its group's log lines, indented.
//
// The simulator tier's keys:
//   scope     btf (the simulator with its BTF: the fentry and kprobe tiers,
//             the runtime clients in btf-fentry and btf-kprobe, record,
//             short-lived, partitions), nobtf (reloaded without it: the
//             args-kprobe and tracepoint tiers and their clients, the forced
//             skips), programs, or "" (all)
//   contexts  1: the kernel's amdkfd has secondary KFD contexts (7.2+)
//   series    the guest's kernel series; newest: the newest main pair's
//   split     1: two main pairs split the client groups (client-plan)
//   stacks    the ROCm stacks ("6.4 7.2")
// The QEMU tier's: scope (full, or attach: no record and no daemon runs),
// probes and tp-probes (the hooks, "probe:function" each).
#include "check_plan.h"

#include "command.h"
#include "lines.h"
#include "scenario_keys.h"

#include <cstdio>
#include <set>

namespace sim_check
{

const std::vector<std::string> kRocrChecks = { "start",	   "queues",  "creates",   "submissions",
					       "pending",  "drained", "doorbells", "destroys",
					       "teardown", "stops" };
const std::vector<std::string> kHipChecks = { "start",	     "queues",	 "creates",
					      "submissions", "pending",	 "drained",
					      "doorbells",   "teardown", "stops" };
const std::vector<std::string> kMaxHwQueuesChecks = { "live", "report" };
const std::vector<std::string> kProgramTiers = { "btf-fentry", "btf-kprobe", "args-kprobe",
						 "tracepoint" };
const std::vector<std::string> kProgramChecks = { "start",	    "live",	 "experiment",
						  "experiment-7.2", "doorbells", "teardown",
						  "stops" };

const std::vector<std::string> &ClientChecks(const std::string &group)
{
	return StartsWith(group, "hip") || StartsWith(group, "rocblas") ? kHipChecks : kRocrChecks;
}

namespace
{

const std::vector<std::string> kPartitionChecks = { "reload", "queues", "gpu-info", "physical",
						    "once" };

void Add(std::vector<std::string> &out, const std::string &group,
	 const std::vector<std::string> &checks)
{
	for (const std::string &check : checks)
		out.push_back(group + ":" + check);
}

// Every client in every probe tier: the group's name alone is btf-fentry,
// -kprobe btf-kprobe, -args args-kprobe, -tp tracepoint. One main pair (the
// default) runs every group. With two (GPUQ_KTEST_MAINS), every client in
// btf-fentry runs on each, the other tiers of the 5.2.3 clients on the
// older kernel and of the 2026 stacks on the newer (every client in every
// tier took 696 s of the 7.3 guest's 1312 s, one run per tier).
std::vector<std::string> ClientPlan(const ScenarioKeys &keys)
{
	const std::vector<std::string> stacks = keys.Words("stacks");
	const bool split = keys.Get("split") == "1";
	const bool newest = keys.Get("series") == keys.Get("newest");
	std::vector<std::string> plan = { "rocr", "hip" };
	for (const std::string &s : stacks)
		plan.insert(plan.end(), { "rocr-" + s, "hip-" + s });
	plan.push_back("rocblas-6.4");
	const std::vector<std::string> suffixes = { "-kprobe", "-args", "-tp" };
	if (!split || !newest)
		for (const char *client : { "rocr", "hip" })
			for (const std::string &suffix : suffixes)
				plan.push_back(client + suffix);
	if (!split || newest) {
		for (const std::string &s : stacks)
			for (const std::string &client :
			     std::vector<std::string>{ "rocr-" + s, "hip-" + s })
				for (const std::string &suffix : suffixes)
					plan.push_back(client + suffix);
		for (const std::string &suffix : suffixes)
			plan.push_back("rocblas-6.4" + suffix);
	}
	return plan;
}

// The lifecycle checks of each probe tier's group.
void TierChecks(std::vector<std::string> &out, const std::vector<std::string> &groups,
		bool contexts)
{
	for (const std::string &group : groups) {
		std::vector<std::string> extra;
		if (group == "fentry" || group == "kprobe")
			extra = { "gws",	   "restart-seeded",	"after-restart",
				  "runlist",	   "runlist-durations", "oversubscription-xnack",
				  "evicted-queues" };
		// the BTF-free tiers restart fresh (docs/probe-tiers.md "What differs")
		else if (group == "args")
			extra = { "gws",     "restart-seeded",	  "after-restart", "fresh-start",
				  "runlist", "runlist-durations", "evicted-queues" };
		else
			extra = { "restart-seeded", "after-restart", "fresh-start", "runlist",
				  "runlist-lifecycle" };
		// 7.2+: a secondary KFD context's queues and teardown
		if (contexts)
			extra.insert(extra.begin(), { "context-teardown", "context" });
		std::vector<std::string> checks = { "serves",
						    "attached",
						    "sysfs-inventory",
						    "queues",
						    "processes",
						    "creates",
						    "destroys",
						    "exits",
						    "create-failures",
						    "queue-type-labels",
						    "once" };
		checks.insert(checks.end(), extra.begin(), extra.end());
		checks.insert(checks.end(),
			      { "burst", "oversubscription", "evictions", "submissions",
				"gtt-queue", "priority-update", "cu-mask", "final", "stops" });
		Add(out, group, checks);
	}
}

// The checks of the runtime client groups the guest with (BTF) or without
// it runs, and the start and stops checks of the agents watching them.
void ClientGroupChecks(std::vector<std::string> &out, const ScenarioKeys &keys, bool btf)
{
	for (const char *agents : btf ? std::vector<const char *>{ "clients", "clients-kprobe" }
				      : std::vector<const char *>{ "clients-args", "clients-tp" })
		Add(out, agents, { "start", "stops" });
	for (const std::string &group : ClientPlan(keys)) {
		const bool nobtf_group = EndsWith(group, "-args") || EndsWith(group, "-tp");
		if (nobtf_group != !btf)
			continue;
		Add(out, group, ClientChecks(group));
	}
}

std::vector<std::string> SimChecks(const ScenarioKeys &keys)
{
	const std::string scope = keys.Get("scope");
	const bool contexts = keys.Get("contexts") == "1";
	std::vector<std::string> out = { "insmod", "btf-flavor", "agent-version" };
	if (scope == "btf" || scope.empty()) {
		TierChecks(out, { "fentry", "kprobe" }, contexts);
		ClientGroupChecks(out, keys, true);
		// beside the rocr client's agent: the deployment's capabilities,
		// and without CAP_SYS_PTRACE
		out.insert(out.end(), { "rocr:least-privilege", "rocr:no-ptrace", "record-command",
					"record-container", "record-sigint", "short-lived-named",
					"api-record" });
		Add(out, "max-hw-queues", kMaxHwQueuesChecks);
		Add(out, "partitions", kPartitionChecks);
		Add(out, "partitions-dpx", kPartitionChecks);
	}
	if (scope == "nobtf" || scope.empty()) {
		out.insert(out.end(), { "nobtf-reload", "kprobes-off" });
		TierChecks(out, { "args", "tracepoint" }, contexts);
		out.push_back("skips:forced");
		ClientGroupChecks(out, keys, false);
	}
	if (scope == "programs" || scope.empty()) {
		out.insert(out.end(), { "programs:reload", "programs:run", "programs:report" });
		for (const std::string &tier : kProgramTiers)
			Add(out, "programs-" + tier, kProgramChecks);
	}
	out.insert(out.end(), { "drivers", "kernel-clean" });
	return out;
}

std::vector<std::string> ProbeNames(const ScenarioKeys &keys, const std::string &key)
{
	std::vector<std::string> names;
	for (const std::string &pair : keys.Words(key))
		names.push_back(pair.substr(0, pair.find(':')));
	return names;
}

std::vector<std::string> QemuChecks(const ScenarioKeys &keys)
{
	std::vector<std::string> probes = ProbeNames(keys, "probes");
	probes.push_back("exit-code");
	std::vector<std::string> out = { "modprobe-amdgpu", "agent-version", "hook-presence" };
	for (const char *mode : { "fentry", "kprobe", "args", "nobtf", "btf" })
		Add(out, std::string("check-") + mode, probes);
	out.insert(out.end(), { "check:preemption", "kprobes-off" });
	std::vector<std::string> tp = ProbeNames(keys, "tp-probes");
	tp.push_back("exit-code");
	Add(out, "check-tp", tp);
	Add(out, "check-verify",
	    { "fentry", "kprobe", "args-kprobe", "tracepoint", "doorbell", "doorbell-preemption" });
	out.insert(out.end(), { "nobtf-reload", "kernel-clean" });
	if (keys.Get("scope") == "attach")
		return out;
	const std::vector<std::string> daemon_tail = { "create-failure", "queue-priority",
						       "process-exit",	 "no-queues",
						       "no-drops",	 "attribution",
						       "stops" };
	std::vector<std::string> tp_daemon = { "serves", "kfdtest", "attached:tp_ioctl",
					       "attached:tp_exit" };
	tp_daemon.insert(tp_daemon.end(), daemon_tail.begin(), daemon_tail.end());
	Add(out, "daemon-tp", tp_daemon);
	out.insert(out.end(), { "core-flavor", "core-sched", "record:runs", "record:create-failed",
				"record:process-exit", "record:no-queue-records" });
	for (const char *mode : { "fentry", "kprobe", "args", "nobtf", "btf" }) {
		std::vector<std::string> checks = { "serves", "kfdtest" };
		for (const std::string &probe : ProbeNames(keys, "probes"))
			checks.push_back("attached:" + probe);
		checks.insert(checks.end(), daemon_tail.begin(), daemon_tail.end());
		Add(out, std::string("daemon-") + mode, checks);
	}
	return out;
}

int ExpectedChecks(const std::vector<std::string> &args)
{
	const char *usage =
	    "sim scope=S contexts=0|1 series=S newest=S split=0|1 stacks=\"S...\" | "
	    "qemu scope=full|attach probes=\"P:F...\" tp-probes=\"P:F...\"";
	ScenarioKeys keys;
	std::string error;
	if (args.empty() || (args[0] != "sim" && args[0] != "qemu"))
		return UsageError(std::string("expected-checks ") + usage);
	const bool sim = args[0] == "sim";
	if (!keys.Parse(args, 1,
			sim ? std::vector<std::string>{ "scope", "contexts", "series", "newest",
							"split", "stacks" }
			    : std::vector<std::string>{ "scope", "probes", "tp-probes" },
			error))
		return UsageError("expected-checks: " + error + "; " + usage);
	for (const std::string &check : sim ? SimChecks(keys) : QemuChecks(keys))
		std::printf("%s\n", check.c_str());
	return 0;
}

int ClientPlanCommand(const std::vector<std::string> &args)
{
	const char *usage = "series=S newest=S split=0|1 stacks=\"S...\"";
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0, { "series", "newest", "split", "stacks" }, error))
		return UsageError("client-plan: " + error + "; " + usage);
	std::printf("%s\n", Join(ClientPlan(keys), ",").c_str());
	return 0;
}

int JudgeGuest(const std::vector<std::string> &args)
{
	if (args.size() != 4)
		return UsageError("judge-guest LABEL LOG EXPECTED BOOT-RC");
	const std::string &label = args[0], &log = args[1], &boot_rc = args[3];
	std::vector<std::string> lines, expected;
	std::string error;
	if (!ReadLines(log, lines, error) || !ReadLines(args[2], expected, error))
		return UsageError(error);
	const std::string marker = "GPUQ-KTEST " + label + " ";
	// the last verdict of each check, as "STATUS DETAIL"
	std::vector<std::pair<std::string, std::string>> reported;
	for (const std::string &line : lines) {
		const size_t at = line.find(marker);
		if (at == std::string::npos)
			continue;
		const std::string rest = line.substr(at + marker.size());
		const size_t space = rest.find(' ');
		if (space == std::string::npos)
			continue;
		const std::string check = rest.substr(0, space);
		std::string verdict = rest.substr(space + 1);
		if (!StartsWith(verdict, "PASS") && !StartsWith(verdict, "FAIL") &&
		    !StartsWith(verdict, "SKIP"))
			continue;
		reported.emplace_back(check, verdict);
	}
	auto last = [&reported](const std::string &check) -> const std::string * {
		const std::string *found = nullptr;
		for (const auto &[name, verdict] : reported)
			if (name == check)
				found = &verdict;
		return found;
	};
	auto group_log = [&lines, &label, &log](const std::string &check) {
		const std::string prefix =
		    "GPUQ-LOG " + label + " " + check.substr(0, check.find(':')) + "| ";
		std::string out;
		int n = 0;
		for (const std::string &line : lines)
			if (line.find(prefix) != std::string::npos && n++ < 60)
				out += "       " + line + "\n";
		return out + "       full log: " + log + "\n";
	};
	const std::set<std::string> want(expected.begin(), expected.end());
	for (const std::string &check : expected) {
		if (check.empty())
			continue;
		const std::string *verdict = last(check);
		const std::string name = label + " " + check;
		if (!verdict) {
			std::printf("FAIL - %s: no result from the guest (qemu exit %s; see %s)\n",
				    name.c_str(), boot_rc.c_str(), log.c_str());
			continue;
		}
		const std::string detail = verdict->size() > 5 ? verdict->substr(5) : "";
		if (StartsWith(*verdict, "PASS"))
			std::printf("ok   - %s: %s\n", name.c_str(), detail.c_str());
		else if (StartsWith(*verdict, "SKIP"))
			std::printf("skip - %s: %s\n", name.c_str(), detail.c_str());
		else
			std::printf("FAIL - %s: %s\n%s", name.c_str(), detail.c_str(),
				    group_log(check).c_str());
	}
	std::set<std::string> unexpected;
	for (const auto &[check, verdict] : reported)
		if (!want.count(check))
			unexpected.insert(check);
	for (const std::string &check : unexpected) {
		const std::string &verdict = *last(check);
		if (StartsWith(verdict, "FAIL"))
			std::printf("FAIL - %s %s: %s\n", label.c_str(), check.c_str(),
				    verdict.size() > 5 ? verdict.substr(5).c_str() : "");
		else
			std::printf("FAIL - %s %s: the guest reported %s for a check the host does "
				    "not expect (add it to sim_check's check_plan.cc, or it is "
				    "never counted)\n",
				    label.c_str(), check.c_str(), verdict.substr(0, 4).c_str());
	}
	return 0;
}

const Registration kExpectedChecks("expected-checks", "sim|qemu KEY=VALUE...", ExpectedChecks);
const Registration kClientPlan("client-plan", "series=S newest=S split=0|1 stacks=\"S...\"",
			       ClientPlanCommand);
const Registration kJudgeGuest("judge-guest", "LABEL LOG EXPECTED BOOT-RC", JudgeGuest);

} // namespace
} // namespace sim_check

#include "tier_agents.h"

#include "guest_process.h"
#include "lines.h"
#include "verdict.h"

#include <csignal>

namespace sim_check
{
namespace
{

// The doorbell uprobes the exposition LINES says are attached.
int DoorbellUprobes(const std::vector<std::string> &lines)
{
	int attached = 0;
	for (const std::string &line : StartingWith(lines, "gpuq_probe_attached{probe=\"doorbell_"))
		attached += EndsWith(line, "tier=\"uprobe\"} 1");
	return attached;
}

} // namespace

int TierPort(const std::string &tier)
{
	if (tier == "btf-kprobe")
		return 9472;
	if (tier == "args-kprobe")
		return 9473;
	if (tier == "tracepoint")
		return 9474;
	return 9471;
}

std::vector<std::string> TierFlags(const std::string &tier)
{
	if (tier == "btf-kprobe")
		return { "--no-fentry" };
	if (tier == "args-kprobe")
		return { "--probe-tier=args" };
	if (tier == "tracepoint")
		return { "--probe-tier=tracepoint" };
	return {};
}

std::string TierAgents::Absent(const std::string &tier) const
{
	std::vector<std::string> lines;
	ReadLines(kMetrics, lines);
	std::string absent;
	for (const std::string &probe : tier == "tracepoint" ? tp_probes_ : probes_) {
		bool attached = false;
		for (const std::string &line :
		     StartingWith(lines, "gpuq_probe_attached{probe=\"" + probe + "\","))
			attached |= EndsWith(line, "tier=\"" + tier + "\"} 1");
		if (!attached)
			absent += " " + probe;
	}
	return absent;
}

void TierAgents::Drop(TierAgent &member, const std::string &why)
{
	member.left = why;
	if (member.agent->Pid() > 0)
		kill(member.agent->Pid(), SIGTERM);
}

void TierAgents::Up(TierAgent &member, const std::string &runtimes)
{
	const std::string check = member.group + ":start";
	const std::string log = "/tmp/agent-" + member.group + ".out";
	GuestAgent &agent = *member.agent;
	const std::string tier_flags = Join(TierFlags(member.tier), " ");
	if (agent.Up().empty()) {
		Fail(check, "the agent (" + tier_flags +
				") never served /metrics with its probes attached");
		Dump(member.group, log);
		Dump(member.group, kMetrics);
		Drop(member, "it never served /metrics with its probes attached");
		return;
	}
	std::string absent = Absent(member.tier);
	std::vector<std::string> lines;
	ReadLines(kMetrics, lines);
	member.doorbells = DoorbellUprobes(lines);
	if (member.doorbells == 0)
		absent += " doorbell-uprobes";
	if (!absent.empty()) {
		Fail(check, "not attached in tier " + member.tier + ":" + absent + " (" +
				Join(StartingWith(lines, "gpuq_probe_attached{"), " ") + ")");
		Dump(member.group, log);
		Dump(member.group, kMetrics);
		Drop(member, "not attached in tier " + member.tier + ":" + absent);
		return;
	}
	Pass(check, "agent up after " + agent.Up() + "s: lifecycle probes in tier " + member.tier +
			", " + std::to_string(member.doorbells) +
			" doorbell uprobes (--hsa-runtime files: " + runtimes + "); " +
			std::to_string(agents_.size()) + " agent(s) at once");
}

void TierAgents::Start(const std::vector<std::string> &flags,
		       const std::vector<std::string> &groups,
		       const std::vector<std::string> &tiers, double limit)
{
	WriteText("/tmp/base.truth", ReadText("/sys/kernel/debug/kfd_sim/truth"));
	std::string runtimes;
	for (size_t i = 0; i + 1 < flags.size(); ++i)
		if (flags[i] == "--hsa-runtime")
			runtimes += flags[i + 1] + " ";
	for (size_t i = 0; i < groups.size() && i < tiers.size(); ++i) {
		TierAgent member;
		member.group = groups[i];
		member.tier = tiers[i];
		member.agent = std::make_unique<GuestAgent>(TierPort(tiers[i]),
							    tiers[i] == "tracepoint" ? 2 : 4);
		std::vector<std::string> all = flags;
		for (const std::string &flag : TierFlags(tiers[i]))
			all.push_back(flag);
		member.agent->Launch(member.group, all);
		agents_.push_back(std::move(member));
	}
	for (TierAgent &member : agents_) {
		member.agent->Await(limit);
		Up(member, runtimes);
	}
}

std::vector<TierAgent *> TierAgents::Present()
{
	std::vector<TierAgent *> present;
	for (TierAgent &member : agents_)
		if (member.left.empty())
			present.push_back(&member);
	return present;
}

void TierAgents::Stop()
{
	for (TierAgent &member : agents_) {
		const std::string result = member.agent->Stop();
		if (!member.left.empty())
			continue;
		Verdict(result == "exit 0", member.group + ":stops", result + " after SIGTERM");
		Dump(member.group, "/tmp/agent-" + member.group + ".out");
	}
}

} // namespace sim_check

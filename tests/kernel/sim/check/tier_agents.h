// The probe tiers' agents when several run at once (the programs group runs
// one per tier: kprobes, fentry, tracepoints and uprobes all take several
// consumers), each on its tier's port with its tier's flags. Each agent has
// a group of its own (its start and stops checks).
#ifndef GPUQ_SIM_CHECK_TIER_AGENTS_H
#define GPUQ_SIM_CHECK_TIER_AGENTS_H

#include "guest_agent.h"

#include <memory>
#include <string>
#include <vector>

namespace sim_check
{

// The port of TIER's agent (btf-fentry, btf-kprobe, args-kprobe,
// tracepoint).
int TierPort(const std::string &tier);
// The flags that put an agent in TIER.
std::vector<std::string> TierFlags(const std::string &tier);

struct TierAgent {
	std::string group;
	std::string tier;
	std::unique_ptr<GuestAgent> agent;
	int doorbells = 0; // its doorbell uprobes attached
	std::string left;  // why it left the runs ("": it is in them)
};

class TierAgents
{
      public:
	// PROBES: the lifecycle probes every function tier attaches;
	// TP_PROBES the tracepoint tier's.
	TierAgents(std::vector<std::string> probes, std::vector<std::string> tp_probes)
	    : probes_(std::move(probes)), tp_probes_(std::move(tp_probes))
	{
	}

	// An agent per GROUPS[i] in TIERS[i] with FLAGS and its tier's own,
	// started together (their programs load on the one vCPU at once), the
	// simulator's truth now their base; then each up within LIMIT seconds
	// with its lifecycle probes and doorbell uprobes attached (its
	// GROUP:start check) or gone.
	void Start(const std::vector<std::string> &flags, const std::vector<std::string> &groups,
		   const std::vector<std::string> &tiers, double limit);
	// The agents still in the runs.
	std::vector<TierAgent *> Present();
	// Every agent, those that left too.
	std::vector<TierAgent> &All()
	{
		return agents_;
	}
	// Each agent stops on SIGTERM (its GROUP:stops check); those that left
	// are reaped.
	void Stop();
	// TIER's lifecycle probes not attached in TIER in the last scrape
	// (kMetrics), each after a space; "" when all are.
	std::string Absent(const std::string &tier) const;
	// MEMBER leaves the runs for WHY, stopped (Stop reaps it).
	void Drop(TierAgent &member, const std::string &why);

      private:
	void Up(TierAgent &member, const std::string &runtimes);

	std::vector<std::string> probes_;
	std::vector<std::string> tp_probes_;
	std::vector<TierAgent> agents_;
};

} // namespace sim_check

#endif

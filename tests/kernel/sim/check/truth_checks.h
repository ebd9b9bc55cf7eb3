// A scenario's comparisons of an agent's families with the simulator's
// truth (through sim_compare, tests/kernel/sim/sim_compare.cc) and their
// verdicts: what the guest's compare_once, converge, expect_truth,
// expect_exported, expect_absent and labels_check (sim/guest-init.sh) do
// in shell. Families are given space-separated, as the guest lists them.
#ifndef GPUQ_SIM_CHECK_TRUTH_CHECKS_H
#define GPUQ_SIM_CHECK_TRUTH_CHECKS_H

#include "guest_agent.h"

#include <string>
#include <utility>

namespace sim_check
{

constexpr const char *kSimTruth = "/sys/kernel/debug/kfd_sim/truth";
// The lifecycle families every scenario compares (the guest's LIFECYCLE).
constexpr const char *kLifecycleFamilies =
    "gpuq_queues gpuq_processes gpuq_queue_creates_total gpuq_queue_destroys_total "
    "gpuq_process_exits_total gpuq_queue_create_failures_total";

class TruthChecks
{
      public:
	// AGENT: the daemon compared (every container's series); TIER: its
	// probe tier, for what it must not export.
	TruthChecks(GuestAgent &agent, std::string tier) : agent_(agent), tier_(std::move(tier))
	{
	}

	// sim_compare of FAMILIES in METRICS with the truth now (the
	// simulator's, the drivers' /tmp/drv.truth and earlier client runs'
	// /tmp/drv.past) from /tmp/base.truth, into /tmp/cmp.out; true when
	// equal.
	bool CompareOnce(const std::string &families, const std::string &metrics) const;
	// Scrapes until FAMILIES equal the truth (events are in flight through
	// the ring buffer) or 30 s pass.
	bool Converge(const std::string &families) const;
	// Converge, then the verdict (expect-truth); on a FAIL the truth, the
	// queues sysfs and the agent's programs hold go to the log.
	void ExpectTruth(const std::string &check, const std::string &families) const;
	// ExpectTruth, or SKIP while the agent exports none of a family
	// (PENDING says whose work that is).
	void ExpectExported(const std::string &check, const std::string &families,
			    const std::string &pending) const;
	// The agent exports no series of FAMILIES (families-absent).
	void ExpectAbsent(const std::string &check, const std::string &families) const;
	// The agent's queue_type labels on kernel SERIES (queue-type-labels),
	// with the negative control of the other kernels' numbering.
	void LabelsCheck(const std::string &check, const std::string &series) const;
	// Those of FAMILIES the last scrape has no TYPE line for ("" for none).
	std::string Missing(const std::string &families) const;

      private:
	GuestAgent &agent_;
	std::string tier_;
};

} // namespace sim_check

#endif

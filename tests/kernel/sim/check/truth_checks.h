// A scenario's comparisons of an agent's families with the simulator's
// truth (through sim_compare, tests/kernel/sim/sim_compare.cc) and with the
// null GPUs' thunks, and their verdicts. Families are given space-separated,
// as sim_compare reads them.
#ifndef GPUQ_SIM_CHECK_TRUTH_CHECKS_H
#define GPUQ_SIM_CHECK_TRUTH_CHECKS_H

#include "guest_agent.h"

#include <string>
#include <utility>

namespace sim_check
{

constexpr const char *kSimTruth = "/sys/kernel/debug/kfd_sim/truth";
// The lifecycle families every scenario compares (the guest's LIFECYCLE).
// The null GPUs' thunk truths as truth lines (thunk-lines): what the
// runtime clients' checks compare with.
constexpr const char *kThunkLines = "/tmp/ng.lines";
// The runlist families.
constexpr const char *kRunlistFamilies =
    "gpuq_runlist_unmaps_total gpuq_runlist_unmap_duration_seconds_count "
    "gpuq_runlist_map_duration_seconds_count gpuq_runlist_failures_total "
    "gpuq_runlist_operations_total gpuq_queue_preemptions_total "
    "gpuq_queue_preempted_seconds_total";
// The BTF tiers read the runlist at each HWS map (docs/kfd-probe-points.md).
constexpr const char *kOversubscriptionFamilies =
    "gpuq_runlist_oversubscribed gpuq_runlist_oversubscribed_maps_total "
    "gpuq_runlist_oversubscribed_seconds_total gpuq_runlist_entries gpuq_runlist_entry_limit";
// The submission families.
constexpr const char *kSubmissionFamilies = "gpuq_submissions_total gpuq_queue_pending_packets";
constexpr const char *kLifecycleFamilies =
    "gpuq_queues gpuq_processes gpuq_queue_creates_total gpuq_queue_destroys_total "
    "gpuq_process_exits_total gpuq_queue_create_failures_total";

// METRICS' FAMILIES against the null GPUs' thunk truths alone (kThunkLines),
// into OUTPUT; true when equal. With ONLY (a container label) that
// container's series alone.
bool CompareWithThunks(const std::string &families, const std::string &only,
		       const std::string &metrics, const std::string &output);

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
	// equal. With ONLY (a container label) that container's series alone.
	bool CompareOnce(const std::string &families, const std::string &metrics,
			 const std::string &only = "") const;
	// The last scrape's FAMILIES against the null GPUs' thunk truths alone
	// (kThunkLines), into /tmp/cmpt.out; ONLY as CompareOnce.
	bool CompareThunk(const std::string &families, const std::string &only) const;
	// A runtime client's families: Converge on SIM_FAMILIES (the thunk's
	// submissions and pending packets in /tmp/drv.truth), then the same
	// scrape's THUNK_FAMILIES against the thunks' truth (CompareThunk with
	// ONLY); the verdict (expect-both), the comparisons in the log on a FAIL.
	void ExpectBoth(const std::string &check, const std::string &sim_families,
			const std::string &thunk_families, const std::string &only) const;
	// The last scrape's non-zero gpuq_events_dropped_total series, their
	// labels space-separated, or "none".
	std::string Dropped() const;
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

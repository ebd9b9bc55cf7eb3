// Sampling with the deployment's capabilities: two more agents beside a
// client run's, as the least-privilege image runs (capbound: the capability
// half of deploy/README.md's flags; the guest has no container runtime):
// "leastpriv" with exactly CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN and
// CAP_SYS_PTRACE, "noptrace" without CAP_SYS_PTRACE. The client is root with
// every capability, as a container's processes are. They run the tracepoint
// tier, the cheapest to load (the run's own agents load theirs at the same
// time on the one vCPU): what they check is sampling, which every tier does
// alike.
#ifndef GPUQ_SIM_CHECK_LEAST_PRIVILEGE_AGENTS_H
#define GPUQ_SIM_CHECK_LEAST_PRIVILEGE_AGENTS_H

#include <string>
#include <sys/types.h>
#include <vector>

namespace sim_check
{

class LeastPrivilegeAgents
{
      public:
	// Starts both, each up with TP_PROBES (the tracepoint tier's KFD
	// hooks) attached within 180 s or gone.
	explicit LeastPrivilegeAgents(const std::vector<std::string> &tp_probes);
	// Stops both.
	~LeastPrivilegeAgents();
	LeastPrivilegeAgents(const LeastPrivilegeAgents &) = delete;
	LeastPrivilegeAgents &operator=(const LeastPrivilegeAgents &) = delete;

	// With kThunkLines the client's thunk truth: PREFIX:least-privilege once
	// "leastpriv" counts its submissions and pending packets as the thunk
	// says (or 30 s pass), PREFIX:no-ptrace once "noptrace" denies samples.
	void Check(const std::string &prefix);

      private:
	pid_t leastpriv_ = -1;
	pid_t noptrace_ = -1;
};

} // namespace sim_check

#endif

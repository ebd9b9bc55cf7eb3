// The checks each kernel tier's guest reports, one list for both sides: the
// scenarios report them (clients_scenario.cc, programs_scenario.cc...) and
// the hosts (run_sim_tier.sh, run_qemu_tier.sh) expect exactly them
// (`sim_check expected-checks`, then `sim_check judge-guest`): a check
// expected and never reported fails, and so does one reported and not
// expected.
#ifndef GPUQ_SIM_CHECK_CHECK_PLAN_H
#define GPUQ_SIM_CHECK_CHECK_PLAN_H

#include <string>
#include <vector>

namespace sim_check
{

// A runtime client group's checks (rocr, rocr-6.4, ... in every probe tier):
// Debian's real ROCr on the null GPU forwarding to the simulator.
extern const std::vector<std::string> kRocrChecks;
// HIP's and rocBLAS's: hip_client's serve mode never destroys a stream, so
// there is no destroy ioctl before the exit and no destroys check (HIP 5.2.3
// does destroy a stream's hardware queue at hipStreamDestroy and makes a new
// one later: the programs group sees that).
extern const std::vector<std::string> kHipChecks;
// The users' GPU_MAX_HW_QUEUES experiment, beside the btf client runs.
extern const std::vector<std::string> kMaxHwQueuesChecks;
// The programs group: one agent per probe tier, each with these checks.
extern const std::vector<std::string> kProgramTiers;
extern const std::vector<std::string> kProgramChecks;

// The checks of a runtime client group NAME[-STACK][-SUFFIX].
const std::vector<std::string> &ClientChecks(const std::string &group);

} // namespace sim_check

#endif

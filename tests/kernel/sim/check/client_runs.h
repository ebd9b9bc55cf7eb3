// What the client runs (guest-init.sh's client_runs and max_hw_queues) read
// besides the agent's exposition: the null thunk's truth file (its "queue
// key=value ..." lines, tests/nullgpu/null_cp.c) and the clients' own output
// (rocr_client's "QUEUE", hip_client's "STREAM" lines).
#ifndef GPUQ_SIM_CHECK_CLIENT_RUNS_H
#define GPUQ_SIM_CHECK_CLIENT_RUNS_H

#include <map>
#include <string>
#include <vector>

namespace sim_check
{

// The lines of PATH; false with ERROR when it cannot be read.
bool ReadLines(const std::string &path, std::vector<std::string> &out, std::string &error);

// LINE split on blanks, as awk splits $0 into $1..$NF.
std::vector<std::string> Fields(const std::string &line);

// TEXT's leading number, as awk reads a string as a number (0 when none).
double AwkNumber(const std::string &text);

// One "queue" line of a thunk's truth: its key=value fields.
struct ThunkQueue {
	std::map<std::string, std::string> fields;

	// Field KEY's value as a number (0 when absent).
	double Get(const std::string &key) const;
	bool Client() const; // owner=client: the client's own, not ROCr's internal
};

// The "queue" lines of the thunk truth at PATH.
bool ReadThunkQueues(const std::string &path, std::vector<ThunkQueue> &out, std::string &error);

// A GPU's sums over the client's own queues of a thunk's truth: the packets
// it wrote (write indexes) and of those the null CP consumed the kernel
// dispatches, the extended (amd_ext) ones, those with the barrier bit, the
// barriers and the rest (vendor, agent, other).
struct ClientSums {
	double writes = 0, dispatches = 0, ext = 0, barrier_dispatches = 0, barriers = 0, other = 0;
};

// By gpu_id.
std::map<std::string, ClientSums> SumClientQueues(const std::vector<ThunkQueue> &queues);

} // namespace sim_check

#endif

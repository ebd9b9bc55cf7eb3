// The simulator's ground truth (/sys/kernel/debug/kfd_sim/truth, written by
// kfd_sim_truth.c): lines "<what> <gpu_id> <a> <b> <cgroup> <value>".
#ifndef GPUQ_SIM_CHECK_TRUTH_H
#define GPUQ_SIM_CHECK_TRUTH_H

#include <string>
#include <vector>

namespace sim_check
{

struct TruthLine {
	std::string what, gpu, a, b, cgroup;
	double value = 0;
};

struct Truth {
	std::vector<TruthLine> lines;

	// The sum of WHAT's values whose gpu_id, a and b are GPU, A and B (""
	// for any).
	double Sum(const std::string &what, const std::string &gpu = "", const std::string &a = "",
		   const std::string &b = "") const;
};

// Reads PATH into OUT; false with ERROR naming the line that is not a truth
// line.
bool ReadTruth(const std::string &path, Truth &out, std::string &error);

} // namespace sim_check

#endif

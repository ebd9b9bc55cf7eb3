// A null GPU thunk's truth file (tests/nullgpu/null_cp.c writes it when its
// control dir asks: GPUQ_NULLGPU_TRUTH): a header line, "node" lines, and one
// "queue key=value ..." line per queue the thunk saw (ROCr's utility queues
// included, owner=rocr_internal; live=0 once destroyed).
#ifndef GPUQ_SIM_CHECK_THUNK_TRUTH_H
#define GPUQ_SIM_CHECK_THUNK_TRUTH_H

#include <map>
#include <string>
#include <vector>

namespace sim_check
{

struct ThunkQueue {
	std::map<std::string, std::string> fields;

	// Field KEY's text, "" when the line has none.
	std::string Text(const std::string &key) const;
	// Field KEY as a count (0 when the line has none, as awk reads it).
	unsigned long long Count(const std::string &key) const;
};

// Orders gpu_ids as numbers (they are decimal).
struct GpuOrder {
	bool operator()(const std::string &a, const std::string &b) const
	{
		return a.size() != b.size() ? a.size() < b.size() : a < b;
	}
};

// Reads the queue lines of the truth file PATH into OUT (other lines
// skipped). False with ERROR when PATH cannot be read or a queue line has a
// field without '=', no gpu_id, or a count that is not a number.
bool ReadThunkQueues(const std::string &path, std::vector<ThunkQueue> &out, std::string &error);

} // namespace sim_check

#endif

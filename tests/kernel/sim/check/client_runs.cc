#include "client_runs.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sim_check
{

std::map<std::string, ClientSums> SumClientQueues(const std::vector<ThunkQueue> &queues)
{
	std::map<std::string, ClientSums> sums;
	for (const ThunkQueue &q : queues) {
		if (q.Text("owner") != "client")
			continue;
		auto it = q.fields.find("gpu_id");
		ClientSums &s = sums[it == q.fields.end() ? "" : it->second];
		s.writes += q.Count("write_index");
		s.dispatches += q.Count("dispatches");
		s.ext += q.Count("ext_dispatches");
		s.barrier_dispatches += q.Count("barrier_dispatches");
		s.barriers += q.Count("barriers");
		s.other += q.Count("vendor") + q.Count("agent") + q.Count("other");
	}
	return sums;
}

} // namespace sim_check

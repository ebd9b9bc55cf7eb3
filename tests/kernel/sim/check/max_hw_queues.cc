#include "max_hw_queues.h"

#include "client_runs.h"

namespace sim_check
{

bool ReadHwQueuesTruth(const std::string &path, HwQueuesTruth &out, std::string &error)
{
	std::vector<ThunkQueue> queues;
	if (!ReadThunkQueues(path, queues, error))
		return false;
	for (const ThunkQueue &q : queues) {
		out.created++;
		auto live = q.fields.find("live");
		if (live != q.fields.end() && live->second == "1")
			out.live++;
		if (q.Text("owner") == "client")
			out.clients++;
	}
	for (const auto &[gpu, sums] : SumClientQueues(queues)) {
		out.dispatches += sums.dispatches + sums.ext;
		out.barrier_bit += sums.barrier_dispatches;
	}
	return true;
}

bool ParseHwQueuesRun(const std::string &arg, HwQueuesRun &out, std::string &error)
{
	const size_t a = arg.find(':');
	const size_t b = a == std::string::npos ? a : arg.find(':', a + 1);
	if (a == std::string::npos || a == 0 || a + 1 == arg.size() || b == a + 1) {
		error = "not a run N:CONTAINER[:RECORD-EXIT]: " + arg;
		return false;
	}
	out.n = arg.substr(0, a);
	out.container = arg.substr(a + 1, b == std::string::npos ? b : b - a - 1);
	out.record_exit = b == std::string::npos ? "" : arg.substr(b + 1);
	return true;
}

} // namespace sim_check

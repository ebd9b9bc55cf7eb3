// sim_check partitions-metrics GROUP NODES COUNT PROM TRUTH: the agent's
// /metrics (PROM) on the partitioned simulator (partitions.h).
//   GROUP:gpu-info  each gpuq_gpu_info joins its node to the partition and
//                   physical GPU (gpu_physical_pci, gpu_physical_index) the
//                   topology says, and every node has one
//   GROUP:physical  gpuq_queues joined with gpuq_gpu_info's
//                   gpu_physical_index, summed per physical GPU, equals the
//                   truth's live queues summed by topology, exactly
// Both read the lines as the agent wrote them (labels in its order).
#include "command.h"
#include "partitions.h"
#include "lines.h"
#include "text_file.h"
#include "verdict.h"

#include <map>
#include <set>

namespace sim_check
{
namespace
{

std::string Joined(const std::vector<std::pair<std::string, std::string>> &pairs)
{
	std::string out;
	for (const auto &[index, queues] : pairs)
		out += index + " " + queues + " ";
	return out;
}

void GpuInfo(const std::string &group, const PartitionTopology &topology,
	     const std::vector<std::string> &metrics)
{
	std::map<std::string, std::string> want;
	for (const PartitionNode &n : topology.nodes)
		want[n.gpu] = "gpu_partition_id=\"" + std::to_string(n.partition) +
			      "\",gpu_physical_index=\"" + topology.physical_index.at(n.physical) +
			      "\",gpu_physical_pci=\"" + n.physical + "\"";
	std::vector<std::string> bad;
	std::set<std::string> seen;
	for (const std::string &line : metrics) {
		if (!StartsWith(line, "gpuq_gpu_info{"))
			continue;
		const std::string gpu = DigitLabel(line, "gpu_id");
		seen.insert(gpu);
		auto it = want.find(gpu);
		if (it == want.end() || line.find(it->second) == std::string::npos)
			bad.push_back("gpu " + gpu + ": " + line);
	}
	for (const PartitionNode &n : topology.nodes)
		if (!seen.count(n.gpu))
			bad.push_back("gpu " + n.gpu + ": no gpuq_gpu_info");
	std::string detail;
	for (size_t i = 0; i < bad.size() && i < 3; i++)
		detail += bad[i] + ";";
	if (bad.empty())
		Pass(group + ":gpu-info", std::to_string(topology.nodes.size()) +
					      " gpuq_gpu_info series, each with the partition and "
					      "physical GPU (gpu_physical_pci, gpu_physical_index) "
					      "its topology node says");
	else
		Fail(group + ":gpu-info", detail);
}

// gpuq_queues per physical GPU, by gpuq_gpu_info's gpu_physical_index of
// each gpu_id ("" for a gpu_id without one).
std::vector<std::pair<std::string, std::string>>
AgentQueuesPerPhysical(const std::vector<std::string> &metrics)
{
	std::map<std::string, std::string> index_of;
	std::map<std::string, double> queues;
	for (const std::string &line : metrics) {
		if (StartsWith(line, "gpuq_gpu_info{"))
			index_of[DigitLabel(line, "gpu_id")] =
			    DigitLabel(line, "gpu_physical_index");
		if (StartsWith(line, "gpuq_queues{")) {
			const std::vector<std::string> f = Fields(line);
			queues[DigitLabel(line, "gpu_id")] += AwkNumber(f.back());
		}
	}
	std::map<std::string, double> per_physical;
	for (const auto &[gpu, n] : queues)
		per_physical[index_of[gpu]] += n;
	std::vector<std::pair<std::string, std::string>> out;
	for (const auto &[index, n] : per_physical)
		if (n != 0)
			out.emplace_back(index, Number(n));
	SortNumerically(out);
	return out;
}

int PartitionsMetrics(const std::vector<std::string> &args)
{
	if (args.size() != 5)
		return UsageError("partitions-metrics GROUP NODES COUNT PROM TRUTH");
	PartitionTopology topology;
	std::vector<std::string> metrics;
	std::vector<std::pair<std::string, std::string>> truth;
	std::string error;
	if (!ReadPartitionTopology(args[1], args[2], topology, error) ||
	    !ReadLines(args[3], metrics, error) ||
	    !TruthQueuesPerPhysical(args[4], topology, truth, error))
		return UsageError(error);
	GpuInfo(args[0], topology, metrics);
	const std::string want = Joined(truth), got = Joined(AgentQueuesPerPhysical(metrics));
	if (!want.empty() && got == want)
		Pass(args[0] + ":physical", "live queues per physical GPU (index queues), /metrics "
					    "joined with gpuq_gpu_info = "
					    "the truth summed by topology: " +
						got);
	else
		Fail(args[0] + ":physical",
		     "per physical GPU: agent '" + got + "', truth '" + want + "'");
	return 0;
}

const Registration kPartitionsMetrics("partitions-metrics", "GROUP NODES COUNT PROM TRUTH",
				      PartitionsMetrics);

} // namespace
} // namespace sim_check

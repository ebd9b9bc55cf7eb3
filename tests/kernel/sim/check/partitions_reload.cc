// sim_check partitions-reload GROUP NODES COUNT FIRST EXTRA PER: the
// simulator reloaded with EXTRA more GPUs, PER partitions of each physical
// GPU (CPX: 8, DPX: 2), has COUNT GPU nodes under NODES
// (.../topology/nodes), the partitions on nodes FIRST..COUNT. Prints
// GROUP:reload with the physical GPUs the topology gives (the guest fails
// the check itself when the module does not load).
#include "command.h"
#include "partitions.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int PartitionsReload(const std::vector<std::string> &args)
{
	if (args.size() != 6)
		return UsageError("partitions-reload GROUP NODES COUNT FIRST EXTRA PER");
	PartitionTopology topology;
	std::string error;
	if (!ReadPartitionTopology(args[1], args[2], topology, error))
		return UsageError(error);
	const unsigned long first = std::strtoul(args[3].c_str(), nullptr, 10);
	if (first < 1 || first > topology.nodes.size())
		return UsageError("first partition node " + args[3] + " is not a node of " +
				  args[1]);
	Pass(args[0] + ":reload",
	     "simulator reloaded with extra_hws_gpus=" + args[4] + " extra_partitions=" + args[5] +
		 ": " + args[2] + " GPU nodes, " + std::to_string(topology.physical_index.size()) +
		 " physical GPUs, partitions on nodes " + args[3] + "-" + args[2] + " (" +
		 topology.nodes[first - 1].physical + " .. " + topology.nodes.back().physical +
		 ")");
	return 0;
}

const Registration kPartitionsReload("partitions-reload", "GROUP NODES COUNT FIRST EXTRA PER",
				     PartitionsReload);

} // namespace
} // namespace sim_check

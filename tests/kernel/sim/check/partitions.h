// The partitioned GPUs of the simulator reloaded with extra_partitions: each
// KFD topology node's gpu_id, and the physical GPU and partition its
// properties say (location_id: the bus and device, the partition in the
// function bits), numbered as amd-smi numbers sockets (by PCI address).
#ifndef GPUQ_SIM_CHECK_PARTITIONS_H
#define GPUQ_SIM_CHECK_PARTITIONS_H

#include <map>
#include <string>
#include <vector>

namespace sim_check
{

struct PartitionNode {
	std::string gpu;      // gpu_id
	std::string physical; // the physical GPU's PCI device, "dddd:bb:dd"
	unsigned partition = 0;
};

struct PartitionTopology {
	std::vector<PartitionNode> nodes;		   // nodes 1..N (node 0 is the CPU)
	std::map<std::string, std::string> physical_index; // PCI device -> amd-smi index

	// The amd-smi index of gpu_id GPU's physical GPU; false when no node has it.
	bool IndexOf(const std::string &gpu, std::string *index) const;
};

// Reads nodes 1..COUNT of the topology folder NODES (.../topology/nodes);
// false with ERROR when a node's gpu_id or properties cannot be read.
bool ReadPartitionTopology(const std::string &nodes, const std::string &count,
			   PartitionTopology &out, std::string &error);

// "p s p s ...": the truth's live queues (its queues lines) summed by the
// physical GPU of their gpu_id, physical GPUs with none left out, by index.
bool TruthQueuesPerPhysical(const std::string &truth, const PartitionTopology &topology,
			    std::vector<std::pair<std::string, std::string>> &out,
			    std::string &error);

// Sorts "KEY VALUE" pairs as `sort -n` sorts their lines.
void SortNumerically(std::vector<std::pair<std::string, std::string>> &pairs);

} // namespace sim_check

#endif

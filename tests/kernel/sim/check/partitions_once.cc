// sim_check partitions-once GROUP NODES COUNT FIRST ONCE TRUTH: `--once`
// (seeded from sysfs) on the partitioned simulator (partitions.h), its text
// in ONCE. Its PHYSICAL GPUS table gives, per physical GPU with queues, the
// truth's live queues (COMPUTE + SDMA + OTHER) and its processes: 2 where
// container B's process also is (the physical GPUs of nodes FIRST ..
// FIRST+7, where its SDMA queues are), else 1. Prints GROUP:once.
#include "command.h"
#include "partitions.h"
#include "lines.h"
#include "text_file.h"
#include "verdict.h"

#include <cstdlib>
#include <set>

namespace sim_check
{
namespace
{

// "index queues processes " per row of the PHYSICAL GPUS table (the lines
// from its title to the blank line after it; its title and column header
// skipped) whose queues are not 0.
std::string PhysicalTable(const std::vector<std::string> &once)
{
	std::string out;
	bool inside = false;
	int row = 0;
	for (const std::string &line : once) {
		if (!inside && line.compare(0, 13, "PHYSICAL GPUS") == 0)
			inside = true;
		else if (!inside)
			continue;
		const std::vector<std::string> f = Fields(line);
		if (++row > 2 && !f.empty()) {
			auto field = [&f](size_t i) { return i <= f.size() ? f[i - 1] : ""; };
			const double queues =
			    AwkNumber(field(4)) + AwkNumber(field(5)) + AwkNumber(field(6));
			if (queues != 0)
				out += field(1) + " " + Number(queues) + " " + field(7) + " ";
		}
		if (line.empty())
			inside = false;
	}
	return out;
}

int PartitionsOnce(const std::vector<std::string> &args)
{
	if (args.size() != 6)
		return UsageError("partitions-once GROUP NODES COUNT FIRST ONCE TRUTH");
	PartitionTopology topology;
	std::vector<std::string> once;
	std::vector<std::pair<std::string, std::string>> truth;
	std::string error;
	if (!ReadPartitionTopology(args[1], args[2], topology, error) ||
	    !ReadLines(args[4], once, error) ||
	    !TruthQueuesPerPhysical(args[5], topology, truth, error))
		return UsageError(error);
	const unsigned long first = std::strtoul(args[3].c_str(), nullptr, 10);
	std::set<std::string> with_b;
	for (unsigned long node = first; node < first + 8 && node <= topology.nodes.size(); node++)
		if (node >= 1)
			with_b.insert(
			    topology.physical_index.at(topology.nodes[node - 1].physical));
	std::string want;
	for (const auto &[index, queues] : truth)
		want += index + " " + queues + " " + (with_b.count(index) ? "2" : "1") + " ";
	const std::string got = PhysicalTable(once);
	if (!want.empty() && got == want)
		Pass(args[0] + ":once", "--once's PHYSICAL GPUS (index queues processes): " + got);
	else
		Fail(args[0] + ":once", "got '" + got + "', want '" + want + "'");
	return 0;
}

const Registration kPartitionsOnce("partitions-once", "GROUP NODES COUNT FIRST ONCE TRUTH",
				   PartitionsOnce);

} // namespace
} // namespace sim_check

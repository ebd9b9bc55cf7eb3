#include "partitions.h"

#include "lines.h"
#include "text_file.h"
#include "truth.h"
#include "verdict.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace sim_check
{
namespace
{

bool ParseCount(const std::string &text, unsigned long *out)
{
	char *end = nullptr;
	*out = std::strtoul(text.c_str(), &end, 10);
	return !text.empty() && *end == '\0';
}

} // namespace

bool PartitionTopology::IndexOf(const std::string &gpu, std::string *index) const
{
	for (const PartitionNode &n : nodes)
		if (n.gpu == gpu) {
			*index = physical_index.at(n.physical);
			return true;
		}
	return false;
}

bool ReadPartitionTopology(const std::string &nodes, const std::string &count,
			   PartitionTopology &out, std::string &error)
{
	unsigned long n = 0;
	if (!ParseCount(count, &n)) {
		error = "not a node count: " + count;
		return false;
	}
	std::set<std::string> physical;
	for (unsigned long k = 1; k <= n; k++) {
		const std::string dir = nodes + "/" + std::to_string(k);
		std::vector<std::string> gpu, properties;
		if (!ReadLines(dir + "/gpu_id", gpu, error) ||
		    !ReadLines(dir + "/properties", properties, error))
			return false;
		unsigned long long location = 0, domain = 0;
		for (const std::string &line : properties) {
			const std::vector<std::string> f = Fields(line);
			if (f.size() >= 2 && f[0] == "location_id")
				location = std::strtoull(f[1].c_str(), nullptr, 10);
			if (f.size() >= 2 && f[0] == "domain")
				domain = std::strtoull(f[1].c_str(), nullptr, 10);
		}
		char pci[32];
		std::snprintf(pci, sizeof(pci), "%04llx:%02llx:%02llx", domain,
			      location / 256 % 256, location / 8 % 32);
		PartitionNode node{ gpu.empty() ? "" : gpu[0], pci, unsigned(location % 8) };
		physical.insert(node.physical);
		out.nodes.push_back(node);
	}
	// amd-smi's order: domain, bus, device, all of one width: text order
	int index = 0;
	for (const std::string &p : physical)
		out.physical_index[p] = std::to_string(index++);
	return true;
}

bool TruthQueuesPerPhysical(const std::string &truth_path, const PartitionTopology &topology,
			    std::vector<std::pair<std::string, std::string>> &out,
			    std::string &error)
{
	Truth truth;
	if (!ReadTruth(truth_path, truth, error))
		return false;
	std::map<std::string, double> per_physical;
	for (const TruthLine &l : truth.lines) {
		std::string index;
		if (l.what == "queues" && topology.IndexOf(l.gpu, &index))
			per_physical[index] += l.value;
	}
	for (const auto &[index, queues] : per_physical)
		if (queues != 0)
			out.emplace_back(index, Number(queues));
	SortNumerically(out);
	return true;
}

void SortNumerically(std::vector<std::pair<std::string, std::string>> &pairs)
{
	std::sort(pairs.begin(), pairs.end(), [](const auto &x, const auto &y) {
		const double a = AwkNumber(x.first), b = AwkNumber(y.first);
		if (a != b)
			return a < b;
		return x.first + " " + x.second < y.first + " " + y.second;
	});
}

} // namespace sim_check

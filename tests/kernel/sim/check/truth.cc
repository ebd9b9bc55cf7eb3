#include "truth.h"

#include <fstream>
#include <sstream>

namespace sim_check
{

double Truth::Sum(const std::string &what, const std::string &gpu) const
{
	double sum = 0;
	for (const TruthLine &l : lines)
		if (l.what == what && (gpu.empty() || l.gpu == gpu))
			sum += l.value;
	return sum;
}

bool ReadTruth(const std::string &path, Truth &out, std::string &error)
{
	std::ifstream in(path);
	if (!in) {
		error = "cannot read " + path;
		return false;
	}
	std::string line;
	for (int n = 1; std::getline(in, line); n++) {
		if (line.empty())
			continue;
		std::istringstream fields(line);
		TruthLine t;
		std::string rest;
		if (!(fields >> t.what >> t.gpu >> t.a >> t.b >> t.cgroup >> t.value) ||
		    (fields >> rest)) {
			error = path + ":" + std::to_string(n) + ": not a truth line: " + line;
			return false;
		}
		out.lines.push_back(std::move(t));
	}
	return true;
}

} // namespace sim_check

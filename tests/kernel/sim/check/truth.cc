#include "truth.h"

#include "lines.h"

#include <sstream>

namespace sim_check
{

double Truth::Sum(const std::string &what, const std::string &gpu, const std::string &a,
		  const std::string &b) const
{
	double sum = 0;
	for (const TruthLine &l : lines)
		if (l.what == what && (gpu.empty() || l.gpu == gpu) && (a.empty() || l.a == a) &&
		    (b.empty() || l.b == b))
			sum += l.value;
	return sum;
}

bool ReadTruth(const std::string &path, Truth &out, std::string &error)
{
	std::vector<std::string> lines;
	if (!ReadLines(path, lines, error))
		return false;
	int n = 0;
	for (const std::string &line : lines) {
		n++;
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

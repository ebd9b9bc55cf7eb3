#include "text_file.h"

#include "lines.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sim_check
{

double SumOfLines(const std::vector<std::string> &lines, const std::string &prefix,
		  const std::vector<std::string> &containing)
{
	double sum = 0;
	for (const std::string &line : lines) {
		if (line.compare(0, prefix.size(), prefix) != 0)
			continue;
		bool all = true;
		for (const std::string &text : containing)
			all = all && line.find(text) != std::string::npos;
		const std::vector<std::string> f = Fields(line);
		if (all && !f.empty())
			sum += AwkNumber(f.back());
	}
	return sum;
}

std::string DigitLabel(const std::string &line, const std::string &name, bool *found)
{
	const std::string open = name + "=\"";
	for (size_t at = line.find(open); at != std::string::npos; at = line.find(open, at + 1)) {
		size_t end = at + open.size();
		while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end])))
			end++;
		if (end < line.size() && line[end] == '"') {
			if (found)
				*found = true;
			return line.substr(at + open.size(), end - at - open.size());
		}
	}
	if (found)
		*found = false;
	return "";
}

} // namespace sim_check

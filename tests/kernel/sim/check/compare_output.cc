#include "compare_output.h"

#include <fstream>
#include <sstream>

namespace sim_check
{

bool CompareOk(const std::vector<std::string> &lines)
{
	for (const std::string &l : lines)
		if (l.rfind("RESULT ok", 0) == 0)
			return true;
	return false;
}

std::string FirstLines(const std::vector<std::string> &lines, const std::string &prefix, size_t n)
{
	std::string out;
	for (const std::string &l : lines) {
		if (n == 0)
			break;
		if (l.rfind(prefix, 0) == 0) {
			out += l + ";";
			n--;
		}
	}
	return out;
}

std::string LastThirdWord(const std::vector<std::string> &lines)
{
	if (lines.empty())
		return "";
	std::istringstream words(lines.back());
	std::string word;
	for (int i = 0; i < 3; i++)
		if (!(words >> word))
			return "";
	return word;
}

std::string DeniedSamples(const std::vector<std::string> &metrics)
{
	const std::string prefix = "gpuq_queue_samples_total{result=\"denied\"}";
	std::string out;
	for (const std::string &l : metrics) {
		if (l.rfind(prefix, 0) != 0)
			continue;
		std::istringstream words(l);
		std::string name, value;
		words >> name >> value;
		out += (out.empty() ? "" : "\n") + value;
	}
	return out;
}

} // namespace sim_check

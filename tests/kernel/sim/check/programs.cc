#include "programs.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sim_check
{
namespace programs
{

bool ReadLines(const std::string &path, std::vector<std::string> &lines, std::string &error)
{
	std::ifstream in(path);
	if (!in) {
		error = "cannot read " + path;
		return false;
	}
	std::string line;
	while (std::getline(in, line))
		lines.push_back(line);
	return true;
}

std::vector<std::string> Fields(const std::string &line)
{
	std::istringstream in(line);
	std::vector<std::string> fields;
	std::string field;
	while (in >> field)
		fields.push_back(field);
	return fields;
}

std::string Comparison::Diffs(size_t n) const
{
	std::string text;
	for (size_t i = 0; i < diffs.size() && i < n; i++)
		text += diffs[i] + ";";
	return text;
}

std::string Comparison::Compared() const
{
	const std::vector<std::string> f = Fields(last);
	std::string text = f.size() > 2 ? f[2] : "";
	for (size_t i = 4; i < f.size(); i++)
		text += " " + f[i];
	return text;
}

bool ReadComparison(const std::string &path, Comparison &out, std::string &error)
{
	std::vector<std::string> lines;
	if (!ReadLines(path, lines, error))
		return false;
	for (const std::string &line : lines) {
		if (line.rfind("DIFF", 0) == 0)
			out.diffs.push_back(line);
		if (line.rfind("RESULT ok", 0) == 0)
			out.ok = true;
	}
	if (!lines.empty())
		out.last = lines.back();
	return true;
}

bool ReadOptions(const std::vector<std::string> &args, size_t from,
		 const std::vector<std::string> &keys, std::map<std::string, std::string> &out,
		 std::string &error)
{
	for (size_t i = from; i < args.size(); i++) {
		const size_t eq = args[i].find('=');
		const std::string key = args[i].substr(0, eq);
		if (eq == std::string::npos ||
		    std::find(keys.begin(), keys.end(), key) == keys.end()) {
			error = "not one of the KEY=VALUE arguments: " + args[i];
			return false;
		}
		out[key] = args[i].substr(eq + 1);
	}
	for (const std::string &key : keys) {
		if (!out.count(key)) {
			error = "no " + key + "= argument";
			return false;
		}
	}
	return true;
}

std::string Fixed(double v)
{
	char text[64];
	std::snprintf(text, sizeof(text), "%.6f", v);
	return text;
}

double ContainerSum(const Exposition &metrics, const std::string &family, const std::string &id,
		    Labels match)
{
	match.emplace_back("container", id);
	return metrics.Sum(family, match);
}

} // namespace programs
} // namespace sim_check

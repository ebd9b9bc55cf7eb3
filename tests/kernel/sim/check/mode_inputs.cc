#include "mode_inputs.h"

#include "lines.h"

#include "verdict.h"

#include <sstream>

namespace sim_check
{

bool StartsWith(const std::string &line, const std::string &prefix)
{
	return line.compare(0, prefix.size(), prefix) == 0;
}

bool Comparison::Equal() const
{
	for (const std::string &line : lines)
		if (StartsWith(line, "RESULT ok"))
			return true;
	return false;
}

std::string Comparison::Diffs() const
{
	std::string out;
	int n = 0;
	for (const std::string &line : lines) {
		if (StartsWith(line, "DIFF") && n++ < 8)
			out += line + ";";
	}
	return out;
}

size_t Comparison::DiffCount() const
{
	size_t n = 0;
	for (const std::string &line : lines)
		n += StartsWith(line, "DIFF");
	return n;
}

std::string Comparison::Last() const
{
	return lines.empty() ? "" : lines.back();
}

std::string Comparison::Compared() const
{
	const std::vector<std::string> f = Fields(Last());
	std::string out = f.size() > 2 ? f[2] : "";
	for (size_t i = 4; i < f.size(); i++)
		out += " " + f[i];
	return out;
}

bool ReadComparison(const std::string &path, Comparison &out, std::string &error)
{
	if (ReadLines(path, out.lines))
		return true;
	error = "cannot read " + path;
	return false;
}

bool ReadText(const std::string &path, std::vector<std::string> &out, std::string &error)
{
	if (ReadLines(path, out))
		return true;
	error = "cannot read " + path;
	return false;
}

std::string Dropped(const std::vector<std::string> &lines)
{
	const std::string family = "gpuq_events_dropped_total";
	std::string out;
	for (const std::string &line : lines) {
		const bool zero = line.size() >= 2 && line.compare(line.size() - 2, 2, " 0") == 0;
		if (StartsWith(line, family + "{") && !zero)
			out += line.substr(family.size()) + " ";
	}
	return out.empty() ? "none" : out;
}

int Judged(bool ok, const std::string &check, const std::string &detail)
{
	Verdict(ok, check, detail);
	return ok ? 0 : 1;
}

} // namespace sim_check

#include "comparison.h"

#include "lines.h"

namespace sim_check
{

bool Comparison::Equal() const
{
	return !StartingWith(lines, "RESULT ok").empty();
}

std::string Comparison::Diffs(size_t n) const
{
	std::string out;
	for (const std::string &line : StartingWith(lines, "DIFF"))
		if (n-- > 0)
			out += line + ";";
	return out;
}

size_t Comparison::DiffCount() const
{
	return StartingWith(lines, "DIFF").size();
}

std::string Comparison::Last() const
{
	return lines.empty() ? "" : lines.back();
}

std::string Comparison::SeriesCompared() const
{
	const std::vector<std::string> f = Fields(Last());
	return f.size() > 2 ? f[2] : "";
}

std::string Comparison::Compared() const
{
	const std::vector<std::string> f = Fields(Last());
	std::string out = SeriesCompared();
	for (size_t i = 4; i < f.size(); i++)
		out += " " + f[i];
	return out;
}

bool ReadComparison(const std::string &path, Comparison &out, std::string &error)
{
	return ReadLines(path, out.lines, error);
}

} // namespace sim_check

#include "lines.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sim_check
{

bool ReadLines(const std::string &path, std::vector<std::string> &out)
{
	std::ifstream in(path);
	if (!in)
		return false;
	for (std::string line; std::getline(in, line);)
		out.push_back(line);
	return true;
}

bool ReadLines(const std::string &path, std::vector<std::string> &out, std::string &error)
{
	if (ReadLines(path, out))
		return true;
	error = "cannot read " + path;
	return false;
}

std::vector<std::string> Fields(const std::string &line)
{
	std::istringstream in(line);
	std::vector<std::string> fields;
	for (std::string f; in >> f;)
		fields.push_back(f);
	return fields;
}

double AwkNumber(const std::string &text)
{
	char *end = nullptr;
	const double v = std::strtod(text.c_str(), &end);
	return end == text.c_str() ? 0 : v;
}

bool EndsWith(const std::string &line, const std::string &suffix)
{
	return line.size() >= suffix.size() &&
	       line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool StartsWith(const std::string &line, const std::string &prefix)
{
	return line.compare(0, prefix.size(), prefix) == 0;
}

std::vector<std::string> StartingWith(const std::vector<std::string> &lines,
				      const std::string &prefix)
{
	std::vector<std::string> out;
	for (const std::string &l : lines)
		if (StartsWith(l, prefix))
			out.push_back(l);
	return out;
}

std::string Join(const std::vector<std::string> &lines, const std::string &separator)
{
	std::string out;
	for (size_t i = 0; i < lines.size(); i++)
		out += (i ? separator : "") + lines[i];
	return out;
}

std::string OneLine(const std::string &path)
{
	std::vector<std::string> lines;
	ReadLines(path, lines);
	std::string out;
	for (const std::string &l : lines)
		out += l + " ";
	return out;
}

} // namespace sim_check

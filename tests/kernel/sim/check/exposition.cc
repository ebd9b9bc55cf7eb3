#include "exposition.h"

#include "lines.h"
#include "verdict.h"

#include <cerrno>
#include <cstdlib>

namespace sim_check
{
namespace
{

// Parses LINE's labels from LINE[*at] (just past '{') to the closing '}'.
bool ParseLabels(const std::string &line, size_t *at, Labels &labels)
{
	size_t i = *at;
	while (i < line.size() && line[i] != '}') {
		const size_t eq = line.find('=', i);
		if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"')
			return false;
		std::string name = line.substr(i, eq - i), value;
		for (i = eq + 2; i < line.size() && line[i] != '"'; i++) {
			if (line[i] == '\\' && i + 1 < line.size()) {
				i++;
				value += line[i] == 'n' ? '\n' : line[i];
			} else {
				value += line[i];
			}
		}
		if (i >= line.size())
			return false;
		labels.emplace_back(std::move(name), std::move(value));
		i++; // the closing quote
		if (i < line.size() && line[i] == ',')
			i++;
	}
	if (i >= line.size())
		return false;
	*at = i + 1;
	return true;
}

bool ParseSample(const std::string &line, Sample &sample)
{
	size_t at = line.find_first_of("{ ");
	if (at == std::string::npos || at == 0)
		return false;
	sample.name = line.substr(0, at);
	if (line[at] == '{') {
		at++;
		if (!ParseLabels(line, &at, sample.labels))
			return false;
	}
	while (at < line.size() && line[at] == ' ')
		at++;
	if (at >= line.size())
		return false;
	const std::string value = line.substr(at, line.find(' ', at) - at);
	char *end = nullptr;
	errno = 0;
	sample.value = std::strtod(value.c_str(), &end);
	return errno == 0 && end != value.c_str() && *end == '\0';
}

} // namespace

std::string Sample::Label(const std::string &label) const
{
	for (const auto &[key, text] : labels)
		if (key == label)
			return text;
	return "";
}

bool Sample::Matches(const Labels &match) const
{
	for (const auto &[key, text] : match)
		if (Label(key) != text)
			return false;
	return true;
}

std::string Sample::Text() const
{
	std::string text = name;
	if (!labels.empty()) {
		text += '{';
		for (size_t i = 0; i < labels.size(); i++)
			text += (i ? "," : "") + labels[i].first + "=\"" + labels[i].second + "\"";
		text += '}';
	}
	return text + " " + Number(value);
}

std::vector<const Sample *> Exposition::Series(const std::string &name, const Labels &match) const
{
	std::vector<const Sample *> out;
	for (const Sample &s : samples)
		if (s.name == name && s.Matches(match))
			out.push_back(&s);
	return out;
}

double Exposition::Sum(const std::string &name, const Labels &match) const
{
	double sum = 0;
	for (const Sample &s : samples)
		if (s.name == name && s.Matches(match))
			sum += s.value;
	return sum;
}

bool Exposition::Has(const std::string &name, const Labels &match) const
{
	for (const Sample &s : samples)
		if (s.name == name && s.Matches(match))
			return true;
	return false;
}

bool ReadExposition(const std::string &path, Exposition &out, std::string &error)
{
	std::vector<std::string> lines;
	if (!ReadLines(path, lines, error))
		return false;
	int n = 0;
	for (const std::string &line : lines) {
		n++;
		if (line.empty() || line[0] == '#')
			continue;
		Sample sample;
		if (!ParseSample(line, sample)) {
			error = path + ":" + std::to_string(n) + ": not a sample: " + line;
			return false;
		}
		out.samples.push_back(std::move(sample));
	}
	return true;
}

bool ParseMatch(const std::vector<std::string> &args, size_t from, Labels &out, std::string &error)
{
	for (size_t i = from; i < args.size(); i++) {
		const size_t eq = args[i].find('=');
		if (eq == std::string::npos || eq == 0) {
			error = "not a label=value: " + args[i];
			return false;
		}
		out.emplace_back(args[i].substr(0, eq), args[i].substr(eq + 1));
	}
	return true;
}

} // namespace sim_check

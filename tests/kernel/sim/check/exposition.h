// The agent's /metrics (or `--once -o prometheus`) read as samples: the
// Prometheus text format's name, labels and value of each line (comments and
// blank lines skipped).
#ifndef GPUQ_SIM_CHECK_EXPOSITION_H
#define GPUQ_SIM_CHECK_EXPOSITION_H

#include <string>
#include <utility>
#include <vector>

namespace sim_check
{

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
	std::string name;
	Labels labels; // in the order of the line, values unescaped
	double value = 0;

	// The value of label NAME, "" when the sample has none.
	std::string Label(const std::string &label) const;
	// Every label of MATCH has its value here.
	bool Matches(const Labels &match) const;
	// The sample as an exposition line (the value as awk prints it).
	std::string Text() const;
};

struct Exposition {
	std::vector<Sample> samples;

	// The sum of family NAME's samples that match MATCH (0 when none).
	double Sum(const std::string &name, const Labels &match = {}) const;
	// Family NAME has a sample that matches MATCH.
	bool Has(const std::string &name, const Labels &match = {}) const;
	// Family NAME's samples that match MATCH.
	std::vector<const Sample *> Series(const std::string &name, const Labels &match = {}) const;
};

// Reads PATH into OUT. False, with ERROR saying which line, when PATH cannot
// be read or a line is not of the text format.
bool ReadExposition(const std::string &path, Exposition &out, std::string &error);

// "name=value" arguments as labels; false with ERROR on one without '='.
bool ParseMatch(const std::vector<std::string> &args, size_t from, Labels &out, std::string &error);

} // namespace sim_check

#endif

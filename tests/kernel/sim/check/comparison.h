// What sim_compare printed (sim_compare.cc): its DIFF lines, then one
// "RESULT <ok|diff> <series compared> <diffs> [seconds' figures...]" line.
#ifndef GPUQ_SIM_CHECK_COMPARISON_H
#define GPUQ_SIM_CHECK_COMPARISON_H

#include <string>
#include <vector>

namespace sim_check
{

struct Comparison {
	std::vector<std::string> lines;

	// A line begins "RESULT ok": the families equal the truth.
	bool Equal() const;
	// The first N DIFF lines, each followed by ';'.
	std::string Diffs(size_t n = 8) const;
	// How many DIFF lines.
	size_t DiffCount() const;
	// The last line ("" when none).
	std::string Last() const;
	// The last line's third word: the series compared.
	std::string SeriesCompared() const;
	// The series compared and the seconds' figures after the count of
	// differences (RESULT's fields but the first, second and fourth).
	std::string Compared() const;
};

// Reads PATH into OUT; false with ERROR when it cannot be read.
bool ReadComparison(const std::string &path, Comparison &out, std::string &error);

} // namespace sim_check

#endif

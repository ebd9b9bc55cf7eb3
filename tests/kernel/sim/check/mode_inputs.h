// What the hook mode's checks (sim/guest-init.sh, run_mode and its agent
// helpers) read besides the exposition and the truth: sim_compare's output,
// fields of text lines, and the verdict's exit status the guest acts on.
#ifndef GPUQ_SIM_CHECK_MODE_INPUTS_H
#define GPUQ_SIM_CHECK_MODE_INPUTS_H

#include "lines.h"

#include <string>
#include <vector>

namespace sim_check
{

// LINE begins with PREFIX.
bool StartsWith(const std::string &line, const std::string &prefix);

// A file of sim_compare's output (sim_compare.cc): DIFF lines and a last
// RESULT line.
struct Comparison {
	std::vector<std::string> lines;

	// A line begins "RESULT ok": the families equal the truth.
	bool Equal() const;
	// The first eight DIFF lines, each followed by ';'.
	std::string Diffs() const;
	// How many DIFF lines.
	size_t DiffCount() const;
	// The last line ("" when none).
	std::string Last() const;
	// From the last line: the series compared and the seconds' figures after
	// them (RESULT's fields but the first, second and fourth).
	std::string Compared() const;
};

bool ReadComparison(const std::string &path, Comparison &out, std::string &error);

// Reads PATH's lines into OUT; false with ERROR when it cannot be read.
bool ReadText(const std::string &path, std::vector<std::string> &out, std::string &error);

// The non-zero gpuq_events_dropped_total series of the exposition LINES,
// their labels and value each followed by a space, or "none".
std::string Dropped(const std::vector<std::string> &lines);

// Prints the verdict; returns 0 when OK, 1 after a FAIL, so that the guest
// dumps its logs on a FAIL (`sim_check ... || dump ...`).
int Judged(bool ok, const std::string &check, const std::string &detail);

} // namespace sim_check

#endif

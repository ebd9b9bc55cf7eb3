// Files read as text: the lines of an agent's output, a report or sysfs file,
// for checks that mirror what grep and awk saw (the exact line, not a
// parsed sample).
#ifndef GPUQ_SIM_CHECK_TEXT_FILE_H
#define GPUQ_SIM_CHECK_TEXT_FILE_H

#include <string>
#include <vector>

namespace sim_check
{

// The sum of the last fields of the LINES that begin with PREFIX and hold
// every one of CONTAINING (grep PREFIX | awk '{ s += $NF }').
double SumOfLines(const std::vector<std::string> &lines, const std::string &prefix,
		  const std::vector<std::string> &containing = {});

// The value of LINE's label NAME as grep saw it: the digits of the first
// NAME="<digits>" in LINE; FOUND false (and "") when there is none.
std::string DigitLabel(const std::string &line, const std::string &name, bool *found = nullptr);

} // namespace sim_check

#endif

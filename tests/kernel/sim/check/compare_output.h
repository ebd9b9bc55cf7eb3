// What sim_compare printed (its DIFF lines, then "RESULT ok|differ N ..."),
// and other text files read as lines, for the checks that report on a
// comparison the guest ran.
#ifndef GPUQ_SIM_CHECK_COMPARE_OUTPUT_H
#define GPUQ_SIM_CHECK_COMPARE_OUTPUT_H

#include <string>
#include <vector>

namespace sim_check
{

// A line begins "RESULT ok": the comparison found no difference.
bool CompareOk(const std::vector<std::string> &lines);

// The first N lines beginning with PREFIX, each followed by ';' (as the
// guest's `grep PREFIX | head -n N | tr '\n' ';'`).
std::string FirstLines(const std::vector<std::string> &lines, const std::string &prefix, size_t n);

// The third word of the last line ("" when there is none): on the RESULT
// line, the series compared.
std::string LastThirdWord(const std::vector<std::string> &lines);

// The values of an agent scrape's gpuq_queue_samples_total{result="denied"}
// lines (the one label), one per line ("" when it has none).
std::string DeniedSamples(const std::vector<std::string> &metrics);

} // namespace sim_check

#endif

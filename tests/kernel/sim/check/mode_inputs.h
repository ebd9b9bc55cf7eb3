// What the hook mode's checks (lifecycle.cc and its agent
// helpers) read besides the exposition and the truth: sim_compare's output,
// fields of text lines, and the verdict's exit status the guest acts on.
#ifndef GPUQ_SIM_CHECK_MODE_INPUTS_H
#define GPUQ_SIM_CHECK_MODE_INPUTS_H

#include "comparison.h"
#include "lines.h"

#include <string>
#include <vector>

namespace sim_check
{

// The non-zero gpuq_events_dropped_total series of the exposition LINES,
// their labels and value each followed by a space, or "none".
std::string Dropped(const std::vector<std::string> &lines);

// Prints the verdict; returns 0 when OK, 1 after a FAIL, so that the guest
// dumps its logs on a FAIL (`sim_check ... || dump ...`).
int Judged(bool ok, const std::string &check, const std::string &detail);

} // namespace sim_check

#endif

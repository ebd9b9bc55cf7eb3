// GET an agent's /metrics in the guest (what `wget -q -O PATH` did), for
// the scenarios sim_check runs itself.
#ifndef GPUQ_SIM_CHECK_SCRAPE_H
#define GPUQ_SIM_CHECK_SCRAPE_H

#include <string>

namespace sim_check
{

// http://127.0.0.1:PORT/metrics into PATH, which is replaced only by the
// body of a whole 200 response (a reader never sees half an exposition);
// false, PATH as it was, when none came within 10 s.
bool Scrape(int port, const std::string &path);

} // namespace sim_check

#endif

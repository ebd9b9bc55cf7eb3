// The denied samples of an agent's scrape: the sampler's reads of a queue
// that the kernel refused (least-privilege and no-ptrace checks).
#ifndef GPUQ_SIM_CHECK_DENIED_SAMPLES_H
#define GPUQ_SIM_CHECK_DENIED_SAMPLES_H

#include <string>
#include <vector>

namespace sim_check
{

// The values of an agent scrape's gpuq_queue_samples_total{result="denied"}
// lines (the one label), one per line ("" when it has none).
std::string DeniedSamples(const std::vector<std::string> &metrics);

} // namespace sim_check

#endif

// Readers shared by the programs group's subcommands (programs-experiment,
// programs-doorbells, programs-report): programs-scenario runs real HIP
// programs in containers and gathers what the agents, sim_compare and the
// programs print into files under /tmp; these read them.
#ifndef GPUQ_SIM_CHECK_PROGRAMS_H
#define GPUQ_SIM_CHECK_PROGRAMS_H

#include "comparison.h"
#include "exposition.h"
#include "lines.h"

#include <map>
#include <string>
#include <vector>

namespace sim_check
{
namespace programs
{

// ARGS from FROM on as KEY=VALUE (VALUE may be empty: such arguments are
// never empty words) into OUT; false with ERROR on one not of that form, a
// key not in KEYS, or a key of KEYS missing.
bool ReadOptions(const std::vector<std::string> &args, size_t from,
		 const std::vector<std::string> &keys, std::map<std::string, std::string> &out,
		 std::string &error);

// V with six decimals (awk's printf "%.6f", for seconds).
std::string Fixed(double v);

// The sum of FAMILY's samples in METRICS of container ID whose labels include
// MATCH too.
double ContainerSum(const Exposition &metrics, const std::string &family, const std::string &id,
		    Labels match = {});

} // namespace programs
} // namespace sim_check

#endif

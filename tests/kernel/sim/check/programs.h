// Readers shared by the programs group's subcommands (programs-experiment,
// programs-doorbells, programs-report): the guest's programs_checks runs real
// HIP programs in containers and gathers what the agents, sim_compare and the
// programs print into files under /tmp; these read them.
#ifndef GPUQ_SIM_CHECK_PROGRAMS_H
#define GPUQ_SIM_CHECK_PROGRAMS_H

#include "exposition.h"

#include <map>
#include <string>
#include <vector>

namespace sim_check
{
namespace programs
{

// PATH's lines; false with ERROR when PATH cannot be read.
bool ReadLines(const std::string &path, std::vector<std::string> &lines, std::string &error);

// LINE's fields split on blanks, as awk splits them.
std::vector<std::string> Fields(const std::string &line);

// sim_compare's output (cmp.out): its DIFF lines and its last line, the
// RESULT line "RESULT <ok|diff> <compared> <diffs> [(within...)...]".
struct Comparison {
	bool ok = false; // a line starts with "RESULT ok"
	std::vector<std::string> diffs;
	std::string last;

	// The first N DIFF lines, each followed by ';'.
	std::string Diffs(size_t n) const;
	// The RESULT line's count of series compared and its notes after the
	// count of differences (the guest's cmp_compared).
	std::string Compared() const;
};

bool ReadComparison(const std::string &path, Comparison &out, std::string &error);

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

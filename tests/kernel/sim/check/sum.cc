// sim_check sum FILE FAMILY [LABEL=VALUE...] [--fixed]: the sum of FAMILY's
// samples in the exposition FILE whose labels include every LABEL=VALUE, as
// awk prints a number (--fixed: with six decimals, for seconds). 0 when no
// sample matches.
#include "command.h"
#include "exposition.h"
#include "verdict.h"

#include <cstdio>

namespace sim_check
{
namespace
{

int Sum(const std::vector<std::string> &args)
{
	std::vector<std::string> rest;
	bool fixed = false;
	for (const std::string &a : args) {
		if (a == "--fixed")
			fixed = true;
		else
			rest.push_back(a);
	}
	if (rest.size() < 2)
		return UsageError("sum FILE FAMILY [LABEL=VALUE...] [--fixed]");
	Labels match;
	Exposition metrics;
	std::string error;
	if (!ParseMatch(rest, 2, match, error) || !ReadExposition(rest[0], metrics, error))
		return UsageError(error);
	const double sum = metrics.Sum(rest[1], match);
	if (fixed)
		std::printf("%.6f\n", sum);
	else
		std::printf("%s\n", Number(sum).c_str());
	return 0;
}

const Registration kSum("sum", "FILE FAMILY [LABEL=VALUE...] [--fixed]", Sum);

} // namespace
} // namespace sim_check

// sim_check client-total FILE TAG GPU-INDEX KEY: the sum of KEY=N over the
// lines of a runtime client's output FILE that begin "TAG NAME gpu=GPU-INDEX"
// (tests/nullgpu: rocr_client's "QUEUE r1 gpu=0 ... rings=N ...",
// hip_client's "STREAM h1 gpu=0 launches=N ..."), as awk prints a number:
// what the client itself says it did on that GPU.
#include "lines.h"
#include "command.h"
#include "verdict.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace sim_check
{
namespace
{

int ClientTotal(const std::vector<std::string> &args)
{
	if (args.size() != 4)
		return UsageError("client-total FILE TAG GPU-INDEX KEY");
	std::vector<std::string> lines;
	std::string error;
	if (!ReadLines(args[0], lines, error))
		return UsageError(error);
	const std::string gpu = "gpu=" + args[2], key = args[3] + "=";
	double total = 0;
	for (size_t n = 0; n < lines.size(); n++) {
		std::istringstream words(lines[n]);
		std::string tag, name, on, word;
		if (!(words >> tag >> name >> on) || tag != args[1] || on != gpu)
			continue;
		while (words >> word) {
			if (word.rfind(key, 0) != 0)
				continue;
			char *end = nullptr;
			const double v = std::strtod(word.c_str() + key.size(), &end);
			if (end == word.c_str() + key.size() || *end != '\0')
				return UsageError(args[0] + ":" + std::to_string(n + 1) + ": " +
						  key + " is not a number: " + word);
			total += v;
		}
	}
	std::printf("%s\n", Number(total).c_str());
	return 0;
}

const Registration kClientTotal("client-total", "FILE TAG GPU-INDEX KEY", ClientTotal);

} // namespace
} // namespace sim_check

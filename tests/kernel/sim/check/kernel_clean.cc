// sim_check kernel-clean: the guest's last check, before it powers off: no
// kernel warning or oops in dmesg (kernel-clean), which follows on the
// console as "GPUQ-DMESG <kernel>| <line>", then "GPUQ-KTEST-DONE <kernel>"
// (the host's sign that the guest got to the end).
#include "command.h"
#include "guest_process.h"
#include "lines.h"
#include "verdict.h"

#include <cstdio>

namespace sim_check
{
namespace
{

int KernelClean(const std::vector<std::string> &args)
{
	if (!args.empty())
		return UsageError("kernel-clean");
	Ktime("finished");
	RunFor({ "dmesg" }, "/tmp/dmesg.txt", "/dev/null", 60);
	std::vector<std::string> lines;
	ReadLines("/tmp/dmesg.txt", lines);
	bool clean = true;
	for (const std::string &line : lines)
		for (const char *bad :
		     { "WARNING:", "BUG:", "Oops", "Call Trace", "general protection" })
			clean &= line.find(bad) == std::string::npos;
	if (clean)
		Pass("kernel-clean", "no WARNING/BUG/Oops in dmesg");
	else
		Fail("kernel-clean", "dmesg has a kernel warning or oops (see GPUQ-DMESG lines)");
	for (const std::string &line : lines)
		std::printf("GPUQ-DMESG %s| %s\n", KernelLabel(), line.c_str());
	std::printf("GPUQ-KTEST-DONE %s\n", KernelLabel());
	std::fflush(stdout);
	return 0;
}

const Registration kKernelClean("kernel-clean", "", KernelClean);

} // namespace
} // namespace sim_check

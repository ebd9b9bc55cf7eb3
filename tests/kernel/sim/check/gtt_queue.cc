// sim_check gtt-queue CHECK DRIVER_OUT SMAPS: the queue g1, whose amd_queue_t
// the driver placed in simulated GTT mapped VM_IO | VM_PFNMAP (as ROCr >= 6.2
// places it on MES GPUs): the driver's last "GTT addr=0x<a> errno=<e>" line
// in DRIVER_OUT says process_vm_readv failed there with EFAULT (14), the
// mapping at <a> in SMAPS (/proc/<driver>/smaps) has VmFlags io and pf, and
// the detail names g1's last submitted/pending counts (the submissions
// compared before this check count it: the sampler reads it from
// /proc/<pid>/mem). An unreadable SMAPS (the driver gone) is a FAIL.
#include "command.h"
#include "mode_inputs.h"

#include <regex>

namespace sim_check
{
namespace
{

// The VmFlags line of the mapping that starts at ADDR (hex, no 0x).
std::string VmFlags(const std::vector<std::string> &smaps, const std::string &addr)
{
	static const std::regex header("^[0-9a-f]+-[0-9a-f]+$");
	bool on = false;
	for (const std::string &line : smaps) {
		const std::vector<std::string> f = Fields(line);
		if (!f.empty() && std::regex_match(f[0], header))
			on = !addr.empty() && StartsWith(f[0], addr + "-");
		if (on && StartsWith(line, "VmFlags:"))
			return line;
	}
	return "";
}

bool HasFlag(const std::string &flags, const std::string &flag)
{
	for (const std::string &f : Fields(flags))
		if (f == flag)
			return true;
	return false;
}

int GttQueue(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("gtt-queue CHECK DRIVER_OUT SMAPS");
	std::vector<std::string> out, smaps;
	std::string error;
	if (!ReadLines(args[1], out, error))
		return UsageError(error);
	ReadLines(args[2], smaps); // unreadable: the driver is gone (a FAIL)
	static const std::regex addr_re(".* GTT addr=0x([0-9a-f]*) .*");
	static const std::regex errno_re(".* GTT addr=.* errno=([0-9]*)");
	std::string addr, err, g1;
	for (const std::string &line : out) {
		std::smatch m;
		if (std::regex_match(line, m, addr_re))
			addr = m[1];
		if (std::regex_match(line, m, errno_re))
			err = m[1];
		if (line.find(" QUEUE g1 ") != std::string::npos)
			g1 = line;
	}
	const std::string flags = VmFlags(smaps, addr);
	if (err == "14" && HasFlag(flags, "io") && HasFlag(flags, "pf")) {
		const size_t at = g1.find(" submitted=");
		const std::string counts = at == std::string::npos
					       ? g1
					       : g1.substr(at + std::string(" submitted=").size());
		return Judged(true, args[0],
			      "g1's amd_queue_t at 0x" + addr + " is mapped" +
				  flags.substr(std::string("VmFlags:").size()) +
				  ", process_vm_readv gives EFAULT there, and the submissions "
				  "above count its " +
				  counts);
	}
	return Judged(false, args[0],
		      "want EFAULT from process_vm_readv and VmFlags io pf: errno=" + err +
			  " flags='" + flags + "' addr=" + addr);
}

const Registration kGttQueue("gtt-queue", "CHECK DRIVER_OUT SMAPS", GttQueue);

} // namespace
} // namespace sim_check

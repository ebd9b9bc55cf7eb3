// sim_check client-start GROUP TIER UP DOORBELLS NAME STACK PID CONTAINER
//   RUNTIME MAPS CLIENT-OUT ROCM: GROUP:start for one agent of a client run:
// NAME's client (STACK's, "-" for Debian 12's ROCm) said READY as PID ("-"
// when it did not) in CONTAINER, and maps ROCr from RUNTIME alone (MAPS:
// its /proc/PID/maps), the --hsa-runtime file the agent's doorbell uprobes
// sit on. The agent came up UP seconds after the runs' agents started with
// DOORBELLS doorbell uprobes attached in tier TIER; ROCM holds the stacks'
// version files (the PASS says what ran). CLIENT-OUT is the client's output.
#include "lines.h"
#include "client_runs.h"
#include "command.h"
#include "verdict.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace sim_check
{
namespace
{

// PATH's text less its trailing newlines ($(cat PATH)), "" when unreadable.
std::string Text(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream text;
	text << in.rdbuf();
	std::string s = text.str();
	while (!s.empty() && s.back() == '\n')
		s.pop_back();
	return s;
}

// The ROCr files MAPS names, sorted, each followed by a space (`grep -o
// '/[^ ]*libhsa-runtime64[^ ]*' | sort -u | tr '\n' ' '`).
std::string MappedRocr(const std::string &maps)
{
	std::set<std::string> files;
	std::ifstream in(maps);
	std::string line;
	while (std::getline(in, line)) {
		size_t p = 0;
		while ((p = line.find('/', p)) != std::string::npos) {
			const size_t end = std::min(line.find(' ', p), line.size());
			if (line.substr(p, end - p).find("libhsa-runtime64") == std::string::npos) {
				p++;
				continue;
			}
			files.insert(line.substr(p, end - p));
			p = end;
		}
	}
	std::string s;
	for (const std::string &f : files)
		s += f + " ";
	return s;
}

// What ran: the stack's runtimes and how the client reached /dev/kfd.
std::string WhatRan(const std::string &name, const std::string &stack, const std::string &rocm)
{
	if (stack == "-")
		return "(on the null thunk with /dev/kfd)";
	if (name == "rocr")
		return "(Debian's ROCr " + Text(rocm + "/" + stack + "/version") +
		       " on the KFD null GPU forwarding to /dev/kfd)";
	const std::string d = rocm + "/" + name + "-" + stack;
	const std::string rocblas = Text(d + "/rocblas-version");
	std::ifstream probe(d + "/rocblas-version", std::ios::ate);
	return "(Debian's " +
	       (probe && probe.tellg() > 0 ? "rocBLAS " + rocblas + ", " : std::string()) + "HIP " +
	       Text(d + "/hip-version") + " and ROCr " + Text(d + "/rocr-version") +
	       ", chrooted in its root over 9p, on the KFD null GPU forwarding to /dev/kfd)";
}

int ClientStart(const std::vector<std::string> &args)
{
	if (args.size() != 12)
		return UsageError("client-start GROUP TIER UP DOORBELLS NAME STACK PID CONTAINER "
				  "RUNTIME MAPS CLIENT-OUT ROCM");
	const std::string &group = args[0], &tier = args[1], &up = args[2], &doorbells = args[3],
			  &name = args[4], &stack = args[5], &pid = args[6], &container = args[7],
			  &runtime = args[8];
	std::vector<std::string> out;
	std::string error;
	if (!ReadLines(args[10], out, error))
		return UsageError(error);
	const std::string check = group + ":start";
	if (pid == "-") {
		std::string head;
		for (size_t i = 0; i < out.size() && i < 3; i++)
			head += out[i] + ";";
		Fail(check, name + " client: no READY (" + head + ")");
		return 0;
	}
	const std::string maps = MappedRocr(args[9]);
	if (maps != runtime + " ") {
		Fail(check, "the " + name + " client maps ROCr as '" + maps +
				"', not the --hsa-runtime file " + runtime);
		return 0;
	}
	Pass(check, "the agent serves (up after " + up +
			"s before the guest's first client run; lifecycle probes in tier " + tier +
			", " + doorbells + " doorbell uprobes); " + name + " client pid " + pid +
			" in container " + container + ": " + (out.empty() ? "" : out[0]) + " " +
			WhatRan(name, stack, args[11]));
	return 0;
}

const Registration kClientStart("client-start",
				"GROUP TIER UP DOORBELLS NAME STACK PID CONTAINER RUNTIME MAPS "
				"CLIENT-OUT ROCM",
				ClientStart);

} // namespace
} // namespace sim_check

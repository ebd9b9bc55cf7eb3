#include "sim_module.h"

#include "guest_process.h"

#include <cstdlib>
#include <sys/stat.h>

namespace sim_check
{

int GpuNodes()
{
	return static_cast<int>(Entries(kTopology).size()) - 1;
}

std::string GpuOfNode(int node)
{
	std::string id = ReadText(std::string(kTopology) + "/" + std::to_string(node) + "/gpu_id");
	return id.substr(0, id.find('\n'));
}

bool Reload(const std::string &module, const std::vector<std::string> &parameters,
	    const std::string &log)
{
	if (RunFor({ "rmmod", "amdgpu" }, log, "", 120) != 0)
		return false;
	std::vector<std::string> insmod = { "insmod", module };
	insmod.insert(insmod.end(), parameters.begin(), parameters.end());
	const std::string insmod_log = log + ".insmod";
	const int rc = RunFor(insmod, insmod_log, "", 120);
	AppendFile(insmod_log, log);
	return rc == 0;
}

bool KfdPresent()
{
	struct stat st;
	return stat("/dev/kfd", &st) == 0 && S_ISCHR(st.st_mode);
}

bool HasModuleBtf()
{
	return Exists("/sys/kernel/btf/amdgpu");
}

std::string CgroupId(const std::string &dir)
{
	struct stat st;
	return stat(dir.c_str(), &st) == 0 ? std::to_string(st.st_ino) : "0";
}

std::string QueueTypeLines()
{
	std::string out;
	const std::string types = ReadText("/sys/kernel/debug/kfd_sim/queue_types");
	size_t start = 0;
	while (start < types.size()) {
		size_t end = types.find('\n', start);
		if (end == std::string::npos)
			end = types.size();
		out += "QTYPE " + types.substr(start, end - start) + "\n";
		start = end + 1;
	}
	return out;
}

std::string GpuLines()
{
	std::string out;
	for (const std::string &node : Entries(kTopology)) {
		const std::string id = GpuOfNode(std::atoi(node.c_str()));
		if (!id.empty() && id != "0")
			out += "GPU " + id + "\n";
	}
	return out;
}

std::string CgroupLine(const std::string &dir, const std::string &label)
{
	struct stat st;
	if (stat(dir.c_str(), &st) != 0)
		return "";
	return "CG " + std::to_string(st.st_ino) + " " + label + "\n";
}

} // namespace sim_check

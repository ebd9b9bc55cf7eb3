// The simulator's module (a module named amdgpu: tests/kernel/sim) as the
// scenarios that reload it see it: its topology's GPU nodes and reloads with
// other parameters (more GPUs, partitions, fewer CP queue slots).
#ifndef GPUQ_SIM_CHECK_SIM_MODULE_H
#define GPUQ_SIM_CHECK_SIM_MODULE_H

#include <string>
#include <vector>

namespace sim_check
{

constexpr const char *kTopology = "/sys/class/kfd/kfd/topology/nodes";

// The GPU nodes of the topology (every node but the CPU's, 0).
int GpuNodes();
// The gpu_id of topology node NODE ("" when it has none).
std::string GpuOfNode(int node);
// rmmod amdgpu, then insmod MODULE PARAMETERS: true when both worked; what
// they said in LOG.
bool Reload(const std::string &module, const std::vector<std::string> &parameters,
	    const std::string &log);
// /dev/kfd is there, a character device.
bool KfdPresent();
// The module's BTF is loaded (/sys/kernel/btf/amdgpu).
bool HasModuleBtf();
// "QTYPE <number> <name>" for each queue type of the simulator (the real
// module's enumerator names), as sim_compare reads them.
std::string QueueTypeLines();
// "GPU <gpu_id>" for each GPU node of the topology.
std::string GpuLines();
// Cgroup directory DIR's cgroup v2 id (its inode number), "0" without it.
std::string CgroupId(const std::string &dir);
// "CG <inode> <label>": cgroup DIR (its cgroup v2 id is its inode) as
// sim_compare names it ("-" for the host).
std::string CgroupLine(const std::string &dir, const std::string &label);

} // namespace sim_check

#endif

#include "null_gpu.h"

#include "guest_process.h"
#include "sim_module.h"

#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{

std::string MissingReason(const std::vector<std::string> &markers)
{
	for (const std::string &marker : markers)
		if (Exists(kNullGpuDir + marker))
			return FirstLine(kNullGpuDir + marker);
	return "";
}

pid_t StartOnNullGpu(const NullGpuRun &run, const std::vector<std::string> &env,
		     const std::vector<std::string> &argv, int input, const std::string &output)
{
	mkdir(run.control.c_str(), 0755);
	for (const std::string &name : Entries(run.control))
		unlink((run.control + "/" + name).c_str());
	unlink(run.truth.c_str());
	std::vector<std::string> command;
	if (run.fifo)
		command = { "chrt", "-o", "0" };
	const std::string stack = "/rocm/" + run.stack + "/lib";
	if (run.root.empty() && !run.stack.empty()) {
		command.insert(command.end(),
			       { "env", "LD_PRELOAD=" + stack + "/libgpuq_kfdnull.so" });
	} else if (run.root.empty()) {
		command.insert(command.end(), { "env", "LD_LIBRARY_PATH=/lib/nullgpu" });
	} else {
		command.insert(command.end(),
			       { "chroot", "/share/" + run.root, "env",
				 "LD_PRELOAD=/mnt/libgpuq_kfdnull.so", "HOME=/tmp" });
	}
	command.insert(command.end(),
		       { "GPUQ_NULLGPU_KFD=1", "GPUQ_NULLGPU_KFD_NODES=" + run.nodes,
			 "GPUQ_NULLGPU_GPUS=" + run.gpus, "GPUQ_NULLGPU_CONTROL=" + run.control,
			 "GPUQ_NULLGPU_TRUTH=" + run.truth, "HSA_ENABLE_SDMA=0" });
	if (run.fifo)
		command.push_back("GPUQ_NULLGPU_CP_FIFO=1");
	command.insert(command.end(), env.begin(), env.end());
	if (run.root.empty() && !run.stack.empty())
		command.insert(command.end(),
			       { stack + "/ld-linux-x86-64.so.2", "--library-path", stack });
	command.insert(command.end(), argv.begin(), argv.end());
	SpawnOptions options;
	options.cgroup = run.cgroup;
	options.output = output;
	options.input = input;
	return Spawn(command, options);
}

bool DumpThunk(const NullGpuRun &run)
{
	unlink(run.truth.c_str());
	const std::string request = run.control + "/dump";
	WriteText(request, "");
	const double t0 = Uptime();
	while (Exists(request)) {
		if (Uptime() - t0 >= 60)
			return false;
		Nap(0.05);
	}
	return true;
}

void AppendThunkLines(const NullGpuRun &run, bool exited, const std::string &path)
{
	const std::string inode = CgroupId(run.cgroup);
	const std::string lines = path + ".part";
	RunFor({ "/proc/self/exe", "thunk-lines", exited ? "1" : "0", run.truth, inode }, lines,
	       "/dev/null", 60);
	AppendFile(lines, path);
	unlink(lines.c_str());
}

} // namespace sim_check

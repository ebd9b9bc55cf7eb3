// Runtime clients (Debian's real ROCr and HIP) started on a null GPU
// (tests/nullgpu) that forwards their queue creates and destroys to the
// simulator's /dev/kfd, and what the null GPU's thunk says of them.
#ifndef GPUQ_SIM_CHECK_NULL_GPU_H
#define GPUQ_SIM_CHECK_NULL_GPU_H

#include <string>
#include <sys/types.h>
#include <vector>

namespace sim_check
{

// Where the guest's null GPU libraries lie, with a TAG-missing file for each
// part the host could not build or share (its first line says why).
const std::string kNullGpuDir = "/lib/nullgpu/";
// Debian 12's ROCr, the one the null thunk serves (and, under a shared
// root, the root's).
const std::string kDebianRocr = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

// Why a part of MARKERS (TAG-missing names in kNullGpuDir) is missing: the
// first marker's first line, "" when none is there.
std::string MissingReason(const std::vector<std::string> &markers);

struct NullGpuRun {
	std::string cgroup;  // the container's cgroup directory
	std::string control; // the null GPU's control directory (pause, dump)
	std::string truth;   // its truth file
	std::string gpus;    // GPUQ_NULLGPU_GPUS ("1xgfx90a")
	std::string nodes;   // the KFD nodes its queues go to ("1,2")
	// "": Debian 12's ROCm on the null thunk (/lib/nullgpu); else the tag
	// of a root run_sim_tier.sh shares at /share/TAG (its build_hip_stacks),
	// chrooted in with the KFD null GPU preloaded from its /mnt.
	std::string root;
	// Else, with STACK set: a ROCm stack of /rocm (run_sim_tier.sh's
	// build_rocm_stacks: ROCr 6.4 or 7.2, which link the thunk in) through
	// its own loader and libraries (a container with its own ROCm), the
	// KFD null GPU preloaded.
	std::string stack;
	// The guest runs its processes SCHED_FIFO (no program can be skipped):
	// the client then time-shares (ROCr busy-waits and expects a
	// time-shared CPU) and its null CP thread runs FIFO.
	bool fifo = false;
};

// ARGV (ENV, "NAME=VALUE" each, in its environment) on the null GPU RUN
// describes, its stdin INPUT (-1: /dev/null), stdout and stderr in OUTPUT;
// a fresh control directory and no truth file. Its pid, or -1.
pid_t StartOnNullGpu(const NullGpuRun &run, const std::vector<std::string> &env,
		     const std::vector<std::string> &argv, int input, const std::string &output);

// The thunk writes its truth file now (its CP polls the control
// directory): false when it did not within 60 s.
bool DumpThunk(const NullGpuRun &run);

// RUN's thunk truth as the simulator's truth lines of its container
// (sim_check thunk-lines; EXITED: its process is gone), appended to PATH.
void AppendThunkLines(const NullGpuRun &run, bool exited, const std::string &path);

} // namespace sim_check

#endif

// Exact runs on a kernel that preempts BPF programs. There a program run is
// skipped when another task sits preempted inside the same program on this
// CPU (docs/probe-tiers.md), and no boot option stops it on 7.3:
// sched_dynamic_mode() (kernel/sched/core.c) accepts only "full" and "lazy"
// where the architecture has lazy preemption. The scheduler's own rule
// does: a SCHED_FIFO task is preempted only by a task of a higher priority
// (never at a tick, never by a SCHED_OTHER task; kernel/sched/rt.c), so
// tasks that share one FIFO priority never preempt one another inside a
// program. Every process a guest's scenario starts inherits FIFO priority 1
// from it: the agents, the drivers, the recorders. Kernel workers are not
// its children: the simulator's process teardown and eviction workers run
// hooked functions (destroys, runlist unmaps) while FIFO drivers run the
// same programs, so the simulator's worker_fifo parameter (every insmod)
// makes them FIFO 1 for the length of their work; two jobs exiting at once
// lost their teardown's destroys without it. One kind runs otherwise: the
// runtime clients (ROCr, HIP, rocBLAS) time-share (null_gpu.h says why).
// The forced skips (skips_scenario.cc) make the kernel skip programs on
// purpose.
#ifndef GPUQ_SIM_CHECK_GUEST_SCHEDULE_H
#define GPUQ_SIM_CHECK_GUEST_SCHEDULE_H

#include <string>

namespace sim_check
{

// debugfs sched/preempt ("none (voluntary) full" on Debian's 6.1, "full
// (lazy)" from 6.16), "" when unreadable.
std::string PreemptModel();
// MODEL's mode in use lets the kernel preempt programs ("(full)", "(lazy)"
// or "(rt)").
bool PreemptsPrograms(const std::string &model);
// Makes this process SCHED_FIFO at priority 1 where the kernel preempts
// programs: true when it now runs so (a failure goes to the log).
bool RunFifoWherePreempted(const std::string &model);

} // namespace sim_check

#endif

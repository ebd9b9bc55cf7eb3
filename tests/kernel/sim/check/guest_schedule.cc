#include "guest_schedule.h"

#include "guest_process.h"
#include "verdict.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sched.h>

namespace sim_check
{

std::string PreemptModel()
{
	std::string model = ReadText("/sys/kernel/debug/sched/preempt");
	while (!model.empty() && model.back() == '\n')
		model.pop_back();
	return model;
}

bool PreemptsPrograms(const std::string &model)
{
	for (const char *mode : { "(full)", "(lazy)", "(rt)" })
		if (model.find(mode) != std::string::npos)
			return true;
	return false;
}

bool RunFifoWherePreempted(const std::string &model)
{
	if (!PreemptsPrograms(model))
		return false;
	sched_param param{};
	param.sched_priority = 1;
	if (sched_setscheduler(0, SCHED_FIFO, &param) == 0)
		return true;
	std::printf("GPUQ-LOG %s init| SCHED_FIFO 1 refused (%s): checks may see skipped "
		    "programs\n",
		    KernelLabel(), std::strerror(errno));
	std::fflush(stdout);
	return false;
}

} // namespace sim_check

// The lines the host (run_sim_tier.sh) parses, one per check:
//   GPUQ-KTEST <kernel> <check> PASS|FAIL|SKIP <detail>
// <kernel> is the guest's label for its kernel (GPUQ_KERNEL, exported by
// sim/guest-init.sh). Newlines in DETAIL become "; " (one line per check).
#ifndef GPUQ_SIM_CHECK_VERDICT_H
#define GPUQ_SIM_CHECK_VERDICT_H

#include <string>

namespace sim_check
{

// The guest's label for its kernel (GPUQ_KERNEL), "unknown" without one.
const char *KernelLabel();

void Pass(const std::string &check, const std::string &detail);
void Fail(const std::string &check, const std::string &detail);
void Skip(const std::string &check, const std::string &detail);
// A FAIL was printed (sim_check then exits 1).
bool AnyFailed();
// How many FAILs were printed so far (a scenario's check failed when a call
// added one: command.h's Run).
int Failures();
// PASS when OK, else FAIL.
void Verdict(bool ok, const std::string &check, const std::string &detail);

// PATH's lines into the guest's log, each "GPUQ-LOG <kernel> GROUP| line".
void Dump(const std::string &group, const std::string &path);

// V as awk prints a number: whole values without a fraction, others with six
// significant digits.
std::string Number(double v);

} // namespace sim_check

#endif

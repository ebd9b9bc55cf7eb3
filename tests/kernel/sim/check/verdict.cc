#include "verdict.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace sim_check
{
namespace
{

int failures = 0;

void Result(const char *what, const std::string &check, const std::string &detail)
{
	std::string one;
	for (char c : detail) {
		if (c == '\n')
			one += "; ";
		else
			one += c;
	}
	std::printf("GPUQ-KTEST %s %s %s %s\n", KernelLabel(), check.c_str(), what, one.c_str());
	std::fflush(stdout);
}

} // namespace

const char *KernelLabel()
{
	const char *kernel = std::getenv("GPUQ_KERNEL");
	return kernel && *kernel ? kernel : "unknown";
}

void Dump(const std::string &group, const std::string &path)
{
	std::ifstream in(path);
	for (std::string line; std::getline(in, line);)
		std::printf("GPUQ-LOG %s %s| %s\n", KernelLabel(), group.c_str(), line.c_str());
	std::fflush(stdout);
}

void Pass(const std::string &check, const std::string &detail)
{
	Result("PASS", check, detail);
}

void Fail(const std::string &check, const std::string &detail)
{
	++failures;
	Result("FAIL", check, detail);
}

bool AnyFailed()
{
	return failures > 0;
}

int Failures()
{
	return failures;
}

void Skip(const std::string &check, const std::string &detail)
{
	Result("SKIP", check, detail);
}

void Verdict(bool ok, const std::string &check, const std::string &detail)
{
	if (ok)
		Pass(check, detail);
	else
		Fail(check, detail);
}

std::string Number(double v)
{
	char text[64];
	if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
		std::snprintf(text, sizeof(text), "%.0f", v);
	else
		std::snprintf(text, sizeof(text), "%.6g", v);
	return text;
}

} // namespace sim_check

// The kernel-by-probe-tier compatibility table, made from the kernel tiers'
// own results (the GPUQ-KTEST markers of each guest), never by hand.
//
// sim_check compat-rows qemu|sim LABEL PACKAGE LOG [KERNEL]
//   TSV rows of one guest's log (KERNEL: the row's kernel, default LABEL)
// sim_check compat-table TSV...
//   the table docs/kernels.md shows (scripts/compat-table.sh puts it there)
//
// A row is: kernel, package (name version suite), tier, aspect, result,
// date. Aspects: attached (`check` in that tier: every hook attached or
// reported missing as the kernel lacks it), verifier (`check --verify`: all
// of the tier's programs accepted), fired-sim (the simulator tier's checks
// of that tier, every family equal to the simulator's truth), fired-real (a
// real KFD process's failed create and exit seen through the real
// amdgpu.ko). Result: yes (all passed), no (one failed), skip (skipped,
// with the guest's reason, e.g. a kernel whose KFD creates no process
// without a GPU).
#include "command.h"
#include "lines.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <regex>

namespace sim_check
{
namespace
{

struct Cell {
	const char *tier, *aspect;
	std::vector<const char *> checks; // patterns a check's name matches from its start
};

// Which checks make each cell of the QEMU tier's rows.
const std::vector<Cell> kQemuCells = {
	{ "btf-fentry", "attached", { "check-fentry:" } },
	{ "btf-fentry", "verifier", { "check-verify:fentry" } },
	{ "btf-fentry", "fired-real", { "daemon-fentry:(create-failure|process-exit)" } },
	{ "btf-kprobe", "attached", { "check-kprobe:", "check-btf:" } },
	{ "btf-kprobe", "verifier", { "check-verify:kprobe" } },
	{ "btf-kprobe", "fired-real", { "daemon-(kprobe|btf):(create-failure|process-exit)" } },
	{ "args-kprobe", "attached", { "check-args:", "check-nobtf:" } },
	{ "args-kprobe", "verifier", { "check-verify:args-kprobe" } },
	{ "args-kprobe", "fired-real", { "daemon-(args|nobtf):(create-failure|process-exit)" } },
	{ "tracepoint", "attached", { "check-tp:" } },
	{ "tracepoint", "verifier", { "check-verify:tracepoint" } },
	{ "tracepoint", "fired-real", { "daemon-tp:(create-failure|process-exit)" } },
};
// The simulator tier's: each tier's lifecycle group, its programs group and
// its runtime clients' groups (rocr, hip-7.2-kprobe, rocblas-6.4-tp...).
const std::vector<Cell> kSimCells = {
	{ "btf-fentry",
	  "fired-sim",
	  { "fentry:", "programs-btf-fentry:", "(rocr|hip|rocblas)(-[0-9.]+)?:" } },
	{ "btf-kprobe",
	  "fired-sim",
	  { "kprobe:", "programs-btf-kprobe:", "(rocr|hip|rocblas)(-[0-9.]+)?-kprobe:" } },
	{ "args-kprobe",
	  "fired-sim",
	  { "args:", "programs-args-kprobe:", "(rocr|hip|rocblas)(-[0-9.]+)?-args:" } },
	{ "tracepoint",
	  "fired-sim",
	  { "tracepoint:", "programs-tracepoint:", "(rocr|hip|rocblas)(-[0-9.]+)?-tp:" } },
};
const std::vector<std::string> kTiers = { "btf-fentry", "btf-kprobe", "args-kprobe", "tracepoint" };
const std::vector<std::string> kAspects = { "attached", "verifier", "fired-sim", "fired-real" };

std::string Today()
{
	char date[16];
	const std::time_t now = std::time(nullptr);
	std::strftime(date, sizeof(date), "%F", std::gmtime(&now));
	return date;
}

int CompatRows(const std::vector<std::string> &args)
{
	const char *usage = "compat-rows qemu|sim LABEL PACKAGE LOG [KERNEL]";
	if ((args.size() != 4 && args.size() != 5) || (args[0] != "qemu" && args[0] != "sim"))
		return UsageError(usage);
	const std::string &label = args[1], &package = args[2];
	const std::string kernel = args.size() == 5 ? args[4] : label;
	std::vector<std::string> lines;
	std::string error;
	if (!ReadLines(args[3], lines, error))
		return UsageError(error);
	// each check's last status
	std::map<std::string, std::string> status;
	for (const std::string &line : lines) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() >= 4 && f[0] == "GPUQ-KTEST" && f[1] == label)
			status[f[2]] = f[3];
	}
	const std::string date = Today();
	for (const Cell &cell : args[0] == "qemu" ? kQemuCells : kSimCells) {
		int pass = 0, fail = 0, skip = 0;
		for (const auto &[check, result] : status)
			for (const char *pattern : cell.checks)
				if (std::regex_search(check,
						      std::regex(std::string("^") + pattern))) {
					pass += result == "PASS";
					skip += result == "SKIP";
					fail += result != "PASS" && result != "SKIP";
				}
		const char *result = fail ? "no" : pass ? "yes" : skip ? "skip" : nullptr;
		if (result)
			std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", kernel.c_str(), package.c_str(),
				    cell.tier, cell.aspect, result, date.c_str());
	}
	return 0;
}

// A kernel label's numbers ("6.12" before "6.16", "6.2" before "6.12"), as
// `sort -V` orders them.
std::vector<int> Version(const std::string &label)
{
	std::vector<int> numbers;
	int n = -1;
	for (char c : label) {
		if (c >= '0' && c <= '9') {
			n = (n < 0 ? 0 : n * 10) + (c - '0');
		} else if (n >= 0) {
			numbers.push_back(n);
			n = -1;
		}
	}
	if (n >= 0)
		numbers.push_back(n);
	return numbers;
}

const char *Symbol(const std::string &result)
{
	if (result == "yes" || result == "skip")
		return result == "yes" ? "yes" : "skip";
	return result == "no" ? "**no**" : "-";
}

// One row per kernel (the last package row read wins), one column per
// tier; a cell lists the aspects verified.
int CompatTable(const std::vector<std::string> &args)
{
	if (args.empty())
		return UsageError("compat-table TSV...");
	struct Kernel {
		std::string package, date;
		std::map<std::string, std::string> cells; // "tier aspect" -> result
	};
	std::map<std::string, Kernel> kernels;
	for (const std::string &path : args) {
		std::vector<std::string> lines;
		std::string error;
		if (!ReadLines(path, lines, error))
			return UsageError(error);
		for (const std::string &line : lines) {
			std::vector<std::string> f;
			size_t start = 0;
			for (size_t tab; (tab = line.find('\t', start)) != std::string::npos;
			     start = tab + 1)
				f.push_back(line.substr(start, tab - start));
			f.push_back(line.substr(start));
			if (f.size() < 6)
				continue;
			Kernel &k = kernels[f[0]];
			k.package = f[1];
			k.cells[f[2] + " " + f[3]] = f[4];
			k.date = std::max(k.date, f[5]);
		}
	}
	std::vector<std::string> order;
	for (const auto &entry : kernels)
		order.push_back(entry.first);
	std::stable_sort(
	    order.begin(), order.end(),
	    [](const std::string &a, const std::string &b) { return Version(a) < Version(b); });
	std::printf(
	    "| kernel | package | btf-fentry | btf-kprobe | args-kprobe | tracepoint | date |\n");
	std::printf("|---|---|---|---|---|---|---|\n");
	for (const std::string &name : order) {
		const Kernel &k = kernels[name];
		std::string line = "| " + name + " | " + k.package;
		for (const std::string &tier : kTiers) {
			std::string cell;
			for (const std::string &aspect : kAspects) {
				const auto it = k.cells.find(tier + " " + aspect);
				cell += std::string(cell.empty() ? "" : " / ") +
					Symbol(it == k.cells.end() ? "" : it->second);
			}
			line += " | " + cell;
		}
		std::printf("%s | %s |\n", line.c_str(), k.date.c_str());
	}
	return 0;
}

const Registration kCompatRows("compat-rows", "qemu|sim LABEL PACKAGE LOG [KERNEL]", CompatRows);
const Registration kCompatTable("compat-table", "TSV...", CompatTable);

} // namespace
} // namespace sim_check

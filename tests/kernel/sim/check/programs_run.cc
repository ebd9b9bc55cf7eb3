// sim_check programs-run CHECK ELAPSED [NAME ID OUT THREADS STATUS]...
// Every program ran its work and holds its queues: OUT (its stdout and
// stderr) has "HOLD ... rc=0" and "hip_client ... ok". NAME: the program, ID:
// its container, ELAPSED: the seconds since they started. For one that never
// held, the guest left why, in the one line CI shows: THREADS (the guest's
// `threads` of a program still running: where its threads wait says whether
// the kernel, state D in a kfd ioctl, or user space, futex or nanosleep,
// hung) or STATUS ("EXIT-STATUS PID DMESG-LINES" of one that died: its
// stdout, a file, is flushed only at exit, so how it ended and what the
// kernel said of its pid, a segfault or an OOM kill). Neither need exist.
// Exit 1 when the verdict failed (the guest then dumps OUT), 2 on bad input.
#include "command.h"
#include "programs.h"
#include "verdict.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace sim_check
{
namespace
{

bool Any(const std::vector<std::string> &lines, const std::regex &re)
{
	for (const std::string &l : lines)
		if (std::regex_search(l, re))
			return true;
	return false;
}

// `tail -n 3 | tr '\n' ';'` of PATH's text.
std::string LastThree(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream text;
	text << in.rdbuf();
	const std::string s = text.str();
	size_t start = s.size(), lines = 0;
	for (size_t i = s.size(); i > 0; i--) {
		if (s[i - 1] == '\n' && i != s.size() && ++lines == 3)
			break;
		start = i - 1;
	}
	std::string tail = s.substr(start);
	for (char &c : tail)
		if (c == '\n')
			c = ';';
	return tail;
}

// "NxSTATE/SYSCALL/WCHAN, ..." of the threads in THREADS, by their count.
std::string ThreadStates(const std::vector<std::string> &threads)
{
	std::map<std::string, int> count;
	for (const std::string &line : threads) {
		const std::vector<std::string> f = Fields(line);
		if (line.rfind("thread ", 0) != 0)
			continue;
		// the comm (from field 3) may hold blanks: from its "state"
		for (size_t i = 2; i + 1 < f.size(); i++) {
			if (f[i] != "state")
				continue;
			auto at = [&f](size_t n) { return n < f.size() ? f[n] : std::string(); };
			count[at(i + 1) + "/" + at(i + 3) + "/" + at(i + 5)]++;
			break;
		}
	}
	std::string text;
	for (const auto &[state, n] : count)
		text += (text.empty() ? "" : ", ") + std::to_string(n) + "x" + state;
	return text;
}

// Why the program of OUT (never held) did not: from THREADS or STATUS.
bool NoHold(const std::string *p, const std::string &elapsed, std::string &why, std::string &error)
{
	std::vector<std::string> lines;
	if (ReadLines(p[3], lines, error)) {
		why = " (no HOLD after " + elapsed +
		      " s; threads by state, syscall and wchan: " + ThreadStates(lines) + ")";
		return true;
	}
	lines.clear();
	if (!ReadLines(p[4], lines, error)) {
		error.clear();
		return true;
	}
	const std::string line = lines.empty() ? "" : lines[0];
	const size_t a = line.find(' '), b = a == std::string::npos ? a : line.find(' ', a + 1);
	if (b == std::string::npos) {
		error = p[4] + ": not \"EXIT-STATUS PID DMESG-LINES\": " + line;
		return false;
	}
	const std::string status = line.substr(0, a), pid = line.substr(a + 1, b - a - 1);
	const int st = std::atoi(status.c_str());
	why = " (died before its HOLD, exit status " + status +
	      (st > 128 ? " = signal " + std::to_string(st - 128) : "") + "; dmesg on pid " + pid +
	      ": " + line.substr(b + 1) + ")";
	return true;
}

int ProgramsRun(const std::vector<std::string> &a)
{
	if (a.size() < 2 || (a.size() - 2) % 5 != 0)
		return UsageError("programs-run CHECK ELAPSED [NAME ID OUT THREADS STATUS]...");
	// POSIX ERE as grep reads it ('.' takes any character, '\r' too)
	const auto ere = std::regex::extended;
	static const std::regex held("^HOLD .* rc=0$", ere), ok("^hip_client .* ok$", ere),
	    hold("^HOLD", ere), client("^hip_client", ere);
	std::string bad, detail, error;
	for (size_t i = 2; i < a.size(); i += 5) {
		const std::string *p = &a[i];
		std::vector<std::string> out;
		if (!ReadLines(p[2], out, error))
			return UsageError(error);
		if (Any(out, held) && Any(out, ok)) {
			std::string lines;
			for (const std::string &l : out)
				if (std::regex_search(l, client))
					lines += (lines.empty() ? "" : "\n") + l;
			detail += " " + lines + " in container " + p[1] + ";";
			continue;
		}
		bad += " " + p[0] + ": " + LastThree(p[2]);
		std::string why;
		if (!Any(out, hold) && !NoHold(p, a[1], why, error))
			return UsageError(error);
		bad += why;
	}
	if (!bad.empty()) {
		Fail(a[0], bad);
		return 1;
	}
	Pass(a[0], "after " + a[1] + "s, holding their queues:" + detail);
	return 0;
}

const Registration kProgramsRun("programs-run", "CHECK ELAPSED [NAME ID OUT THREADS STATUS]...",
				ProgramsRun);

} // namespace
} // namespace sim_check

// Reading a tool's text output in the checks: its lines, and the first word
// of each.
#ifndef GPUQ_SIM_CHECK_LINES_H
#define GPUQ_SIM_CHECK_LINES_H

#include <string>
#include <vector>

namespace sim_check
{

// PATH's lines; false (and no lines) when PATH cannot be read.
bool ReadLines(const std::string &path, std::vector<std::string> &out);
// The same, with ERROR "cannot read PATH" when it cannot be read.
bool ReadLines(const std::string &path, std::vector<std::string> &out, std::string &error);

// LINE's whitespace-separated fields (awk's $1..$NF).
std::vector<std::string> Fields(const std::string &line);

// TEXT as awk reads a number: its leading numeric prefix, 0 when none.
double AwkNumber(const std::string &text);

// LINE begins with PREFIX.
bool StartsWith(const std::string &line, const std::string &prefix);
// LINE ends with SUFFIX.
bool EndsWith(const std::string &line, const std::string &suffix);

// The lines of LINES that start with PREFIX.
std::vector<std::string> StartingWith(const std::vector<std::string> &lines,
				      const std::string &prefix);

// LINES joined with SEPARATOR.
std::string Join(const std::vector<std::string> &lines, const std::string &separator);

// PATH's text with every newline a space ("" when unreadable): a tool's
// stderr in a verdict's detail.
std::string OneLine(const std::string &path);

} // namespace sim_check

#endif

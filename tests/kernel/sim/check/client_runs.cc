#include "client_runs.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sim_check
{

bool ReadLines(const std::string &path, std::vector<std::string> &out, std::string &error)
{
	std::ifstream in(path);
	if (!in) {
		error = "cannot read " + path;
		return false;
	}
	std::string line;
	while (std::getline(in, line))
		out.push_back(line);
	return true;
}

std::vector<std::string> Fields(const std::string &line)
{
	std::istringstream in(line);
	std::vector<std::string> fields;
	std::string field;
	while (in >> field)
		fields.push_back(field);
	return fields;
}

double AwkNumber(const std::string &text)
{
	return std::strtod(text.c_str(), nullptr);
}

double ThunkQueue::Get(const std::string &key) const
{
	auto it = fields.find(key);
	return it == fields.end() ? 0 : AwkNumber(it->second);
}

bool ThunkQueue::Client() const
{
	auto it = fields.find("owner");
	return it != fields.end() && it->second == "client";
}

bool ReadThunkQueues(const std::string &path, std::vector<ThunkQueue> &out, std::string &error)
{
	std::vector<std::string> lines;
	if (!ReadLines(path, lines, error))
		return false;
	for (const std::string &line : lines) {
		const std::vector<std::string> fields = Fields(line);
		if (fields.empty() || fields[0] != "queue")
			continue;
		ThunkQueue q;
		for (size_t i = 1; i < fields.size(); i++) {
			const size_t eq = fields[i].find('=');
			if (eq == std::string::npos) {
				error =
				    path + ": not a key=value field: " + fields[i] + " in: " + line;
				return false;
			}
			q.fields[fields[i].substr(0, eq)] = fields[i].substr(eq + 1);
		}
		out.push_back(std::move(q));
	}
	return true;
}

std::map<std::string, ClientSums> SumClientQueues(const std::vector<ThunkQueue> &queues)
{
	std::map<std::string, ClientSums> sums;
	for (const ThunkQueue &q : queues) {
		if (!q.Client())
			continue;
		auto it = q.fields.find("gpu_id");
		ClientSums &s = sums[it == q.fields.end() ? "" : it->second];
		s.writes += q.Get("write_index");
		s.dispatches += q.Get("dispatches");
		s.ext += q.Get("ext_dispatches");
		s.barrier_dispatches += q.Get("barrier_dispatches");
		s.barriers += q.Get("barriers");
		s.other += q.Get("vendor") + q.Get("agent") + q.Get("other");
	}
	return sums;
}

} // namespace sim_check

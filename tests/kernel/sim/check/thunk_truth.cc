#include "thunk_truth.h"

#include "lines.h"

#include <cstdlib>
#include <sstream>

namespace sim_check
{
namespace
{

// The fields read as counts; each must be a decimal number where present.
const char *const kCounts[] = { "live",	      "write_index",	"pending",
				"dispatches", "ext_dispatches", "barrier_dispatches",
				"barriers",   "vendor",		"agent",
				"other" };

bool IsCount(const std::string &text)
{
	if (text.empty())
		return false;
	for (char c : text)
		if (c < '0' || c > '9')
			return false;
	return true;
}

} // namespace

std::string ThunkQueue::Text(const std::string &key) const
{
	auto it = fields.find(key);
	return it == fields.end() ? "" : it->second;
}

unsigned long long ThunkQueue::Count(const std::string &key) const
{
	const std::string text = Text(key);
	return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

bool ReadThunkQueues(const std::string &path, std::vector<ThunkQueue> &out, std::string &error)
{
	std::vector<std::string> lines;
	if (!ReadLines(path, lines, error))
		return false;
	int n = 0;
	for (const std::string &line : lines) {
		n++;
		std::istringstream words(line);
		std::string word;
		if (!(words >> word) || word != "queue")
			continue;
		const std::string where = path + ":" + std::to_string(n) + ": ";
		ThunkQueue q;
		while (words >> word) {
			const size_t eq = word.find('=');
			if (eq == std::string::npos || eq == 0) {
				error = where + "not a key=value: " + word;
				return false;
			}
			q.fields[word.substr(0, eq)] = word.substr(eq + 1);
		}
		if (q.Text("gpu_id").empty()) {
			error = where + "a queue without gpu_id";
			return false;
		}
		for (const char *key : kCounts) {
			auto it = q.fields.find(key);
			if (it != q.fields.end() && !IsCount(it->second)) {
				error = where + key + " is not a count: " + it->second;
				return false;
			}
		}
		out.push_back(std::move(q));
	}
	return true;
}

} // namespace sim_check

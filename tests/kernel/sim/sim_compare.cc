// sim_compare: the simulator tier's equality, the agent's metrics against
// the simulator's ground truth. Runs in the guest (a static binary in the
// initramfs, built by run_sim_tier.sh) and on the host for the sim_compare_*
// cases (tests/kernel/CMakeLists.txt).
//
//   sim_compare --fams "gpuq_queues gpuq_queue_creates_total" [--only C] INPUT
//
// With --only, the series of that container label alone are compared (a
// client run's thunk truth knows its own container, the agent every one).
// Every series must equal the truth exactly: there is no allowance for
// dropped events (a destroy reconciliation got ahead of is still counted as
// a destroy, docs/reconciliation.md).
// INPUT holds tagged lines:
//   QTYPE <kfd_queue_type> <label>    the label of a queue type (the real
//                                     module's enumerator name, from
//                                     /sys/kernel/debug/kfd_sim/queue_types);
//                                     before any truth line
//   GPU <gpu_id>                      a gpu_id of the topology
//   CG <cgroup id> <container label>  (label "-" = host, container="")
//   BASE <truth line>                 truth when the agent started (counters)
//   NOW <truth line>                  truth now
//   MET <exposition line>             the agent's /metrics (or --once -o
//                                     prometheus)
// Truth lines are "<what> <gpu_id> <a> <b> <cgroup> <value>"
// (kfd_sim_truth.c, plus submit/pending lines the guest derives from the
// drivers' indexes). Gauges are compared with NOW, counters with NOW - BASE;
// each family is projected on the labels the truth knows, and zero series
// may be absent on either side. Seconds are held between the simulator's two
// timings of each window (below). Prints one "DIFF <series> want <n> got
// <n>" per mismatch, a "WITHIN" line per seconds series, and a last line
// "RESULT <ok|diff> <series compared> <diffs>". Exit 0 when the input was
// read (whatever the result), 2 on a usage or input error.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace
{

// Labels each family is compared on, in this order.
const std::map<std::string, std::vector<std::string>> kKeep = {
	{ "gpuq_queues", { "container", "gpu_id", "queue_type" } },
	{ "gpuq_processes", { "container", "gpu_id" } },
	{ "gpuq_queues_by_priority", { "container", "gpu_id", "priority" } },
	{ "gpuq_queues_by_requested_priority", { "container", "gpu_id", "requested_priority" } },
	{ "gpuq_queues_cu_masked", { "container", "gpu_id", "cu_mask" } },
	{ "gpuq_queue_creates_total", { "container", "gpu_id", "queue_type" } },
	{ "gpuq_queue_destroys_total", { "container", "gpu_id", "queue_type", "reason" } },
	{ "gpuq_process_exits_total", { "container" } },
	{ "gpuq_queue_create_failures_total", { "container", "gpu_id", "error" } },
	{ "gpuq_runlist_unmaps_total", { "gpu_id", "scheduler", "filter" } },
	{ "gpuq_runlist_unmap_duration_seconds_count", { "gpu_id", "scheduler" } },
	{ "gpuq_runlist_map_duration_seconds_count", { "gpu_id", "scheduler" } },
	{ "gpuq_runlist_failures_total", { "gpu_id", "scheduler", "op", "error" } },
	{ "gpuq_runlist_operations_total", { "container", "gpu_id", "scheduler", "op", "cause" } },
	{ "gpuq_queue_preemptions_total",
	  { "container", "gpu_id", "scheduler", "cause", "caused_by" } },
	{ "gpuq_queue_preempted_seconds_total",
	  { "container", "gpu_id", "scheduler", "cause", "caused_by" } },
	{ "gpuq_runlist_oversubscribed", { "gpu_id" } },
	{ "gpuq_runlist_oversubscribed_maps_total", { "gpu_id", "reason" } },
	{ "gpuq_runlist_oversubscribed_seconds_total", { "gpu_id" } },
	{ "gpuq_runlist_entries", { "gpu_id", "kind" } },
	{ "gpuq_runlist_entry_limit", { "gpu_id", "kind" } },
	{ "gpuq_evictions_total", { "container", "gpu_id", "trigger" } },
	{ "gpuq_eviction_restores_total", { "container", "gpu_id" } },
	{ "gpuq_evicted_processes", { "container", "gpu_id" } },
	{ "gpuq_queues_evicted", { "container", "gpu_id" } },
	{ "gpuq_submissions_total", { "container", "gpu_id", "queue_type" } },
	{ "gpuq_queue_pending_packets", { "container", "gpu_id" } },
};

// Seconds: the agent's windows are timed by its programs at the unmap's and
// map's entry and return, the simulator's twice, inside the two functions
// and by their callers, and the agent's lie between the two
// (kfd_sim_victims.c, sim_oversub_end): each series must be within [lo, hi],
// the two sums of the simulator's, compared in nanoseconds (the agent's
// seconds are its integer nanoseconds / 1e9). In the RESULT line's order.
const std::vector<std::pair<std::string, std::string>> kWithin = {
	{ "gpuq_queue_preempted_seconds_total", "seconds off the GPU" },
	{ "gpuq_runlist_oversubscribed_seconds_total", "seconds oversubscribed" },
};

bool IsWithin(const std::string &family)
{
	for (const auto &w : kWithin)
		if (w.first == family)
			return true;
	return false;
}

std::string Family(const std::string &key)
{
	return key.substr(0, key.find('{'));
}

std::string ErrName(long e)
{
	switch (e) {
	case 22:
		return "EINVAL";
	case 12:
		return "ENOMEM";
	case 14:
		return "EFAULT";
	case 62:
		return "ETIME";
	case 16:
		return "EBUSY";
	case 524:
		return "ENOTSUPP";
	}
	return "E" + std::to_string(e);
}

// NAMES[i], or OTHERWISE when i is not an index of NAMES.
std::string Named(long i, const std::vector<const char *> &names, const std::string &otherwise)
{
	if (i >= 0 && i < static_cast<long>(names.size()))
		return names[i];
	return otherwise;
}

std::string Filter(long f)
{
	return Named(f - 1, { "all_queues", "dynamic_queues", "by_pasid" },
		     "filter_" + std::to_string(f));
}
std::string Trigger(long t)
{
	return Named(t, { "svm", "userptr", "ttm", "suspend", "criu_checkpoint", "criu_restore" },
		     "unknown");
}
std::string Cause(long c)
{
	return Named(c - 1, { "create", "destroy", "evict", "restore", "terminate", "update" },
		     "unknown");
}
std::string OversubReason(long r)
{
	return Named(r, { "processes", "compute_queues", "gws_queues", "xnack_conflict", "other" },
		     "reason_" + std::to_string(r));
}
std::string RunlistKind(long k)
{
	return Named(k, { "processes", "compute_queues", "gws_queues" },
		     "kind_" + std::to_string(k));
}

struct Compare {
	std::set<std::string> check; // the families asked for
	std::string only;	     // --only: one container's series
	std::map<std::string, std::string> qlabel, cg;
	std::set<std::string> gpus;
	// want: counters and gauges; lo, hi, windows: the seconds' brackets
	std::map<std::string, double> want, got, lo, hi, windows;

	std::string Container(const std::string &id) const
	{
		auto it = cg.find(id);
		if (it == cg.end())
			return "cgroup-" + id;
		return it->second == "-" ? "" : it->second;
	}
	std::string QueueType(const std::string &t) const
	{
		auto it = qlabel.find(t);
		return it != qlabel.end() ? it->second : "type_" + t;
	}
	std::string Gpu(const std::string &g) const
	{
		return gpus.count(g) ? g : "unknown";
	}

	void Add(const std::string &key, double v)
	{
		want[key] += v;
	}

	// One runlist operation series: sched hws|mes, op unmap|map, its errno.
	void Runlist(int sign, const std::string &g, const char *sched, const char *op,
		     const std::string &filter, long err, double v)
	{
		std::string gs = "gpu_id=\"" + g + "\",scheduler=\"" + std::string(sched) + "\"";
		if (std::string(op) == "unmap")
			Add("gpuq_runlist_unmaps_total{" + gs + ",filter=\"" + filter + "\"}",
			    sign * v);
		Add("gpuq_runlist_" + std::string(op) + "_duration_seconds_count{" + gs + "}",
		    sign * v);
		if (err) {
			Add("gpuq_runlist_failures_total{" + gs + ",op=\"" + op + "\",error=\"" +
				ErrName(err) + "\"}",
			    sign * v);
		}
	}

	std::string VictimLabels(const std::string &g, long a, long b, const std::string &c) const
	{
		return "{container=\"" + Container(c) + "\",gpu_id=\"" + g + "\",scheduler=\"" +
		       (b >= 2 ? "mes" : "hws") + "\",cause=\"" + Cause(a) + "\",caused_by=\"" +
		       (b % 2 ? "self" : "other") + "\"}";
	}

	// One truth series, sign +1 (NOW) or -1 (BASE).
	void Truth(int sign, const std::string &what, const std::string &g, const std::string &as,
		   long b, const std::string &c, double v)
	{
		const long a = std::strtol(as.c_str(), nullptr, 10);
		const std::string ctr = "container=\"" + Container(c) + "\",gpu_id=\"" + g;
		const bool now = sign > 0;
		if (what == "queues" && now)
			Add("gpuq_queues{" + ctr + "\",queue_type=\"" + QueueType(as) + "\"}", v);
		else if (what == "prio" && now)
			Add("gpuq_queues_by_priority{" + ctr + "\",priority=\"" +
				(a == 0	  ? "low"
				 : a == 1 ? "medium"
					  : "high") +
				"\"}",
			    v);
		else if (what == "rprio" && now)
			Add("gpuq_queues_by_requested_priority{" + ctr +
				"\",requested_priority=\"" + as + "\"}",
			    v);
		else if (what == "cumask" && now)
			Add("gpuq_queues_cu_masked{" + ctr + "\",cu_mask=\"" +
				(a == 1 ? "restricted" : "all_cus") + "\"}",
			    v);
		else if (what == "processes" && now)
			Add("gpuq_processes{" + ctr + "\"}", v);
		else if (what == "create")
			Add("gpuq_queue_creates_total{" + ctr + "\",queue_type=\"" + QueueType(as) +
				"\"}",
			    sign * v);
		else if (what == "destroy")
			Add("gpuq_queue_destroys_total{" + ctr + "\",queue_type=\"" +
				QueueType(as) + "\",reason=\"" +
				(b == 1 ? "ioctl" : "process_exit") + "\"}",
			    sign * v);
		else if (what == "exit")
			Add("gpuq_process_exits_total{container=\"" + Container(c) + "\"}",
			    sign * v);
		else if (what == "unmap")
			Runlist(sign, g, "hws", "unmap", Filter(a), b, v);
		else if (what == "map")
			Runlist(sign, g, "hws", "map", "", b, v);
		else if (what == "mes_remove")
			Runlist(sign, g, "mes", "unmap", "queue", b, v);
		else if (what == "mes_add")
			Runlist(sign, g, "mes", "map", "", b, v);
		else if (what == "rl_cause")
			Add("gpuq_runlist_operations_total{" + ctr + "\",scheduler=\"" +
				(a >= 2 ? "mes" : "hws") + "\",op=\"" + (a % 2 ? "map" : "unmap") +
				"\",cause=\"" + Cause(b) + "\"}",
			    sign * v);
		else if (what == "victim") {
			std::string vl = VictimLabels(g, a, b, c);
			Add("gpuq_queue_preemptions_total" + vl, sign * v);
			windows["gpuq_queue_preempted_seconds_total" + vl] += sign * v;
		} else if (what == "victim_ns")
			lo["gpuq_queue_preempted_seconds_total" + VictimLabels(g, a, b, c)] +=
			    sign * v;
		else if (what == "victim_ns_out")
			hi["gpuq_queue_preempted_seconds_total" + VictimLabels(g, a, b, c)] +=
			    sign * v;
		else if (what == "evict")
			Add("gpuq_evictions_total{" + ctr + "\",trigger=\"" + Trigger(a) + "\"}",
			    sign * v);
		else if (what == "restore")
			Add("gpuq_eviction_restores_total{" + ctr + "\"}", sign * v);
		else if (what == "evicted" && now)
			Add("gpuq_evicted_processes{" + ctr + "\"}", v);
		else if (what == "evicted_queues" && now)
			Add("gpuq_queues_evicted{" + ctr + "\"}", v);
		else if (what == "submit")
			Add("gpuq_submissions_total{" + ctr + "\",queue_type=\"" + QueueType(as) +
				"\"}",
			    sign * v);
		else if (what == "pending" && now)
			Add("gpuq_queue_pending_packets{" + ctr + "\"}", v);
		else if (what == "oversub")
			Add("gpuq_runlist_oversubscribed_maps_total{gpu_id=\"" + g +
				"\",reason=\"" + OversubReason(a) + "\"}",
			    sign * v);
		else if (what == "oversub_maps")
			windows["gpuq_runlist_oversubscribed_seconds_total{gpu_id=\"" + g +
				"\"}"] += sign * v;
		else if (what == "oversub_ns_in")
			lo["gpuq_runlist_oversubscribed_seconds_total{gpu_id=\"" + g + "\"}"] +=
			    sign * v;
		else if (what == "oversub_ns")
			hi["gpuq_runlist_oversubscribed_seconds_total{gpu_id=\"" + g + "\"}"] +=
			    sign * v;
		else if (what == "oversubscribed" && now)
			Add("gpuq_runlist_oversubscribed{gpu_id=\"" + g + "\"}", v);
		else if (what == "rl_entries" && now)
			Add("gpuq_runlist_entries{gpu_id=\"" + g + "\",kind=\"" + RunlistKind(a) +
				"\"}",
			    v);
		else if (what == "rl_limit" && now)
			Add("gpuq_runlist_entry_limit{gpu_id=\"" + g + "\",kind=\"" +
				RunlistKind(a) + "\"}",
			    v);
		else if (what == "create_fail")
			Add("gpuq_queue_create_failures_total{container=\"" + Container(c) +
				"\",gpu_id=\"" + Gpu(g) + "\",error=\"" + ErrName(b) + "\"}",
			    sign * v);
	}

	// One exposition line: a series of a family asked for, projected on the
	// family's labels (label values hold no comma or quote here).
	void Metric(const std::string &line)
	{
		if (line.empty() || line[0] == '#')
			return;
		const std::string name = line.substr(0, line.find_first_of("{ "));
		auto keep = kKeep.find(name);
		if (!check.count(name) || keep == kKeep.end())
			return;
		const double value = std::strtod(line.substr(line.rfind(' ') + 1).c_str(), nullptr);
		std::map<std::string, std::string> lv;
		const size_t open = line.find('{'), close = line.rfind('}');
		if (open != std::string::npos && close != std::string::npos && close > open) {
			std::stringstream labels(line.substr(open + 1, close - open - 1));
			std::string part;
			while (std::getline(labels, part, ',')) {
				const size_t eq = part.find('=');
				std::string v = part.substr(eq + 1);
				std::string unquoted;
				for (char ch : v)
					if (ch != '"')
						unquoted += ch;
				lv[part.substr(0, eq)] = unquoted;
			}
		}
		if (!only.empty() && lv["container"] != only)
			return;
		std::string key = name + "{";
		for (size_t i = 0; i < keep->second.size(); i++)
			key +=
			    (i ? "," : "") + keep->second[i] + "=\"" + lv[keep->second[i]] + "\"";
		got[key + "}"] += value;
	}

	// A truth series to compare: of a family asked for, and of `only` if set.
	bool Candidate(const std::string &key) const
	{
		return check.count(Family(key)) &&
		       (only.empty() ||
			key.find("container=\"" + only + "\"") != std::string::npos);
	}

	void Line(const std::string &line)
	{
		std::istringstream in(line);
		std::string tag;
		in >> tag;
		if (tag == "QTYPE") {
			std::string t, label;
			in >> t >> label;
			qlabel[t] = label;
		} else if (tag == "GPU") {
			std::string g;
			in >> g;
			gpus.insert(g);
		} else if (tag == "CG") {
			std::string id, label;
			in >> id >> label;
			cg[id] = label;
		} else if (tag == "BASE" || tag == "NOW") {
			std::string what, g, a, c;
			long b = 0;
			double v = 0;
			in >> what >> g >> a >> b >> c >> v;
			Truth(tag == "NOW" ? 1 : -1, what, g, a, b, c, v);
		} else if (tag == "MET") {
			Metric(line.size() > 4 ? line.substr(4) : "");
		}
	}

	// Prints the DIFF and WITHIN lines and the RESULT line.
	void Report() const
	{
		std::set<std::string> all;
		for (const auto &[key, v] : want)
			if (Candidate(key))
				all.insert(key);
		for (const auto &[key, v] : hi)
			if (Candidate(key))
				all.insert(key);
		for (const auto &[key, v] : got)
			all.insert(key);
		auto at = [](const std::map<std::string, double> &m, const std::string &key) {
			auto it = m.find(key);
			return it == m.end() ? 0.0 : it->second;
		};
		struct Sum {
			double lo = 0, hi = 0, got = 0, windows = 0;
		};
		std::map<std::string, Sum> sums;
		int compared = 0, diffs = 0;
		for (const std::string &key : all) {
			const std::string name = Family(key);
			const double g = at(got, key);
			if (IsWithin(name)) {
				const double l = at(lo, key), h = at(hi, key);
				const long long gns =
				    static_cast<long long>(std::floor(g * 1e9 + 0.5));
				if (h == 0 && gns == 0)
					continue;
				compared++;
				char range[160];
				std::snprintf(range, sizeof(range), "want [%.9f, %.9f] got %.9f",
					      l / 1e9, h / 1e9, g);
				std::printf("WITHIN %s %s windows %.0f\n", key.c_str(), range,
					    at(windows, key));
				Sum &s = sums[name];
				s.lo += l / 1e9;
				s.hi += h / 1e9;
				s.got += g;
				s.windows += at(windows, key);
				if (static_cast<double>(gns) < l || static_cast<double>(gns) > h) {
					diffs++;
					std::printf("DIFF %s %s\n", key.c_str(), range);
				}
				continue;
			}
			const double w = at(want, key);
			if (w == 0 && g == 0)
				continue;
			compared++;
			if (w != g) {
				diffs++;
				std::printf("DIFF %s want %.15g got %.15g\n", key.c_str(), w, g);
			}
		}
		std::printf("RESULT %s %d %d", diffs ? "diff" : "ok", compared, diffs);
		for (const auto &[family, what] : kWithin) {
			auto s = sums.find(family);
			if (s == sums.end())
				continue;
			std::printf(
			    " (%s: the agent's %.6f, the simulator's between %.6f and %.6f, "
			    "over %.0f windows)",
			    what.c_str(), s->second.got, s->second.lo, s->second.hi,
			    s->second.windows);
		}
		std::printf("\n");
	}
};

int Usage(const char *why)
{
	std::fprintf(stderr,
		     "sim_compare: %s\nusage: sim_compare --fams \"FAMILY ...\" "
		     "[--only CONTAINER] INPUT\n",
		     why);
	return 2;
}

} // namespace

int main(int argc, char **argv)
{
	Compare cmp;
	std::string input, fams;
	bool have_fams = false;
	for (int i = 1; i < argc; i++) {
		const std::string arg = argv[i];
		if ((arg == "--fams" || arg == "--only") && i + 1 < argc) {
			(arg == "--fams" ? fams : cmp.only) = argv[++i];
			have_fams |= arg == "--fams";
		} else if (!arg.empty() && arg[0] != '-' && input.empty()) {
			input = arg;
		} else {
			return Usage(("unexpected argument \"" + arg + "\"").c_str());
		}
	}
	if (!have_fams || input.empty())
		return Usage("--fams and INPUT are needed");
	std::istringstream families(fams);
	for (std::string f; families >> f;)
		cmp.check.insert(f);
	std::ifstream in(input);
	if (!in)
		return Usage(("cannot read " + input).c_str());
	for (std::string line; std::getline(in, line);)
		cmp.Line(line);
	cmp.Report();
	return 0;
}

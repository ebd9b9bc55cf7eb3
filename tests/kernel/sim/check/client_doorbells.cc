// sim_check client-doorbells GROUP NAME RUNTIME CONTAINER METRICS THUNK-TRUTH
//   CLIENT-OUT NODES: GROUP:doorbells, one agent's doorbell figures for
// NAME's client (rocr, hip, rocblas) in CONTAINER (12 hex digits) against
// what it rang, once. METRICS is the agent's last scrape, THUNK-TRUTH the
// null thunk's truth file, CLIENT-OUT the client's output with its truth
// dumped (its `truth` command), NODES the KFD topology's nodes folder (node
// I+1's gpu_id is GPU index I's). The guest scrapes again until it passes
// or 30 s pass.
//
// Every ring of the client went through the exported
// hsa_signal_store_screlease; per GPU the packets they published = the write
// indexes of its queues in the thunk (rocr_client's batches publish up to 32
// packets a ring; HIP 7 a graph's in batches), the rings = the client's own
// count where it has one, kernel-dispatch packets = the kernel dispatches the
// null CP consumed on them (HIP's launches, and from 6.4 on its copies' blit
// kernels, on the stream's own queue: at least the launches). ROCr's utility
// queues ring internally: no uprobe sees them.
#include "lines.h"
#include "client_runs.h"
#include "command.h"
#include "exposition.h"
#include "verdict.h"

#include <fstream>

namespace sim_check
{
namespace
{

// The GPU indexes NAME's client submits to (rocblas_client: device 0 only).
std::vector<int> ClientGpus(const std::string &name)
{
	if (name == "rocblas")
		return { 0 };
	return { 0, 1 };
}

// The sum of KEY=N over the client's lines whose first field is TAG and
// whose FIELD-th is "gpu=INDEX" (awk's `sub("KEY=", "", $FIELD)`).
double ClientCount(const std::vector<std::string> &lines, const char *tag, int index, size_t field,
		   const std::string &key)
{
	double sum = 0;
	for (const std::string &line : lines) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() < 3 || f[0] != tag || f[2] != "gpu=" + std::to_string(index))
			continue;
		if (f.size() < field)
			continue;
		std::string v = f[field - 1];
		const size_t at = v.find(key + "=");
		if (at != std::string::npos)
			v.erase(at, key.size() + 1);
		sum += AwkNumber(v);
	}
	return sum;
}

std::string GpuOfNodeIn(const std::string &nodes, int node)
{
	std::ifstream in(nodes + "/" + std::to_string(node) + "/gpu_id");
	std::string id;
	std::getline(in, id);
	return id;
}

int ClientDoorbells(const std::vector<std::string> &args)
{
	if (args.size() != 8)
		return UsageError(
		    "client-doorbells GROUP NAME RUNTIME CONTAINER METRICS THUNK-TRUTH "
		    "CLIENT-OUT NODES");
	const std::string &group = args[0], &name = args[1], &runtime = args[2],
			  &container = args[3];
	if (name != "rocr" && name != "hip" && name != "rocblas")
		return UsageError("client-doorbells: no client " + name);
	Exposition metrics;
	std::vector<ThunkQueue> queues;
	std::vector<std::string> out;
	std::string error;
	if (!ReadExposition(args[4], metrics, error) || !ReadThunkQueues(args[5], queues, error) ||
	    !ReadLines(args[6], out, error))
		return UsageError(error);
	const std::map<std::string, ClientSums> truth = SumClientQueues(queues);
	bool ok = true;
	std::string detail;
	for (int gi : ClientGpus(name)) {
		const std::string g = GpuOfNodeIn(args[7], gi + 1);
		ClientSums t;
		if (truth.count(g))
			t = truth.at(g);
		auto sum = [&](const char *family, Labels labels) {
			labels.emplace_back("container", container);
			labels.emplace_back("gpu_id", g);
			return metrics.Sum(family, labels);
		};
		const double rings = sum("gpuq_doorbells_total", {});
		const double packets = sum("gpuq_doorbell_packets_total", {});
		const double kd =
		    sum("gpuq_doorbell_packets_total", { { "packet_type", "kernel_dispatch" } });
		const double ke =
		    sum("gpuq_doorbell_packets_total",
			{ { "packet_type", "kernel_dispatch" }, { "format", "amd_ext" } });
		const double kbb = sum("gpuq_doorbell_barrier_dispatches_total", {});
		const double kb =
		    sum("gpuq_doorbell_packets_total", { { "packet_type", "barrier" } });
		const double ko =
		    sum("gpuq_doorbell_packets_total", { { "packet_type", "other" } }) +
		    sum("gpuq_doorbell_packets_total", { { "packet_type", "unreadable" } });
		// what the client says it rang (HIP counts launches, not rings),
		// and the kernels it launched (rocr_client's packets are not all
		// dispatches)
		const bool has_rings = name == "rocr", has_launches = name == "hip";
		const double client_rings =
		    has_rings ? ClientCount(out, "QUEUE", gi, 6, "rings") : 0;
		const double launches =
		    has_launches ? ClientCount(out, "STREAM", gi, 4, "launches") : 0;
		detail += " gpu " + g + ": doorbell packets " + Number(packets) +
			  ", thunk client write indexes " + Number(t.writes) + ", rings " +
			  Number(rings);
		if (has_rings)
			detail += ", client rings " + Number(client_rings);
		detail += ", by type (kernel_dispatch, of which amd_ext, of which with the barrier "
			  "bit, barrier, other) " +
			  Number(kd) + " " + Number(ke) + " " + Number(kbb) + " " + Number(kb) +
			  " " + Number(ko) + ", the null CP's " + Number(t.dispatches) + " " +
			  Number(t.ext) + " " + Number(t.barrier_dispatches) + " " +
			  Number(t.barriers) + " " + Number(t.other);
		if (has_launches)
			detail += ", launches " + Number(launches);
		detail += ";";
		if (packets != t.writes || !(t.writes > 0))
			ok = false;
		if (has_rings && client_rings != rings)
			ok = false;
		if (kd != t.dispatches || ke != t.ext || kbb != t.barrier_dispatches ||
		    kb != t.barriers || ko != t.other)
			ok = false;
		if (has_launches && !(launches <= kd))
			ok = false;
	}
	if (ok)
		Pass(group + ":doorbells", "--doorbells=uprobe on " + runtime + ":" + detail);
	else
		Fail(group + ":doorbells", detail);
	return 0;
}

const Registration
    kClientDoorbells("client-doorbells",
		     "GROUP NAME RUNTIME CONTAINER METRICS THUNK-TRUTH CLIENT-OUT NODES",
		     ClientDoorbells);

} // namespace
} // namespace sim_check

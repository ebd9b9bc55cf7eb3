// sim_check core-relocations BTF_RAW ADD_QUEUE_XLATED UNMAP_XLATED: what
// CO-RE relocated in the programs the QEMU guest's recorder loaded, against
// this kernel's amdgpu BTF (BTF_RAW: `bpftool btf dump ... format raw`):
//  core-flavor  the offset fentry_kfd_procfs_add_queue adds to queue->device
//               (the immediates between the BPF_CORE_READ(q, device) and
//               kfd__queue_gpu_id source lines of ADD_QUEUE_XLATED, its
//               `bpftool prog dump xlated`) is the `id` of kfd_node when the
//               BTF has kfd_node (6.5+), else of kfd_dev: the flavor of
//               kfd__queue_gpu_id that survived;
//  core-sched   fentry_unmap_queues_cpsch (UNMAP_XLATED) adds
//               device_queue_manager's dev and active_queue_count offsets
//               (6.1: 304/368, 6.12: 312/376, docs/kfd-probe-points.md
//               Appendix A).
#include "command.h"
#include "lines.h"
#include "verdict.h"

#include <cstdlib>
#include <sstream>

namespace sim_check
{
namespace
{

// The byte offset of FIELD in STRUCT, from a raw BTF dump; "" when absent.
std::string MemberOffset(const std::vector<std::string> &btf, const std::string &type,
			 const std::string &field)
{
	const std::string head = "STRUCT '" + type + "' ";
	bool in = false;
	for (const std::string &l : btf) {
		if (!in) {
			in = l.find(head) != std::string::npos;
			continue;
		}
		if (!l.empty() && l[0] == '[')
			break;
		std::istringstream words(l);
		std::string name, type_id, bits;
		if (words >> name >> type_id >> bits && name == "'" + field + "'" &&
		    bits.rfind("bits_offset=", 0) == 0)
			return Number(std::strtod(bits.c_str() + 12, nullptr) / 8);
	}
	return "";
}

// The immediates of LINES' instructions ("N: (op) ... imm"), of the
// instructions whose opcode is OPCODE, or of every one when it is "".
std::vector<std::string> Immediates(const std::vector<std::string> &lines,
				    const std::string &opcode)
{
	std::vector<std::string> out;
	for (const std::string &l : lines) {
		std::istringstream words(l);
		std::string index, op, last;
		if (!(words >> index >> op) || op.empty() || op[0] != '(')
			continue;
		if (!opcode.empty() && op != opcode)
			continue;
		last = op;
		for (std::string w; words >> w;)
			last = w;
		out.push_back(last);
	}
	return out;
}

bool Has(const std::vector<std::string> &v, const std::string &s)
{
	for (const std::string &x : v)
		if (x == s)
			return true;
	return false;
}

std::string Spaced(const std::vector<std::string> &v)
{
	std::string out;
	for (const std::string &x : v)
		out += x + " ";
	return out;
}

void Flavor(const std::vector<std::string> &btf, const std::vector<std::string> &add,
	    const std::string &add_path)
{
	bool node = false;
	for (const std::string &l : btf)
		node = node || l.find("STRUCT 'kfd_node' ") != std::string::npos;
	const std::string flavor = node ? "kfd_node" : "kfd_dev";
	const std::string want = MemberOffset(btf, flavor, "id");
	// the lines from the device read to the gpu_id's (to the end without it)
	std::vector<std::string> span;
	bool in = false;
	for (const std::string &l : add) {
		in = in || l.find("BPF_CORE_READ(q, device)") != std::string::npos;
		if (in)
			span.push_back(l);
		if (in && l.find("val.gpu_id = kfd__queue_gpu_id") != std::string::npos)
			break;
	}
	const std::vector<std::string> consts = Immediates(span, "(b7)");
	if (!want.empty() && Has(consts, want)) {
		Pass("core-flavor",
		     "BTF has " + flavor + ", " + flavor + ".id at +" + want +
			 "; the loaded fentry_kfd_procfs_add_queue reads "
			 "queue->device +" +
			 want + " (immediates after the device read: " + Spaced(consts) + ")");
		return;
	}
	Fail("core-flavor", "BTF has " + flavor + ", " + flavor + ".id at +" +
				(want.empty() ? "?" : want) +
				"; immediates after the device read in "
				"fentry_kfd_procfs_add_queue: " +
				(consts.empty() ? "none found" : Spaced(consts)));
	Dump("record-xlated", add_path);
}

void Sched(const std::vector<std::string> &btf, const std::vector<std::string> &unmap,
	   const std::string &unmap_path)
{
	const std::string dev = MemberOffset(btf, "device_queue_manager", "dev");
	const std::string aqc = MemberOffset(btf, "device_queue_manager", "active_queue_count");
	const std::vector<std::string> imms = Immediates(unmap, "");
	if (!dev.empty() && !aqc.empty() && Has(imms, dev) && Has(imms, aqc)) {
		Pass("core-sched", "BTF: device_queue_manager.dev +" + dev +
				       ", .active_queue_count +" + aqc +
				       "; both in the loaded fentry_unmap_queues_cpsch");
		return;
	}
	Fail("core-sched", "BTF: device_queue_manager.dev +" + (dev.empty() ? "?" : dev) +
			       ", .active_queue_count +" + (aqc.empty() ? "?" : aqc) +
			       "; immediates of fentry_unmap_queues_cpsch: " + Spaced(imms));
	Dump("record-xlated", unmap_path);
}

int CoreRelocations(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("core-relocations BTF_RAW ADD_QUEUE_XLATED UNMAP_XLATED");
	std::vector<std::string> btf, add, unmap;
	if (!ReadLines(args[0], btf) || !ReadLines(args[1], add) || !ReadLines(args[2], unmap))
		return UsageError("cannot read " + args[0] + ", " + args[1] + " or " + args[2]);
	Flavor(btf, add, args[1]);
	Sched(btf, unmap, args[2]);
	return 0;
}

const Registration kCoreRelocations("core-relocations", "BTF_RAW ADD_QUEUE_XLATED UNMAP_XLATED",
				    CoreRelocations);

} // namespace
} // namespace sim_check

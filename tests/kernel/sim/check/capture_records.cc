// sim_check capture-records CAPTURE KFDTEST_PID DECODED [--no-process REASON]:
// the QEMU guest's verdicts on `gpuq-agent record --compress none` around one
// kfdtest run (pid KFDTEST_PID), read with the capture ABI's own layouts
// (include/gpuq/abi.h). Writes every record as one line to DECODED (the
// guest's log shows it), then:
//  record:create-failed     one failed create: kfdtest's tgid and comm,
//                           gpu_id 0xbeef, compute, -EINVAL;
//  record:process-exit      one exit: kfdtest's tgid and comm, the failed
//                           create's kfd_process (so the mmu_notifier offset
//                           relocated) and cgroup (current's at the ioctl);
//  record:no-queue-records  the header of ABI version 1, no queue create or
//                           destroy record.
// REASON (--no-process, when not empty): amdkfd makes no KFD process here,
// so these are skipped, naming it.
#include "command.h"
#include "hook_list.h"
#include "verdict.h"

#include <gpuq/abi.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace sim_check
{
namespace
{

std::string Hex(unsigned long long v)
{
	char text[24];
	std::snprintf(text, sizeof(text), "%016llx", v);
	return text;
}

std::string Comm(const char *comm)
{
	return std::string(comm, strnlen(comm, GPUQ_COMM_LEN));
}

template <typename T> T At(const std::string &bytes, size_t offset)
{
	T v;
	std::memcpy(&v, bytes.data() + offset, sizeof(T));
	return v;
}

struct Decoded {
	std::string header; // "HDR <magic> <abi_version>"
	std::vector<gpuq_queue_create_failed_event> failed;
	std::vector<gpuq_process_exit_event> exits;
	std::vector<std::string> unexpected; // queue records, a bad size
};

Decoded Decode(const std::string &bytes, std::ofstream &log)
{
	Decoded d;
	if (bytes.size() < sizeof(gpuq_capture_header)) {
		d.header = "HDR short " + std::to_string(bytes.size());
		log << d.header << "\n";
		return d;
	}
	const auto h = At<gpuq_capture_header>(bytes, 0);
	d.header =
	    "HDR " + std::string(h.magic, sizeof(h.magic)) + " " + std::to_string(h.abi_version);
	log << d.header << "\n";
	for (size_t o = h.header_size; o + sizeof(gpuq_event_header) <= bytes.size();) {
		const auto e = At<gpuq_event_header>(bytes, o);
		if (e.size < sizeof(gpuq_event_header) || o + e.size > bytes.size()) {
			d.unexpected.push_back("BAD size " + std::to_string(e.size) + " at " +
					       std::to_string(o));
			log << d.unexpected.back() << "\n";
			break;
		}
		const std::string ids =
		    std::to_string(e.tgid) + " " + Hex(e.cgroup_id) + " " + Hex(e.process_key);
		if (e.type == GPUQ_EV_QUEUE_CREATE_FAILED &&
		    e.size >= sizeof(gpuq_queue_create_failed_event)) {
			const auto f = At<gpuq_queue_create_failed_event>(bytes, o);
			d.failed.push_back(f);
			log << "FAILED " << ids << " " << f.gpu_id << " " << f.queue_type << " "
			    << f.error << " " << Comm(f.comm) << "\n";
		} else if (e.type == GPUQ_EV_PROCESS_EXIT &&
			   e.size >= sizeof(gpuq_process_exit_event)) {
			const auto x = At<gpuq_process_exit_event>(bytes, o);
			d.exits.push_back(x);
			log << "EXIT " << ids << " " << Comm(x.comm) << "\n";
		} else {
			const std::string rec = "REC " + std::to_string(e.type) + " " + ids;
			if (e.type == GPUQ_EV_QUEUE_CREATE || e.type == GPUQ_EV_QUEUE_DESTROY)
				d.unexpected.push_back(rec);
			log << rec << "\n";
		}
		o += e.size;
	}
	return d;
}

int CaptureRecords(const std::vector<std::string> &argv)
{
	std::vector<std::string> args = argv;
	std::string no_process;
	TakeOption(args, "no-process", no_process);
	if (args.size() != 3)
		return UsageError(
		    "capture-records CAPTURE KFDTEST_PID DECODED [--no-process REASON]");
	std::ifstream in(args[0], std::ios::binary);
	if (!in)
		return UsageError("cannot read " + args[0]);
	const std::string bytes((std::istreambuf_iterator<char>(in)),
				std::istreambuf_iterator<char>());
	std::ofstream log(args[2]);
	if (!log)
		return UsageError("cannot write " + args[2]);
	const Decoded d = Decode(bytes, log);
	const std::string &kpid = args[1];
	if (!no_process.empty()) {
		for (const char *check :
		     { "record:create-failed", "record:process-exit", "record:no-queue-records" })
			Skip(check, no_process);
		return 0;
	}
	std::string f_cg, f_key;
	if (d.failed.size() == 1) {
		const auto &f = d.failed[0];
		f_cg = Hex(f.hdr.cgroup_id);
		f_key = Hex(f.hdr.process_key);
		if (std::to_string(f.hdr.tgid) == kpid && f.gpu_id == 0xbeef &&
		    f.queue_type == GPUQ_QUEUE_COMPUTE && f.error == -22 &&
		    Comm(f.comm) == "kfdtest")
			Pass("record:create-failed", "one record: tgid=" + kpid + " (kfdtest pid " +
							 kpid +
							 ") gpu_id=0xbeef queue_type=compute "
							 "error=-22 comm=kfdtest kfd_process=0x" +
							 f_key);
		else
			Fail("record:create-failed",
			     "want one FAILED tgid=" + kpid +
				 " gpu_id=48879 queue_type=0 error=-22 "
				 "comm=kfdtest, got: tgid=" +
				 std::to_string(f.hdr.tgid) +
				 " gpu_id=" + std::to_string(f.gpu_id) +
				 " queue_type=" + std::to_string(f.queue_type) +
				 " error=" + std::to_string(f.error) + " comm=" + Comm(f.comm));
	} else {
		Fail("record:create-failed",
		     "want one FAILED tgid=" + kpid +
			 " gpu_id=48879 queue_type=0 error=-22 comm=kfdtest, got " +
			 std::to_string(d.failed.size()) + " (" + args[2] + ")");
	}
	if (d.exits.size() == 1 && std::to_string(d.exits[0].hdr.tgid) == kpid &&
	    Comm(d.exits[0].comm) == "kfdtest" && !f_key.empty() &&
	    Hex(d.exits[0].hdr.process_key) == f_key && d.exits[0].hdr.process_key != 0 &&
	    Hex(d.exits[0].hdr.cgroup_id) == f_cg)
		Pass("record:process-exit",
		     "one record: tgid=" + kpid + " comm=kfdtest kfd_process=0x" + f_key +
			 " (= the create ioctl's, so the mmu_notifier offset relocated) cgroup=0x" +
			 f_cg + " (= current's at the ioctl)");
	else
		Fail("record:process-exit",
		     "want one EXIT tgid=" + kpid + " comm=kfdtest kfd_process=0x" + f_key +
			 " cgroup=0x" + f_cg + ", got " + std::to_string(d.exits.size()) +
			 (d.exits.empty()
			      ? std::string()
			      : ": tgid=" + std::to_string(d.exits[0].hdr.tgid) +
				    " comm=" + Comm(d.exits[0].comm) + " kfd_process=0x" +
				    Hex(d.exits[0].hdr.process_key) + " cgroup=0x" +
				    Hex(d.exits[0].hdr.cgroup_id)));
	if (d.unexpected.empty() && d.header == "HDR " GPUQ_CAPTURE_MAGIC " 1")
		Pass("record:no-queue-records", d.header + ", no queue create/destroy records");
	else
		Fail(
		    "record:no-queue-records", "header '" + d.header + "', unexpected: " + [&] {
			    std::string u;
			    for (const std::string &s : d.unexpected)
				    u += s + ";";
			    return u;
		    }());
	return 0;
}

const Registration kCaptureRecords("capture-records",
				   "CAPTURE KFDTEST_PID DECODED [--no-process REASON]",
				   CaptureRecords);

} // namespace
} // namespace sim_check

// sim_check qemu-guest KEY=VALUE...: the QEMU kernel tier's checks
// (tests/kernel/run_qemu_tier.sh boots Debian's kernel with the real
// amdgpu.ko, loaded here without a GPU: /dev/kfd and a
// CPU-only topology), with the real gpuq-agent:
//   1. `gpuq-agent check` in the fentry, kprobe and args tiers: every hook
//      this kernel has attached in that tier (check-<tier>:<probe>), the
//      fentry one as `check --verify`: every tier's programs through this
//      kernel's verifier against the real amdgpu BTF too;
//   2. `gpuq-agent record` around one kfdtest run (it opens /dev/kfd, fails
//      one CREATE_QUEUE with a bad gpu_id: EINVAL, fails one DESTROY_QUEUE,
//      exits): the records carry kfdtest's pid, comm and kfd_process, and
//      bpftool shows which kfd_node/kfd_dev flavor CO-RE kept;
//   3. the daemon in each tier around one kfdtest run: /metrics shows the
//      hooks attached as `check` said, one EINVAL failure, one process exit,
//      no queue, no drop;
//   4. amdgpu reloaded without its BTF (what amdgpu-dkms hosts run): the
//      planner chooses args-kprobe by itself, and `--btf` from a file puts
//      every hook back on its BTF body;
//   5. kprobes disarmed: the tracepoint tier.
// From 7.2 amdkfd creates no KFD process on a machine without a GPU node:
// the checks that need one (kfdtest's failing create and its exit) are then
// skipped, naming why; everything else still runs.
//
//   scope          full, or attach: the attach and verifier checks only (the
//                  compatibility table's fired-real cells)
//   probes         the lifecycle and scheduler hooks ("probe:function",
//                  "probe:a|b" where a kernel renamed it), generated from the
//                  agent's hook table; sched-probes the scheduler's alone;
//                  tp-probes the tracepoint tier's
#include "command.h"
#include "exposition.h"
#include "guest_process.h"
#include "guest_schedule.h"
#include "lines.h"
#include "scenario_keys.h"
#include "scrape.h"
#include "sim_module.h"
#include "verdict.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

const char *const kQemuGuestUsage = "scope=full|attach probes=\"P:F...\" sched-probes=\"P:F...\" "
				    "tp-probes=\"P:F...\"";
constexpr int kPort = 9464;
const std::string kAgent = "/bin/gpuq-agent";

std::string Release()
{
	struct utsname u;
	return uname(&u) == 0 ? u.release : "";
}

std::string Seconds(double seconds)
{
	char text[32];
	std::snprintf(text, sizeof(text), "%.1f", seconds);
	return text;
}

// The failing create and the exit are both counted in the exposition at
// PATH (false while it is unreadable).
bool FailureAndExitSeen(const std::string &path)
{
	Exposition metrics;
	std::string error;
	return ReadExposition(path, metrics, error) &&
	       metrics.Sum("gpuq_process_exits_total") != 0 &&
	       metrics.Sum("gpuq_queue_create_failures_total") != 0;
}

class QemuGuestRun
{
      public:
	explicit QemuGuestRun(const ScenarioKeys &keys);
	bool Load();
	void Run();

      private:
	void KfdRefuses();
	bool WithProcess(const std::string &check) const;
	void HookCheck(const std::string &name, std::vector<std::string> args) const;
	void CheckMode(const std::string &label, const std::string &mode, const std::string &tier,
		       const std::vector<std::string> &flags) const;
	void Verify() const;
	void Record() const;
	void DaemonMode(const std::string &label, const std::string &mode,
			const std::vector<std::string> &flags) const;
	void WithoutBtf() const;
	void WithoutKprobes();

	const ScenarioKeys &keys_;
	bool full_;
	std::string probes_, missing_, not_needed_;
	std::string refuses_; // why no KFD process can be created here ("": it can)
	std::string model_;   // the kernel's preemption model (debugfs sched/preempt)
};

// The hooks this Debian build lacks (nm and BTF of amdgpu.ko,
// docs/kfd-probe-points.md 1a): `check` must report them missing. The hooks
// of secondary KFD contexts, which amdkfd has from 7.2 on: `check` must
// report them not needed before.
QemuGuestRun::QemuGuestRun(const ScenarioKeys &keys)
    : keys_(keys), full_(keys.Get("scope") != "attach"), probes_(keys.Get("probes"))
{
	const std::string k = KernelLabel();
	if (k == "6.1")
		missing_ = "mes_remove_v12 mes_remove_v12_1";
	else if (k == "6.12" || k == "6.16" || k == "6.17" || k == "6.18")
		missing_ = "mes_remove_v12_1";
	if (StartsWith(k, "6.") || k == "7.0" || k == "7.1")
		not_needed_ = "context_exit";
	// on a kernel that preempts programs none is skipped then (no-drops
	// holds every drop reason, prog_skipped too, to 0)
	model_ = PreemptModel();
	RunFifoWherePreempted(model_);
}

// From 7.2, amdkfd refuses to create a KFD process on a machine without a
// GPU node: open("/dev/kfd") fails with EINVAL and dmesg says "no gpu node!
// Cannot create KFD process".
void QemuGuestRun::KfdRefuses()
{
	int gpus = 0;
	const std::string nodes = "/sys/class/kfd/kfd/topology/nodes";
	for (const std::string &node : Entries(nodes)) {
		const std::string id = ReadText(nodes + "/" + node + "/gpu_id");
		gpus += !id.empty() && id != "0\n" && id != "0";
	}
	const int fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	const int error = errno;
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (error != EINVAL || gpus != 0)
		return;
	// amdkfd's warning has no newline: a later record makes it readable
	WriteText("/dev/kmsg", "gpuq: /dev/kfd open tried\n");
	RunFor({ "dmesg" }, "/tmp/kfd-dmesg.txt", "/dev/null", 30);
	std::string said = "nothing";
	std::vector<std::string> lines;
	ReadLines("/tmp/kfd-dmesg.txt", lines);
	for (const std::string &line : lines) {
		if (line.find("no gpu node") == std::string::npos)
			continue;
		const size_t stamp = line.find("] ");
		said = StartsWith(line, "[") && stamp != std::string::npos ? line.substr(stamp + 2)
									   : line;
		break;
	}
	refuses_ = "amdkfd of " + std::string(KernelLabel()) +
		   " creates no KFD process on a machine without a GPU node (open /dev/kfd: "
		   "EINVAL with " +
		   std::to_string(gpus) + " GPU nodes; dmesg: " + said + ")";
	std::printf("GPUQ-INFO %s %s\n", KernelLabel(), refuses_.c_str());
	std::fflush(stdout);
}

// False, and CHECK skipped naming why, where no KFD process can be made.
bool QemuGuestRun::WithProcess(const std::string &check) const
{
	if (refuses_.empty())
		return true;
	Skip(check, refuses_);
	return false;
}

// The check NAME with ARGS against this kernel's hooks.
void QemuGuestRun::HookCheck(const std::string &name, std::vector<std::string> args) const
{
	args.insert(args.end(),
		    { "--probes", probes_, "--missing", missing_, "--not-needed", not_needed_ });
	sim_check::Run(name, args);
}

// `check` with FLAGS: every present hook attached in MODE and TIER
// (check-LABEL:<probe>, :exit-code).
void QemuGuestRun::CheckMode(const std::string &label, const std::string &mode,
			     const std::string &tier, const std::vector<std::string> &flags) const
{
	const std::string g = "check-" + label;
	const std::string out = "/tmp/" + g + ".out", err = "/tmp/" + g + ".err";
	std::vector<std::string> argv = { kAgent, "check" };
	argv.insert(argv.end(), flags.begin(), flags.end());
	const double t0 = Uptime();
	const int rc = RunFor(argv, out, err, 240);
	std::printf("GPUQ-INFO %s %s took %ss rc=%d\n", KernelLabel(), g.c_str(),
		    Seconds(Uptime() - t0).c_str(), rc);
	std::fflush(stdout);
	Dump(g, out);
	Dump(g, err);
	HookCheck("check-hooks", { g, mode, tier, std::to_string(rc), out, err });
}

// The fentry tier's `check --verify` (CheckMode's "fentry" run, /tmp/
// check-fentry.*): every fentry program of a function this kernel has, every
// kprobe and args-kprobe program and the tracepoint tier's, through this
// kernel's verifier against the real amdgpu BTF (a function the kernel
// lacks is named, not refused). One result per tier (the compatibility
// table's "verifier" column). One agent run for both: a fentry-tier `check`
// takes about 20 s under TCG (libbpf's search for the attach targets, then
// the trampolines' detach).
void QemuGuestRun::Verify() const
{
	HookCheck("check-verify", { "/tmp/check-fentry.out", "/tmp/check-fentry.err", Release() });
}

// `record` (fentry mode) around one kfdtest: the records field by field,
// and which kfd_node/kfd_dev flavor CO-RE chose.
void QemuGuestRun::Record() const
{
	const std::string capture = "/tmp/run.gpuqcap";
	SpawnOptions options;
	options.output = "/tmp/record.out";
	options.errors = "/tmp/record.err";
	// Raw, not zstd: capture-records reads the abi.h layouts.
	const pid_t pid = Spawn({ kAgent, "record", "--compress", "none", "-o", capture }, options);
	// Attached = 5 BPF links for the lifecycle hooks (create_ioctl has entry
	// and exit programs), the exit read's one, context_exit's where amdkfd
	// has secondary contexts, plus entry and exit of every scheduler hook
	// present, plus the cgroup watcher's two raw tracepoints (cgroup_mkdir
	// and cgroup_rmdir, attached after the kfd hooks in every live mode).
	int want = 8;
	for (const std::string &pair : keys_.Words("sched-probes"))
		if ((" " + missing_ + " ").find(" " + pair.substr(0, pair.find(':')) + " ") ==
		    std::string::npos)
			want += 2;
	if (not_needed_.find("context_exit") == std::string::npos)
		++want; // 7.2+: kfd_release
	int links = 0;
	const double t0 = Uptime();
	const std::string fdinfo = "/proc/" + std::to_string(pid) + "/fdinfo";
	while (Uptime() - t0 < 180) {
		links = 0;
		for (const std::string &fd : Entries(fdinfo)) {
			std::vector<std::string> lines;
			ReadLines(fdinfo + "/" + fd, lines);
			links += !StartingWith(lines, "link_type").empty();
		}
		if (links >= want || !Running(pid))
			break;
		Nap(0.5);
	}
	RunFor({ "/bin/kfdtest" }, "/tmp/record.kfdtest", "", 120);
	std::string kfdtest_pid;
	std::vector<std::string> said;
	ReadLines("/tmp/record.kfdtest", said);
	for (const std::string &line : StartingWith(said, "KFDTEST pid")) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() > 2)
			kfdtest_pid = f[2];
	}
	Nap(2);

	// what CO-RE relocated in the loaded programs (core-flavor, core-sched)
	RunFor({ "bpftool", "btf", "dump", "file", "/sys/kernel/btf/amdgpu", "format", "raw" },
	       "/tmp/amdgpu.btf", "/dev/null", 60);
	RunFor({ "bpftool", "prog", "dump", "xlated", "name", "fentry_kfd_procfs_add_queue" },
	       "/tmp/record.xlated", "", 60);
	RunFor({ "bpftool", "prog", "dump", "xlated", "name", "fentry_unmap_queues_cpsch" },
	       "/tmp/record.xlated-unmap", "", 60);
	sim_check::Run("core-relocations",
		       { "/tmp/amdgpu.btf", "/tmp/record.xlated", "/tmp/record.xlated-unmap" });

	const std::string stopped = Terminate(pid);
	for (const char *log : { "/tmp/record.out", "/tmp/record.err", "/tmp/record.kfdtest" })
		Dump("record", log);
	const std::string size = std::to_string(ReadText(capture).size());
	const std::string err = OneLine("/tmp/record.err");
	if (links == want && stopped == "exit 0" && size != "0")
		Pass("record:runs", "attached (" + std::to_string(links) + " BPF links), " +
					stopped + " after SIGTERM, " + err);
	else
		Fail("record:runs",
		     "links=" + std::to_string(links) + " (want " + std::to_string(want) + "), " +
			 stopped + " after SIGTERM, capture " + size + " bytes; stderr: " + err);
	sim_check::Run("capture-records",
		       { capture, kfdtest_pid, "/tmp/record.decoded", "--no-process", refuses_ });
	Dump("record-decoded", "/tmp/record.decoded");
}

// The daemon with FLAGS around one kfdtest (daemon-LABEL:<check>).
void QemuGuestRun::DaemonMode(const std::string &label, const std::string &mode,
			      const std::vector<std::string> &flags) const
{
	if (!full_)
		return;
	const std::string g = "daemon-" + label;
	const std::string metrics = "/tmp/" + g + ".metrics";
	const std::string out = "/tmp/" + g + ".out", err = "/tmp/" + g + ".err";
	unlink(metrics.c_str());
	std::vector<std::string> argv = { kAgent, "--web.listen-address",
					  "127.0.0.1:" + std::to_string(kPort) };
	argv.insert(argv.end(), flags.begin(), flags.end());
	SpawnOptions options;
	options.output = out;
	options.errors = err;
	const pid_t pid = Spawn(argv, options);
	const double t0 = Uptime();
	bool served = false;
	while (Uptime() - t0 < 180 && !served) {
		served = Scrape(kPort, metrics);
		if (!served && !Running(pid))
			break;
		if (!served)
			Nap(0.2);
	}
	if (!served) {
		Fail(g + ":serves", std::string("no /metrics (agent alive: ") +
					(Running(pid) ? "yes" : "no") +
					"); stderr: " + OneLine(err));
		Terminate(pid);
		Dump(g, out);
		Dump(g, err);
		return;
	}
	Pass(g + ":serves", "/metrics answered after " + Seconds(Uptime() - t0) + "s");

	const std::string kfdtest = "/tmp/" + g + ".kfdtest";
	const int rc = RunFor({ "/bin/kfdtest" }, kfdtest, "", 120);
	Dump(g, kfdtest);
	if (!WithProcess(g + ":kfdtest")) {
	} else if (rc == 0) {
		std::vector<std::string> lines, calls;
		ReadLines(kfdtest, lines);
		for (const std::string &line : lines)
			if (line.find("create_queue") != std::string::npos ||
			    line.find("destroy_queue") != std::string::npos ||
			    line.find("get_version") != std::string::npos)
				calls.push_back(line + ";");
		Pass(g + ":kfdtest", Join(calls, ""));
	} else {
		std::vector<std::string> lines;
		ReadLines(kfdtest, lines);
		Fail(g + ":kfdtest",
		     "kfdtest exit " + std::to_string(rc) + ": " + Join(lines, ";"));
	}

	// Events go through the ring buffer: wait until both the failure and
	// the exit are in, then once more so a late duplicate would show.
	for (int i = refuses_.empty() ? 0 : 95; i < 100; ++i) {
		Scrape(kPort, metrics);
		if (FailureAndExitSeen(metrics))
			break;
		Nap(0.2);
	}
	Nap(1);
	Scrape(kPort, metrics);
	Dump(g + "-metrics", metrics);
	HookCheck("daemon-metrics", { g, mode, "/tmp/check-" + label + ".out", metrics, Release(),
				      "--no-process", refuses_ });
	const std::string stopped = Terminate(pid);
	if (stopped == "hung")
		Fail(g + ":stops", "still running 10s after SIGTERM (killed)");
	else
		Verdict(stopped == "exit 0", g + ":stops", stopped + " after SIGTERM");
	Dump(g, out);
	Dump(g, err);
}

// The host put a copy of amdgpu.ko with its .BTF section removed at
// /nobtf/amdgpu.ko: reloaded, /sys/kernel/btf/amdgpu is absent, and the
// planner must choose args-kprobe for every hook on its own. --btf: the
// types the module lacks, from a file (the section the host removed, as
// split BTF over vmlinux): every hook back on its BTF body, on kprobes
// (libbpf's btf_custom_path serves CO-RE, not trampolines).
void QemuGuestRun::WithoutBtf() const
{
	const std::string log = "/tmp/nobtf.txt";
	const bool loaded = Reload("/nobtf/amdgpu.ko", {}, log);
	const bool kfd = KfdPresent();
	const bool btf = HasModuleBtf();
	if (!loaded || !kfd || btf || !Exists(std::string(kTopology))) {
		Fail("nobtf-reload", std::string("rmmod and insmod ") +
					 (loaded ? "worked" : "failed") + ", btf " +
					 (btf ? "present" : "absent") + " kfd " +
					 (kfd ? "present" : "absent") + ": " + OneLine(log));
		return;
	}
	Pass("nobtf-reload",
	     "amdgpu reloaded without BTF: /sys/kernel/btf/amdgpu absent, /dev/kfd present");
	CheckMode("nobtf", "kprobe", "args-kprobe", {});
	DaemonMode("nobtf", "kprobe", {});
	CheckMode("btf", "kprobe", "btf-kprobe", { "--btf", "/nobtf/amdgpu.btf" });
	DaemonMode("btf", "kprobe", { "--btf", "/nobtf/amdgpu.btf" });
}

// A kernel that refuses kprobes: all disarmed. The feature probe sees a
// kprobe that attaches but never fires, so nothing carries creates but the
// raw syscall tracepoints; they must attach, and the failing create and the
// exit must be seen through them.
void QemuGuestRun::WithoutKprobes()
{
	const std::string enabled = "/sys/kernel/debug/kprobes/enabled";
	if (!WriteText(enabled, "0")) {
		Fail("kprobes-off", "cannot disarm kprobes (" + enabled + ")");
		return;
	}
	Pass("kprobes-off", "kprobes disarmed (" + enabled + " = 0)");
	const std::string probes = probes_, missing = missing_;
	probes_ = keys_.Get("tp-probes");
	missing_.clear();
	CheckMode("tp", "tracepoint", "tracepoint", {});
	DaemonMode("tp", "tracepoint", {});
	probes_ = probes;
	missing_ = missing;
	WriteText(enabled, "1");
}

// amdgpu without a GPU: /dev/kfd and a CPU-only topology.
bool QemuGuestRun::Load()
{
	const int rc = RunFor({ "modprobe", "amdgpu" }, "/tmp/modprobe.txt", "", 240);
	Ktime("modprobe-done");
	std::string nodes;
	for (const std::string &node : Entries(kTopology))
		nodes += node + " ";
	const bool kfd = KfdPresent();
	const bool btf = HasModuleBtf();
	if (rc == 0 && kfd && !nodes.empty() && btf) {
		Pass("modprobe-amdgpu", "rc=0 /dev/kfd present, topology nodes: " + nodes +
					    "/sys/kernel/btf/amdgpu present");
		return true;
	}
	Fail("modprobe-amdgpu", "rc=" + std::to_string(rc) + " kfd " +
				    (kfd ? "present" : "absent") + " nodes '" + nodes + "' btf " +
				    (btf ? "present" : "absent"));
	Dump("modprobe", "/tmp/modprobe.txt");
	return false;
}

void QemuGuestRun::Run()
{
	KfdRefuses();
	RunFor({ kAgent, "--version" }, "/tmp/agent-version.txt", "", 60) == 0
	    ? Pass("agent-version", OneLine("/tmp/agent-version.txt"))
	    : Fail("agent-version", OneLine("/tmp/agent-version.txt"));
	// the expected-missing set is what this kernel really lacks
	HookCheck("hook-presence", { "/proc/kallsyms" });

	Ktime("check-start");
	CheckMode("fentry", "fentry", "btf-fentry", { "--verify" });
	CheckMode("kprobe", "kprobe", "btf-kprobe", { "--no-fentry" });
	CheckMode("args", "kprobe", "args-kprobe", { "--probe-tier=args" });
	sim_check::Run("check-preemption", { "/tmp/check-fentry.out", model_ });
	Ktime("check-done");
	Verify();

	Ktime("record-start");
	if (full_)
		Record();
	Ktime("daemon-start");
	DaemonMode("fentry", "fentry", {});
	DaemonMode("kprobe", "kprobe", { "--no-fentry" });
	// The BTF-free tier, forced on this kernel (its amdgpu has BTF): every
	// hook attaches with its args-only body; the failing create and the
	// exit are seen.
	DaemonMode("args", "kprobe", { "--probe-tier=args" });

	Ktime("nobtf-start");
	WithoutBtf();
	Ktime("nobtf-done");
	Ktime("tp-start");
	WithoutKprobes();
	Ktime("tp-done");
}

int QemuGuest(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0, { "scope", "probes", "sched-probes", "tp-probes" }, error))
		return UsageError("qemu-guest: " + error + "; " + kQemuGuestUsage);
	if ((keys.Get("scope") != "full" && keys.Get("scope") != "attach") ||
	    keys.Words("probes").empty() || keys.Words("tp-probes").empty())
		return UsageError(std::string("qemu-guest ") + kQemuGuestUsage);
	std::signal(SIGPIPE, SIG_IGN);
	QemuGuestRun guest(keys);
	if (!guest.Load())
		return 1;
	guest.Run();
	return 0;
}

const Registration kQemuGuest("qemu-guest", kQemuGuestUsage, QemuGuest);

} // namespace
} // namespace sim_check

// SPDX-License-Identifier: GPL-2.0
/*
 * Host-test probe: emits a known gpuq_queue_create_event through the
 * production emission path (bpf/events.bpf.h) each time the target process
 * calls getppid(2). A BTF-typed raw syscall tracepoint (no tracefs needed)
 * stands in for the KFD hooks, which
 * this host cannot attach; it lets the tests check the real ring buffer,
 * BpfEventSource's decoding and the drop accounting on a live kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include <gpuq/abi.h>
#include "events.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Emit for this process, or, when the map has entries, for these cgroups. */
const volatile __u32 target_tgid = 0;
const volatile bool filter_cgroups = false;
__u32 calls = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u64);
	__type(value, __u8);
} target_cgroups SEC(".maps");

#define GPUQ_NR_GETPPID 110 /* x86_64 */

SEC("tp_btf/sys_enter")
int BPF_PROG(emit_test_event, struct pt_regs *regs, long id)
{
	struct gpuq_queue_create_event *e;
	__u32 seq;

	__u64 cgroup_id = bpf_get_current_cgroup_id();

	if (id != GPUQ_NR_GETPPID)
		return 0;
	if (filter_cgroups ? !bpf_map_lookup_elem(&target_cgroups, &cgroup_id)
			   : current_tgid() != target_tgid)
		return 0;
	seq = calls++; /* the test triggers from one thread */
	e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_CREATE);
	if (!e)
		return 0;
	e->hdr.tgid = current_tgid();
	e->hdr.cgroup_id = cgroup_id;
	/* a kernel-looking key per process, as kfd_process pointers are */
	e->hdr.process_key = 0xffff888100000000ull | current_tgid();
	e->gpu_id = 0x1234;
	e->queue_id = seq;
	e->queue_type = GPUQ_QUEUE_SDMA;
	e->ring_size = 4096;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

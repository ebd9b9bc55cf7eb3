// SPDX-License-Identifier: GPL-2.0
/*
 * Host-test probe for the runlist and eviction records: drives the
 * production code of bpf/runlist_events.bpf.h and bpf/eviction_events.bpf.h
 * (op slot, begin at entry, record at return, transition filter, trigger)
 * and of bpf/rocr_queue.bpf.h (amd_queue_t validation in the creator's
 * memory) with the values a KFD hook would have read, each time the target process
 * calls getppid(2). What the amdkfd reads themselves relocate to is the
 * verifier tests' and the QEMU tier's job.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include <gpuq/abi.h>
#include "attribution.bpf.h"
#include "eviction_events.bpf.h"
#include "events.bpf.h"
#include "rocr_queue.bpf.h"
#include "runlist_events.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 target_tgid = 0;

enum sched_probe_action {
	ACTION_RUNLIST = 1,  /* [op slot] + one runlist operation */
	ACTION_END_ONLY = 2, /* a return whose entry was never seen */
	ACTION_EVICTION = 3, /* [trigger] + evict/restore running one unmap */
	ACTION_CREATE = 4,   /* a create record with the ROCr layout learned */
};

/* Set by the test before each getppid(2). */
__u32 action = 0;
__u32 with_slot = 0;
__u32 slot_cause = 0;
__u64 owner_key = 0; /* struct gpuq_owner, as scalars for the skeleton */
__u64 owner_cgroup = 0;
__u32 owner_tgid = 0;
__u32 gpu_id = 0;
__u32 op = 0;
__u32 filter = 0;
__u32 active_queues = 0;
__u32 queue_id = 0;
int ret = 0;
/* ACTION_RUNLIST with with_state: what an HWS map's exit read (runlist_state) */
__u32 with_state = 0;
__u32 st_flags = 0;
__u32 st_processes = 0;
__u32 st_compute_queues = 0;
__u32 st_gws_queues = 0;
__u32 st_process_limit = 0;
__u32 st_compute_queue_limit = 0;
/* ACTION_EVICTION */
__u32 kind = 0;
__u32 evicted_before = 0;
__u32 evicted_after = 0;
__u32 queues = 0;
__u32 with_trigger = 0;
__u64 trigger_process = 0;
__u32 trigger = 0;
/* ACTION_CREATE: the queue as KFD saw it; amd_queue_t is in our memory */
__u64 ring_address = 0;
__u64 ring_size = 0;
__u64 write_ptr = 0;

#define GPUQ_NR_GETPPID 110 /* x86_64 */

static __always_inline void get_owner(struct gpuq_owner *o)
{
	o->process_key = owner_key;
	o->cgroup_id = owner_cgroup;
	o->tgid = owner_tgid;
}

static __always_inline void one_runlist_op(__u32 the_op)
{
	struct runlist_call c = {};

	from_op_slot(&c);
	c.gpu_id = gpu_id;
	c.filter = filter;
	c.active_queues = active_queues;
	c.queue_id = queue_id;
	runlist_begin(the_op, &c);
	if (with_state) {
		struct runlist_state st = {
			.flags = st_flags,
			.processes = st_processes,
			.compute_queues = st_compute_queues,
			.gws_queues = st_gws_queues,
			.process_limit = st_process_limit,
			.compute_queue_limit = st_compute_queue_limit,
		};

		runlist_end_with(the_op, ret, &st);
		return;
	}
	runlist_end(the_op, ret);
}

static __always_inline void eviction(void)
{
	__u32 tid = current_tid();
	struct evict_call c = {};
	struct evict_call *in_flight;

	if (with_trigger)
		eviction_trigger_begin(trigger_process, trigger);
	get_owner(&c.owner);
	c.gpu_id = gpu_id;
	c.kind = kind;
	c.evicted_before = evicted_before;
	eviction_begin(&c);
	one_runlist_op(GPUQ_RUNLIST_UNMAP); /* attributed through the op slot */
	in_flight = bpf_map_lookup_elem(&evict_calls, &tid);
	if (in_flight) {
		eviction_emit(in_flight, evicted_after, queues, ret);
		bpf_map_delete_elem(&evict_calls, &tid);
	}
	op_exit(ret);
	if (with_trigger)
		eviction_trigger_end(0);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(drive_sched_events, struct pt_regs *regs, long id)
{
	struct gpuq_owner owner = {};

	if (id != GPUQ_NR_GETPPID || current_tgid() != target_tgid)
		return 0;
	get_owner(&owner);
	switch (action) {
	case ACTION_RUNLIST:
		if (with_slot)
			op_set(slot_cause, gpu_id, 0, &owner);
		one_runlist_op(op);
		if (with_slot)
			op_exit(0);
		break;
	case ACTION_END_ONLY:
		runlist_end(op, ret);
		break;
	case ACTION_EVICTION:
		eviction();
		break;
	case ACTION_CREATE: {
		struct gpuq_queue_create_event *e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_CREATE);

		if (!e)
			break;
		e->ring_address = ring_address;
		e->ring_size = ring_size;
		e->write_ptr = write_ptr;
		rocr_queue_learn(e); /* current is the "creator": user reads work */
		bpf_ringbuf_submit(e, 0);
		break;
	}
	}
	return 0;
}

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GPUQ_EV_RUNLIST records: a runlist/MES operation is begun at its entry
 * (cause and owner from the thread's op slot) and written at its return.
 * No amdgpu types here, so the host tests drive this exact code
 * (tests/bpf/progs/sched_probe.bpf.c).
 */
#ifndef GPUQ_RUNLIST_EVENTS_BPF_H
#define GPUQ_RUNLIST_EVENTS_BPF_H

#include "attribution.bpf.h"

struct runlist_key {
	__u32 tid;
	__u32 op; /* enum gpuq_runlist_op: map and unmap of one thread never nest */
};

/* A runlist operation from entry to return. */
struct runlist_call {
	__u64 start_ns;
	struct gpuq_owner owner;
	__u32 gpu_id;
	__u32 cause;
	__u32 filter;
	__u32 queue_id;
	__u32 active_queues;
	__u32 pad;
	__u64 dqm; /* HWS: the device_queue_manager, for the map's exit */
};

/* @brief runlist operations in flight, by (thread, op) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct runlist_key);
	__type(value, struct runlist_call);
} runlist_calls SEC(".maps");

/* Copies the enclosing dqm operation's cause and owner; false if none. */
static __always_inline bool from_op_slot(struct runlist_call *c)
{
	__u32 tid = current_tid();
	struct op_slot *s = bpf_map_lookup_elem(&op_slots, &tid);

	if (!s)
		return false;
	c->owner = s->owner;
	c->cause = s->cause;
	return true;
}

static __always_inline void runlist_begin(__u32 op, struct runlist_call *c)
{
	struct runlist_key k = { .tid = current_tid(), .op = op };

	c->start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&runlist_calls, &k, c, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

/* The thread's operation `op` in flight, or NULL. */
static __always_inline struct runlist_call *runlist_call_of(__u32 op)
{
	struct runlist_key k = { .tid = current_tid(), .op = op };

	return bpf_map_lookup_elem(&runlist_calls, &k);
}

/* What an HWS map's exit reads of the runlist it left (GPUQ_EV_RUNLIST). */
struct runlist_state {
	__u32 flags; /* GPUQ_RUNLIST_F_* */
	__u32 processes;
	__u32 compute_queues;
	__u32 gws_queues;
	__u32 process_limit;
	__u32 compute_queue_limit;
};

/*
 * Writes the record of the thread's operation `op`, with `st` (NULL: none)
 * what only the operation's exit could read.
 */
static __always_inline int runlist_end_with(__u32 op, int ret, const struct runlist_state *st)
{
	struct runlist_key k = { .tid = current_tid(), .op = op };
	struct gpuq_runlist_event *e;
	struct runlist_call *c;

	c = bpf_map_lookup_elem(&runlist_calls, &k);
	if (!c)
		return 0;
	e = reserve_event(sizeof(*e), GPUQ_EV_RUNLIST);
	if (e) {
		e->hdr.tgid = c->owner.tgid;
		e->hdr.cgroup_id = c->owner.cgroup_id;
		e->hdr.process_key = c->owner.process_key;
		e->gpu_id = c->gpu_id;
		e->op = op;
		e->cause = c->cause;
		e->filter = c->filter;
		e->ret = ret;
		e->queue_id = c->queue_id;
		e->duration_ns = e->hdr.ts_ns - c->start_ns;
		e->active_queues = c->active_queues;
		if (st) {
			e->flags = st->flags;
			e->processes = st->processes;
			e->compute_queues = st->compute_queues;
			e->gws_queues = st->gws_queues;
			e->process_limit = st->process_limit;
			e->compute_queue_limit = st->compute_queue_limit;
		}
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&runlist_calls, &k);
	return 0;
}

static __always_inline int runlist_end(__u32 op, int ret)
{
	return runlist_end_with(op, ret, NULL);
}

#endif /* GPUQ_RUNLIST_EVENTS_BPF_H */

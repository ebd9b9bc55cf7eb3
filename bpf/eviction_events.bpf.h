/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GPUQ_EV_EVICTION records: an evict/restore call begun at entry (with the
 * trigger of an enclosing kfd_process_evict_queues) and written at return
 * only if qpd->evicted made the real transition. No amdgpu types here, so the
 * host tests drive this exact code (tests/bpf/progs/sched_probe.bpf.c).
 */
#ifndef GPUQ_EVICTION_EVENTS_BPF_H
#define GPUQ_EVICTION_EVENTS_BPF_H

#include "attribution.bpf.h"

/* An evict/restore call from entry to return. */
struct evict_call {
	__u64 start_ns;
	__u64 qpd; /* struct qcm_process_device *: re-read at return */
	struct gpuq_owner owner;
	__u32 gpu_id;
	__u32 kind; /* enum gpuq_eviction_kind */
	__u32 evicted_before;
	__u32 trigger;
};

struct evict_trigger {
	__u64 process_key;
	__u32 trigger;
	__u32 pad;
};

/* @brief evict/restore calls in flight, by thread id (they never nest) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct evict_call);
} evict_calls SEC(".maps");

/* @brief kfd_process_evict_queues() in progress, by thread id */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct evict_trigger);
} evict_triggers SEC(".maps");

/*
 * Starts c (owner, gpu_id, kind, evicted_before and qpd filled by the
 * caller): sets the op slot and takes the trigger of this thread's
 * kfd_process_evict_queues if it is for the same process.
 */
static __always_inline void eviction_begin(struct evict_call *c)
{
	__u32 tid = current_tid();
	struct evict_trigger *t;

	c->start_ns = bpf_ktime_get_ns();
	op_set(c->kind == GPUQ_EVICTION_EVICT ? GPUQ_CAUSE_EVICT : GPUQ_CAUSE_RESTORE, c->gpu_id, 0,
	       &c->owner);
	c->trigger = GPUQ_TRIGGER_UNKNOWN;
	t = bpf_map_lookup_elem(&evict_triggers, &tid);
	if (c->kind == GPUQ_EVICTION_EVICT && t && t->process_key == c->owner.process_key)
		c->trigger = t->trigger;
	if (bpf_map_update_elem(&evict_calls, &tid, c, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

/* Writes c's record if qpd->evicted (now `after`) made c's transition. */
static __always_inline void eviction_emit(const struct evict_call *c, __u32 after, __u32 queues,
					  int ret)
{
	struct gpuq_eviction_event *e;
	bool transition;

	if (c->kind == GPUQ_EVICTION_EVICT)
		transition = c->evicted_before == 0 && after != 0;
	else
		transition = c->evicted_before == 1 && after == 0;
	if (!transition)
		return;
	e = reserve_event(sizeof(*e), GPUQ_EV_EVICTION);
	if (!e)
		return;
	e->hdr.tgid = c->owner.tgid;
	e->hdr.cgroup_id = c->owner.cgroup_id;
	e->hdr.process_key = c->owner.process_key;
	e->gpu_id = c->gpu_id;
	e->kind = c->kind;
	e->trigger = c->trigger;
	e->ret = ret;
	e->duration_ns = e->hdr.ts_ns - c->start_ns;
	e->queues = queues;
	bpf_ringbuf_submit(e, 0);
}

/*
 * Set by the agent: kfd_process_evict_queues(p, trigger) takes the trigger
 * ("drm/amdkfd: Add user queue eviction restore SMI event", v6.0); before,
 * it was kfd_process_evict_queues(p) and the second register is garbage.
 */
const volatile bool evict_trigger_arg = true;

static __always_inline int eviction_trigger_begin(__u64 process_key, __u32 trigger)
{
	struct evict_trigger t = { .process_key = process_key, .trigger = trigger };
	__u32 tid = current_tid();

	if (!evict_trigger_arg || trigger >= GPUQ_TRIGGER__KNOWN)
		t.trigger = GPUQ_TRIGGER_UNKNOWN;
	bpf_map_update_elem(&evict_triggers, &tid, &t, BPF_ANY);
	return 0;
}

static __always_inline int eviction_trigger_end(int ret)
{
	__u32 tid = current_tid();

	bpf_map_delete_elem(&evict_triggers, &tid);
	return 0;
}

#endif /* GPUQ_EVICTION_EVENTS_BPF_H */

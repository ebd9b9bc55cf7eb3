/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Eviction and restore of one process's queues on one GPU (GPUQ_EV_EVICTION).
 * Included by gpuq.bpf.c after runlist.bpf.h.
 *
 *   evict_cpsch / evict_nocpsch      evict_process_queues_{cpsch,nocpsch}(dqm, qpd)
 *   restore_cpsch / restore_nocpsch  restore_process_queues_{cpsch,nocpsch}(dqm, qpd)
 *       Both bump/drop qpd->evicted; only its 0 -> 1 and 1 -> 0 transitions
 *       move queues, so only those are written. They also set the op slot,
 *       so the runlist/MES operations they run are attributed to them.
 *   evict_trigger    kfd_process_evict_queues(p, trigger): why (SVM, userptr,
 *                    TTM, suspend, CRIU). VM faults evict through
 *                    kfd_dqm_evict_pasid instead: trigger unknown.
 */
#ifndef GPUQ_EVICTION_BPF_H
#define GPUQ_EVICTION_BPF_H

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

static __always_inline int handle_evict_entry(__u32 kind, struct device_queue_manager *dqm,
					      struct qcm_process_device *qpd)
{
	struct evict_call c = {};
	struct evict_trigger *t;
	__u32 tid = current_tid();

	if (!kfd__sched_types_present())
		return 0;
	c.start_ns = bpf_ktime_get_ns();
	c.qpd = (__u64)qpd;
	owner_of(BPF_CORE_READ(qpd, pqm, process), &c.owner);
	c.gpu_id = kfd__dqm_gpu_id(dqm);
	op_set(kind == GPUQ_EVICTION_EVICT ? GPUQ_CAUSE_EVICT : GPUQ_CAUSE_RESTORE, c.gpu_id, 0,
	       &c.owner);
	c.kind = kind;
	c.evicted_before = BPF_CORE_READ(qpd, evicted);
	c.trigger = GPUQ_TRIGGER_UNKNOWN;
	t = bpf_map_lookup_elem(&evict_triggers, &tid);
	if (kind == GPUQ_EVICTION_EVICT && t && t->process_key == c.owner.process_key)
		c.trigger = t->trigger;
	if (bpf_map_update_elem(&evict_calls, &tid, &c, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
	return 0;
}

static __always_inline int handle_evict_exit(int ret)
{
	struct gpuq_eviction_event *e;
	struct qcm_process_device *qpd;
	__u32 tid = current_tid();
	struct evict_call *c;
	__u32 after;
	bool transition;

	op_exit(ret);
	if (!kfd__sched_types_present())
		return 0;
	c = bpf_map_lookup_elem(&evict_calls, &tid);
	if (!c)
		return 0;
	qpd = (struct qcm_process_device *)c->qpd;
	after = BPF_CORE_READ(qpd, evicted);
	if (c->kind == GPUQ_EVICTION_EVICT)
		transition = c->evicted_before == 0 && after != 0;
	else
		transition = c->evicted_before == 1 && after == 0;
	if (transition) {
		e = reserve_event(sizeof(*e), GPUQ_EV_EVICTION);
		if (e) {
			e->hdr.tgid = c->owner.tgid;
			e->hdr.cgroup_id = c->owner.cgroup_id;
			e->hdr.process_key = c->owner.process_key;
			e->gpu_id = c->gpu_id;
			e->kind = c->kind;
			e->trigger = c->trigger;
			e->ret = ret;
			e->duration_ns = e->hdr.ts_ns - c->start_ns;
			e->queues = BPF_CORE_READ(qpd, queue_count);
			bpf_ringbuf_submit(e, 0);
		}
	}
	bpf_map_delete_elem(&evict_calls, &tid);
	return 0;
}

SEC("fentry/evict_process_queues_cpsch")
int BPF_PROG(fentry_evict_process_queues_cpsch, struct device_queue_manager *dqm,
	     struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_EVICT, dqm, qpd);
}

SEC("kprobe/evict_process_queues_cpsch")
int BPF_KPROBE(kprobe_evict_process_queues_cpsch, struct device_queue_manager *dqm,
	       struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_EVICT, dqm, qpd);
}

GPUQ_EXIT_PROGRAMS(evict_process_queues_cpsch, handle_evict_exit)

SEC("fentry/evict_process_queues_nocpsch")
int BPF_PROG(fentry_evict_process_queues_nocpsch, struct device_queue_manager *dqm,
	     struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_EVICT, dqm, qpd);
}

SEC("kprobe/evict_process_queues_nocpsch")
int BPF_KPROBE(kprobe_evict_process_queues_nocpsch, struct device_queue_manager *dqm,
	       struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_EVICT, dqm, qpd);
}

GPUQ_EXIT_PROGRAMS(evict_process_queues_nocpsch, handle_evict_exit)

SEC("fentry/restore_process_queues_cpsch")
int BPF_PROG(fentry_restore_process_queues_cpsch, struct device_queue_manager *dqm,
	     struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_RESTORE, dqm, qpd);
}

SEC("kprobe/restore_process_queues_cpsch")
int BPF_KPROBE(kprobe_restore_process_queues_cpsch, struct device_queue_manager *dqm,
	       struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_RESTORE, dqm, qpd);
}

GPUQ_EXIT_PROGRAMS(restore_process_queues_cpsch, handle_evict_exit)

SEC("fentry/restore_process_queues_nocpsch")
int BPF_PROG(fentry_restore_process_queues_nocpsch, struct device_queue_manager *dqm,
	     struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_RESTORE, dqm, qpd);
}

SEC("kprobe/restore_process_queues_nocpsch")
int BPF_KPROBE(kprobe_restore_process_queues_nocpsch, struct device_queue_manager *dqm,
	       struct qcm_process_device *qpd)
{
	return handle_evict_entry(GPUQ_EVICTION_RESTORE, dqm, qpd);
}

GPUQ_EXIT_PROGRAMS(restore_process_queues_nocpsch, handle_evict_exit)

/* ---- evict_trigger ----------------------------------------------------- */

static __always_inline int handle_trigger_entry(void *p, __u32 trigger)
{
	struct evict_trigger t = { .process_key = (__u64)p, .trigger = trigger };
	__u32 tid = current_tid();

	if (trigger >= GPUQ_TRIGGER__KNOWN)
		t.trigger = GPUQ_TRIGGER_UNKNOWN;
	bpf_map_update_elem(&evict_triggers, &tid, &t, BPF_ANY);
	return 0;
}

static __always_inline int handle_trigger_exit(int ret)
{
	__u32 tid = current_tid();

	bpf_map_delete_elem(&evict_triggers, &tid);
	return 0;
}

SEC("fentry/kfd_process_evict_queues")
int BPF_PROG(fentry_kfd_process_evict_queues, void *p, __u32 trigger)
{
	return handle_trigger_entry(p, trigger);
}

SEC("kprobe/kfd_process_evict_queues")
int BPF_KPROBE(kprobe_kfd_process_evict_queues, void *p, __u32 trigger)
{
	return handle_trigger_entry(p, trigger);
}

GPUQ_EXIT_PROGRAMS(kfd_process_evict_queues, handle_trigger_exit)

#endif /* GPUQ_EVICTION_BPF_H */

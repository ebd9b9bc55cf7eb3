/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Runlist and MES operations (GPUQ_EV_RUNLIST), one record at each return,
 * and the dqm operations whose per-thread slot attributes them
 * (attribution.bpf.h). Included by gpuq.bpf.c.
 *
 *   runlist_unmap     unmap_queues_cpsch(dqm, filter, filter_param, ...): HWS
 *                     preemption of the runlist. Only args 0-2: 6.12 inserts
 *                     grace_period before `reset`.
 *   runlist_map       map_queues_cpsch(dqm): HWS runlist submission.
 *   mes_add           add_queue_mes(dqm, q, qpd): MES maps one queue.
 *   mes_remove_v11/12/12_1  mes_v1x_y_remove_hw_queue(mes, input): MES unmaps one
 *                     queue. remove_queue_mes itself is a .constprop clone
 *                     without BTF (kfd-probe-points.md 5.2). amdgpu's own
 *                     users of MES run outside any dqm operation: ignored.
 *   op_*              create_queue_cpsch/nocpsch, destroy_queue_cpsch,
 *                     process_termination_cpsch/nocpsch,
 *                     kfd_ioctl_update_queue, kfd_ioctl_set_cu_mask,
 *                     kfd_ioctl_alloc_queue_gws: set the per-thread slot only.
 *                     Not dqm update_queue: the name is also an ipc/sem.c
 *                     FUNC in vmlinux BTF, which libbpf would pick (5.4).
 * execute_queues_cpsch is inlined (6.1) or a clone (6.12): not hookable; its
 * unmap+map pair is what runlist_unmap/map see.
 */
#ifndef GPUQ_RUNLIST_BPF_H
#define GPUQ_RUNLIST_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <gpuq/abi.h>
#include <gpuq/kfd_uapi.h>
#include "attribution.bpf.h"
#include "live_queues.bpf.h"
#include "queue_records.bpf.h"
#include "runlist_events.bpf.h"

/* ---- runlist_unmap / runlist_map (HWS) --------------------------------- */

static __always_inline int handle_hws_entry(__u32 op, struct device_queue_manager *dqm,
					    __u32 filter)
{
	struct runlist_call c = {};

	if (!kfd__sched_types_present())
		return 0;
	from_op_slot(&c);
	c.gpu_id = kfd__dqm_gpu_id(dqm);
	c.filter = filter;
	c.active_queues = BPF_CORE_READ(dqm, active_queue_count);
	c.dqm = (__u64)dqm;
	runlist_begin(op, &c);
	return 0;
}

static __always_inline int handle_unmap_exit(int ret)
{
	return runlist_end(GPUQ_RUNLIST_UNMAP, ret);
}

/*
 * The runlist a map left, read at its return (the caller holds the dqm
 * lock): the counts and limits pm_calc_rlib_size judges, and its verdict,
 * pm->is_over_subscription, which pm_create_runlist_ib sets for the runlist
 * it builds. A map that built none (no active queue or process) leaves a
 * stale verdict: no runlist is not oversubscribed.
 */
static __always_inline int handle_map_exit(int ret)
{
	struct runlist_call *c = runlist_call_of(GPUQ_RUNLIST_MAP);
	struct device_queue_manager *dqm;
	struct runlist_state st = {};

	if (!kfd__sched_types_present() || !c || !c->dqm)
		return runlist_end(GPUQ_RUNLIST_MAP, ret);
	dqm = (struct device_queue_manager *)c->dqm;
	st.processes = BPF_CORE_READ(dqm, processes_count);
	st.compute_queues = BPF_CORE_READ(dqm, active_cp_queue_count);
	if (bpf_core_field_exists(dqm->gws_queue_count))
		st.gws_queues = BPF_CORE_READ(dqm, gws_queue_count);
	kfd__runlist_limits(BPF_CORE_READ(dqm, dev), &st.process_limit, &st.compute_queue_limit);
	st.flags = GPUQ_RUNLIST_F_RUNLIST_READ;
	if (BPF_CORE_READ(dqm, packet_mgr.is_over_subscription) && st.processes &&
	    BPF_CORE_READ(dqm, active_queue_count)) {
		st.flags |= GPUQ_RUNLIST_F_OVERSUBSCRIBED;
		if (kfd__xnack_conflict(dqm))
			st.flags |= GPUQ_RUNLIST_F_XNACK_CONFLICT;
	}
	return runlist_end_with(GPUQ_RUNLIST_MAP, ret, &st);
}

SEC("fentry/unmap_queues_cpsch")
int BPF_PROG(fentry_unmap_queues_cpsch, struct device_queue_manager *dqm, __u32 filter)
{
	return handle_hws_entry(GPUQ_RUNLIST_UNMAP, dqm, filter);
}

SEC("kprobe/unmap_queues_cpsch")
int BPF_KPROBE(kprobe_unmap_queues_cpsch, struct device_queue_manager *dqm, __u32 filter)
{
	return handle_hws_entry(GPUQ_RUNLIST_UNMAP, dqm, filter);
}

GPUQ_EXIT_PROGRAMS(unmap_queues_cpsch, fexit_unmap_queues_cpsch, kretprobe_unmap_queues_cpsch,
		   handle_unmap_exit)

SEC("fentry/map_queues_cpsch")
int BPF_PROG(fentry_map_queues_cpsch, struct device_queue_manager *dqm)
{
	return handle_hws_entry(GPUQ_RUNLIST_MAP, dqm, 0);
}

SEC("kprobe/map_queues_cpsch")
int BPF_KPROBE(kprobe_map_queues_cpsch, struct device_queue_manager *dqm)
{
	return handle_hws_entry(GPUQ_RUNLIST_MAP, dqm, 0);
}

GPUQ_EXIT_PROGRAMS(map_queues_cpsch, fexit_map_queues_cpsch, kretprobe_map_queues_cpsch,
		   handle_map_exit)

/* ---- mes_add ----------------------------------------------------------- */

static __always_inline int handle_mes_add_entry(struct device_queue_manager *dqm, struct queue *q)
{
	struct runlist_call c = {};

	if (!kfd__sched_types_present())
		return 0;
	from_op_slot(&c);
	/* the queue names its owner: no slot needed */
	owner_of(BPF_CORE_READ(q, process), &c.owner);
	c.gpu_id = kfd__dqm_gpu_id(dqm);
	c.queue_id = BPF_CORE_READ(q, properties.queue_id);
	/* restore re-adds queues created before the agent started: learn them */
	learn_doorbell(c.gpu_id, BPF_CORE_READ(q, properties.doorbell_off), c.owner.process_key,
		       c.queue_id);
	runlist_begin(GPUQ_RUNLIST_MES_ADD, &c);
	return 0;
}

static __always_inline int handle_mes_add_exit(int ret)
{
	return runlist_end(GPUQ_RUNLIST_MES_ADD, ret);
}

SEC("fentry/add_queue_mes")
int BPF_PROG(fentry_add_queue_mes, struct device_queue_manager *dqm, struct queue *q)
{
	return handle_mes_add_entry(dqm, q);
}

SEC("kprobe/add_queue_mes")
int BPF_KPROBE(kprobe_add_queue_mes, struct device_queue_manager *dqm, struct queue *q)
{
	return handle_mes_add_entry(dqm, q);
}

GPUQ_EXIT_PROGRAMS(add_queue_mes, fexit_add_queue_mes, kretprobe_add_queue_mes, handle_mes_add_exit)

/* ---- mes_remove_v11 / mes_remove_v12 ----------------------------------- */

static __always_inline int handle_mes_remove_entry(struct mes_remove_queue_input *input)
{
	struct doorbell_key k = {};
	struct runlist_call c = {};
	struct doorbell_val *db;
	__u32 tid = current_tid();
	struct op_slot *s;

	if (!kfd__sched_types_present() || !bpf_core_type_exists(struct mes_remove_queue_input))
		return 0;
	s = bpf_map_lookup_elem(&op_slots, &tid);
	if (!s)
		return 0; /* not under a KFD dqm operation */
	c.owner = s->owner;
	c.cause = s->cause;
	c.gpu_id = s->gpu_id;
	c.queue_id = s->queue_id;
	k.gpu_id = s->gpu_id;
	k.doorbell_off = BPF_CORE_READ(input, doorbell_offset);
	db = bpf_map_lookup_elem(&doorbells, &k);
	if (db)
		c.queue_id = db->queue_id;
	runlist_begin(GPUQ_RUNLIST_MES_REMOVE, &c);
	return 0;
}

static __always_inline int handle_mes_remove_exit(int ret)
{
	return runlist_end(GPUQ_RUNLIST_MES_REMOVE, ret);
}

SEC("fentry/mes_v11_0_remove_hw_queue")
int BPF_PROG(fentry_mes_v11_0_remove_hw_queue, void *mes, struct mes_remove_queue_input *input)
{
	return handle_mes_remove_entry(input);
}

SEC("kprobe/mes_v11_0_remove_hw_queue")
int BPF_KPROBE(kprobe_mes_v11_0_remove_hw_queue, void *mes, struct mes_remove_queue_input *input)
{
	return handle_mes_remove_entry(input);
}

GPUQ_EXIT_PROGRAMS(mes_v11_0_remove_hw_queue, fexit_mes_v11_0_remove_hw_queue,
		   kretprobe_mes_v11_0_remove_hw_queue, handle_mes_remove_exit)

SEC("fentry/mes_v12_0_remove_hw_queue")
int BPF_PROG(fentry_mes_v12_0_remove_hw_queue, void *mes, struct mes_remove_queue_input *input)
{
	return handle_mes_remove_entry(input);
}

SEC("kprobe/mes_v12_0_remove_hw_queue")
int BPF_KPROBE(kprobe_mes_v12_0_remove_hw_queue, void *mes, struct mes_remove_queue_input *input)
{
	return handle_mes_remove_entry(input);
}

GPUQ_EXIT_PROGRAMS(mes_v12_0_remove_hw_queue, fexit_mes_v12_0_remove_hw_queue,
		   kretprobe_mes_v12_0_remove_hw_queue, handle_mes_remove_exit)

/* GC 12.1's MES (7.2+); mes_remove_queue_input gained xcc_id before doorbell_offset there */
SEC("fentry/mes_v12_1_remove_hw_queue")
int BPF_PROG(fentry_mes_v12_1_remove_hw_queue, void *mes, struct mes_remove_queue_input *input)
{
	return handle_mes_remove_entry(input);
}

SEC("kprobe/mes_v12_1_remove_hw_queue")
int BPF_KPROBE(kprobe_mes_v12_1_remove_hw_queue, void *mes, struct mes_remove_queue_input *input)
{
	return handle_mes_remove_entry(input);
}

GPUQ_EXIT_PROGRAMS(mes_v12_1_remove_hw_queue, fexit_mes_v12_1_remove_hw_queue,
		   kretprobe_mes_v12_1_remove_hw_queue, handle_mes_remove_exit)

/* ---- op_*: the dqm operations that cause runlist operations ------------- */

/* create_queue_cpsch/nocpsch(dqm, q, qpd, ...): the create's programs */
#define GPUQ_CREATE_OP_PROGRAMS(fn, fentry_prog, kprobe_prog, fexit_prog, kretprobe_prog)          \
	SEC("fentry/" #fn)                                                                         \
	int BPF_PROG(fentry_prog, struct device_queue_manager *dqm, struct queue *q,               \
		     struct qcm_process_device *qpd)                                               \
	{                                                                                          \
		return op_enter(GPUQ_CAUSE_CREATE, dqm, qpd);                                      \
	}                                                                                          \
	SEC("kprobe/" #fn)                                                                         \
	int BPF_KPROBE(kprobe_prog, struct device_queue_manager *dqm, struct queue *q,             \
		       struct qcm_process_device *qpd)                                             \
	{                                                                                          \
		return op_enter(GPUQ_CAUSE_CREATE, dqm, qpd);                                      \
	}                                                                                          \
	GPUQ_EXIT_PROGRAMS(fn, fexit_prog, kretprobe_prog, op_exit)

GPUQ_CREATE_OP_PROGRAMS(create_queue_cpsch, fentry_create_queue_cpsch, kprobe_create_queue_cpsch,
			fexit_create_queue_cpsch, kretprobe_create_queue_cpsch)

/*
 * NO_HWS (sched_policy=2) creates: no runlist to attribute, but the same
 * (dqm, q, qpd) prototype, and the args-kprobe tier learns a NO_HWS GPU's
 * dqm and qpd here (its evictions and terminations need them).
 */
GPUQ_CREATE_OP_PROGRAMS(create_queue_nocpsch, fentry_create_queue_nocpsch,
			kprobe_create_queue_nocpsch, fexit_create_queue_nocpsch,
			kretprobe_create_queue_nocpsch)

GPUQ_DQM_QPD_PROGRAMS(destroy_queue_cpsch, fentry_destroy_queue_cpsch, kprobe_destroy_queue_cpsch,
		      fexit_destroy_queue_cpsch, kretprobe_destroy_queue_cpsch, op_enter,
		      GPUQ_CAUSE_DESTROY, op_exit)

GPUQ_DQM_QPD_PROGRAMS(process_termination_cpsch, fentry_process_termination_cpsch,
		      kprobe_process_termination_cpsch, fexit_process_termination_cpsch,
		      kretprobe_process_termination_cpsch, op_enter, GPUQ_CAUSE_TERMINATE, op_exit)

GPUQ_DQM_QPD_PROGRAMS(process_termination_nocpsch, fentry_process_termination_nocpsch,
		      kprobe_process_termination_nocpsch, fexit_process_termination_nocpsch,
		      kretprobe_process_termination_nocpsch, op_enter, GPUQ_CAUSE_TERMINATE,
		      op_exit)

/*
 * The queue ioctls that change a live queue: AMDKFD_IOC_UPDATE_QUEUE
 * (percentage, priority, ring), AMDKFD_IOC_SET_CU_MASK and
 * AMDKFD_IOC_ALLOC_QUEUE_GWS (ROCr's hsaKmtAllocQueueGWS, for cooperative
 * launches). current is the owner and p its kfd_process; `data` is amdkfd's
 * kernel copy of the uapi args, whose queue is looked up in the live-queue
 * map for the GPU (0 if created before we ran). The runlist operations
 * inside are attributed to the caller as cause update (the set's
 * pqm_update_mqd and the GWS's pqm_set_gws call the dqm's update_queue too,
 * 6.1-7.3: unmap and map on HWS, remove and add on MES); at the return, a
 * successful update or CU mask set is the queue's record (a GWS has none:
 * the runlist's GWS queue count is read at each map, runlist_events.bpf.h).
 */
enum queue_ioctl {
	QUEUE_IOCTL_UPDATE,
	QUEUE_IOCTL_CU_MASK,
	QUEUE_IOCTL_GWS,
};

/* A queue ioctl in progress: its process and args, for its return. */
struct queue_ioctl_call {
	__u64 process_key;
	__u32 ioctl; /* enum queue_ioctl */
	__u32 pad;
	union {
		struct gpuq_kfd_update_queue_args update;
		struct gpuq_kfd_set_cu_mask_args cu_mask;
		struct gpuq_kfd_alloc_queue_gws_args gws;
	} args;
};

/* @brief thread id -> queue ioctl in progress (a thread is in one at a time) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct queue_ioctl_call);
} queue_ioctl_calls SEC(".maps");

static __always_inline int handle_queue_ioctl_entry(struct kfd_process *p, void *data,
						    enum queue_ioctl ioctl)
{
	struct queue_ioctl_call call = { .process_key = (__u64)p, .ioctl = ioctl };
	struct gpuq_owner owner = {};
	struct live_key key = {};
	struct live_val *live;
	__u32 tid = current_tid();
	long err;

	/* amdkfd's kernel copy of the uapi args; unread, no cause is made up */
	if (ioctl == QUEUE_IOCTL_UPDATE) {
		err = bpf_probe_read_kernel(&call.args.update, sizeof(call.args.update), data);
		key.queue_id = call.args.update.queue_id;
	} else if (ioctl == QUEUE_IOCTL_CU_MASK) {
		err = bpf_probe_read_kernel(&call.args.cu_mask, sizeof(call.args.cu_mask), data);
		key.queue_id = call.args.cu_mask.queue_id;
	} else {
		err = bpf_probe_read_kernel(&call.args.gws, sizeof(call.args.gws), data);
		key.queue_id = call.args.gws.queue_id;
	}
	if (err) {
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
		return 0;
	}
	key.process_key = (__u64)p;
	live = bpf_map_lookup_elem(&live_queues, &key);
	owner.process_key = (__u64)p;
	owner.tgid = current_tgid();
	owner.cgroup_id = bpf_get_current_cgroup_id();
	op_set(GPUQ_CAUSE_UPDATE, live ? live->gpu_id : 0, key.queue_id, &owner);
	if (bpf_map_update_elem(&queue_ioctl_calls, &tid, &call, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
	return 0;
}

static __always_inline int handle_queue_ioctl_exit(int ret)
{
	__u32 tid = current_tid();
	struct queue_ioctl_call *call = bpf_map_lookup_elem(&queue_ioctl_calls, &tid);

	if (call) {
		if (ret == 0 && call->ioctl == QUEUE_IOCTL_UPDATE)
			emit_update(call->process_key, &call->args.update);
		else if (ret == 0 && call->ioctl == QUEUE_IOCTL_CU_MASK)
			emit_cu_mask(call->process_key, &call->args.cu_mask);
		bpf_map_delete_elem(&queue_ioctl_calls, &tid);
	}
	return op_exit(ret);
}

SEC("fentry/kfd_ioctl_update_queue")
int BPF_PROG(fentry_kfd_ioctl_update_queue, void *filep, struct kfd_process *p, void *data)
{
	return handle_queue_ioctl_entry(p, data, QUEUE_IOCTL_UPDATE);
}

SEC("kprobe/kfd_ioctl_update_queue")
int BPF_KPROBE(kprobe_kfd_ioctl_update_queue, void *filep, struct kfd_process *p, void *data)
{
	return handle_queue_ioctl_entry(p, data, QUEUE_IOCTL_UPDATE);
}

GPUQ_EXIT_PROGRAMS(kfd_ioctl_update_queue, fexit_kfd_ioctl_update_queue,
		   kretprobe_kfd_ioctl_update_queue, handle_queue_ioctl_exit)

SEC("fentry/kfd_ioctl_set_cu_mask")
int BPF_PROG(fentry_kfd_ioctl_set_cu_mask, void *filep, struct kfd_process *p, void *data)
{
	return handle_queue_ioctl_entry(p, data, QUEUE_IOCTL_CU_MASK);
}

SEC("kprobe/kfd_ioctl_set_cu_mask")
int BPF_KPROBE(kprobe_kfd_ioctl_set_cu_mask, void *filep, struct kfd_process *p, void *data)
{
	return handle_queue_ioctl_entry(p, data, QUEUE_IOCTL_CU_MASK);
}

GPUQ_EXIT_PROGRAMS(kfd_ioctl_set_cu_mask, fexit_kfd_ioctl_set_cu_mask,
		   kretprobe_kfd_ioctl_set_cu_mask, handle_queue_ioctl_exit)

SEC("fentry/kfd_ioctl_alloc_queue_gws")
int BPF_PROG(fentry_kfd_ioctl_alloc_queue_gws, void *filep, struct kfd_process *p, void *data)
{
	return handle_queue_ioctl_entry(p, data, QUEUE_IOCTL_GWS);
}

SEC("kprobe/kfd_ioctl_alloc_queue_gws")
int BPF_KPROBE(kprobe_kfd_ioctl_alloc_queue_gws, void *filep, struct kfd_process *p, void *data)
{
	return handle_queue_ioctl_entry(p, data, QUEUE_IOCTL_GWS);
}

GPUQ_EXIT_PROGRAMS(kfd_ioctl_alloc_queue_gws, fexit_kfd_ioctl_alloc_queue_gws,
		   kretprobe_kfd_ioctl_alloc_queue_gws, handle_queue_ioctl_exit)

#endif /* GPUQ_RUNLIST_BPF_H */

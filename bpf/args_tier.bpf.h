/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The args-kprobe tier: the same records as the BTF hooks, on hosts whose
 * amdgpu has no BTF (amdgpu-dkms, the GPU Operator's driver). Every program
 * here reads only function arguments (positions: include/gpuq/args_positions.h)
 * and the uapi args of the ioctls; kernel pointers are opaque keys. What the
 * BTF bodies read from structs is learned from calls nested on one thread:
 *
 *   kfd_ioctl_create_queue(f, p, args)   p, gpu_id (uapi), owner = current
 *     kfd_procfs_add_queue(q)            q is the queue being created
 *     create_queue_cpsch(dqm, q, qpd)    dqm -> gpu_id, qpd -> (p, gpu_id)
 *     (create_queue_nocpsch on NO_HWS GPUs, add_queue_mes on MES: the same)
 *   ioctl return 0                       q -> (p, queue_id from the args)
 *
 * and current->mm -> p (vmlinux BTF) for the exit notifier, learned at every
 * KFD ioctl too (kfd_ioctl: p = filep->private_data). So: processes are known
 * once they issued a KFD ioctl while the agent ran, queues and GPUs once one
 * of their queues was created; docs/probe-tiers.md says what differs from the BTF tier.
 * Included by gpuq.bpf.c; enabled only when the agent plans this tier
 * (rodata args_tier), never together with the BTF bodies.
 */
#ifndef GPUQ_ARGS_TIER_BPF_H
#define GPUQ_ARGS_TIER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <gpuq/abi.h>
#include <gpuq/args_positions.h>
#include <gpuq/kfd_uapi.h>
#include "args_state.bpf.h"
#include "attribution.bpf.h"
#include "events.bpf.h"
#include "eviction_events.bpf.h"
#include "live_queues.bpf.h"
#include "queue_records.bpf.h"
#include "runlist.bpf.h"
#include "runlist_events.bpf.h"

/* A process's state on one GPU, by its qcm_process_device pointer. */
struct args_qpd {
	__u64 process_key;
	__u32 gpu_id;
	/*
	 * Shadow of qpd->evicted, kept from the evict/restore calls seen: the
	 * BTF tier reads the real counter.
	 */
	__u32 evicted;
};

/* @brief args tier: device_queue_manager * -> gpu_id */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} args_dqms SEC(".maps");

/* @brief args tier: qcm_process_device * -> (kfd_process, gpu_id, evicted) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct args_qpd);
} args_qpds SEC(".maps");

/* @brief args tier: thread in kfd_process_dequeue_from_all_devices -> its kfd_process */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} args_teardowns SEC(".maps");

/* @brief args tier: thread in kfd_ioctl_create_process -> its struct file * */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} args_context_calls SEC(".maps");

/* Argument n (0-based) of a kprobe, in a register: at most the fifth. */
static __always_inline __u64 args__arg_at(struct pt_regs *ctx, int n)
{
	switch (n) {
	case 0:
		return PT_REGS_PARM1(ctx);
	case 1:
		return PT_REGS_PARM2(ctx);
	case 2:
		return PT_REGS_PARM3(ctx);
	case 3:
		return PT_REGS_PARM4(ctx);
	default:
		return PT_REGS_PARM5(ctx);
	}
}

/*
 * Argument n, a constant of include/gpuq/args_positions.h. A position past
 * the fifth does not compile: it would read another argument's register
 * (tests/bpf/args_bound_test.sh).
 */
#define args__arg(ctx, n)                                                                          \
	({                                                                                         \
		_Static_assert((n) >= 0 && (n) <= 4,                                               \
			       "args__arg: position " #n " is not one of the five register "       \
			       "arguments");                                                       \
		args__arg_at(ctx, n);                                                              \
	})

/* The owner of kfd_process p as seen at its creates (current then was it). */
static __always_inline void args__owner(__u64 p, struct gpuq_owner *o)
{
	struct owner_val *cached = bpf_map_lookup_elem(&process_owners, &p);

	o->process_key = p;
	if (cached) {
		o->tgid = cached->tgid;
		o->cgroup_id = cached->cgroup_id;
	}
}

/* ---- queue_create: kfd_procfs_add_queue(q) inside the create ioctl ------ */

SEC("kprobe/kfd_procfs_add_queue")
int args_kprobe_kfd_procfs_add_queue(struct pt_regs *ctx)
{
	__u32 tid = current_tid();
	struct create_call *call = bpf_map_lookup_elem(&create_calls, &tid);

	if (call)
		call->q = args__arg(ctx, GPUQ_ARG_QUEUE_Q);
	return 0;
}

/* ---- queue_destroy: uninit_queue(q) ------------------------------------- */

SEC("kprobe/uninit_queue")
int args_kprobe_uninit_queue(struct pt_regs *ctx)
{
	__u64 q = args__arg(ctx, GPUQ_ARG_QUEUE_Q);
	struct args_queue *known = bpf_map_lookup_elem(&args_queues, &q);
	struct live_val *live;
	struct args_queue v;

	/*
	 * Only queues created while we ran: kernel queues (HIQ/DIQ), failed
	 * creates and queues from before the agent started are unknown here
	 * (the latter are retired by reconciliation).
	 */
	if (!known)
		return 0;
	v = *known;
	bpf_map_delete_elem(&args_queues, &q);
	/*
	 * begin_create tracked it by (process, queue id) too, where
	 * finish_create kept a ROCr queue's write pointer and the exit read
	 * its last write index
	 */
	live = bpf_map_lookup_elem(&live_queues, &v.key);
	if (live)
		v.val = *live;
	bpf_map_delete_elem(&live_queues, &v.key);
	submit_destroy(&v.key, &v.val, 0);
	return 0;
}

/* ---- process_exit: kfd_process_notifier_release(mn, mm) ----------------- */

SEC("kprobe/kfd_process_notifier_release")
int args_kprobe_kfd_process_notifier_release(struct pt_regs *ctx)
{
	__u64 mm = args__arg(ctx, GPUQ_ARG_NOTIFIER_MM);
	struct args_mm *known = bpf_map_lookup_elem(&args_mms, &mm);
	struct gpuq_process_exit_event *e;
	struct gpuq_owner o = {};
	__u8 one = 1;

	if (!known)
		return 0; /* a KFD process that created no queue while we ran */
	args__owner(known->process_key, &o);
	bpf_map_update_elem(&exiting, &o.process_key, &one, BPF_ANY);
	e = reserve_event(sizeof(*e), GPUQ_EV_PROCESS_EXIT);
	if (e) {
		e->hdr.tgid = o.tgid;
		e->hdr.cgroup_id = o.cgroup_id;
		e->hdr.process_key = o.process_key;
		__builtin_memcpy(e->comm, known->comm, sizeof(e->comm));
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&args_mms, &mm);
	return 0;
}

/*
 * ---- process_seen: kfd_ioctl(filep, cmd, arg), any KFD ioctl ------------
 * amdkfd's ioctl dispatcher. filep->private_data is the caller's kfd_process
 * (kfd_open sets it; struct file is vmlinux's, so CO-RE reads it without
 * amdgpu BTF). Learning p, its owner and its mm here, not only at a create,
 * makes the exit, and the teardown's runlist operations, of every process
 * that issued any KFD ioctl while the agent ran visible: ROCr issues several
 * in hsa_init and more at every allocation and wait. Only the first ioctl of
 * a (p, tgid) pair writes: one hash lookup for the rest. A forked child's
 * ioctl on an inherited fd (amdkfd answers EBADF; ROCT reopens /dev/kfd in a
 * child instead) would claim p until the owner's next ioctl.
 */
SEC("kprobe/kfd_ioctl")
int args_kprobe_kfd_ioctl(struct pt_regs *ctx)
{
	struct file *filep = (struct file *)args__arg(ctx, GPUQ_ARG_DISPATCH_FILE);
	__u64 p = (__u64)BPF_CORE_READ(filep, private_data);
	struct owner_val *known;

	if (!p)
		return 0;
	known = bpf_map_lookup_elem(&process_owners, &p);
	if (known && known->tgid == current_tgid())
		return 0;
	args__learn_mm(p);
	return 0;
}

/*
 * ---- context_create: kfd_ioctl_create_process(filep, p, data) (7.2+) ------
 * On success filep->private_data is the new secondary kfd_process: it is
 * learned as a context (its exit is kfd_release's, not the notifier's) with
 * current as its owner.
 */
SEC("kprobe/kfd_ioctl_create_process")
int args_kprobe_kfd_ioctl_create_process(struct pt_regs *ctx)
{
	__u64 filep = args__arg(ctx, GPUQ_ARG_IOCTL_FILE);
	__u32 tid = current_tid();

	bpf_map_update_elem(&args_context_calls, &tid, &filep, BPF_ANY);
	return 0;
}

static __always_inline int args__context_created(int ret)
{
	__u32 tid = current_tid();
	__u64 *filep = bpf_map_lookup_elem(&args_context_calls, &tid);
	__u8 one = 1;
	__u64 p;

	if (!filep)
		return 0;
	p = (__u64)BPF_CORE_READ((struct file *)*filep, private_data);
	bpf_map_delete_elem(&args_context_calls, &tid);
	if (ret || !p)
		return 0;
	bpf_map_update_elem(&args_contexts, &p, &one, BPF_ANY);
	remember_owner(p, current_tgid(), bpf_get_current_cgroup_id());
	return 0;
}

GPUQ_ARGS_EXIT(kfd_ioctl_create_process, args_kretprobe_kfd_ioctl_create_process,
	       args__context_created)

/*
 * ---- context_exit: kfd_release(inode, filep) ------------------------------
 * A learned secondary context's file is released: amdkfd tears the context
 * down now (bpf/gpuq.bpf.c handle_context_exit says why).
 */
SEC("kprobe/kfd_release")
int args_kprobe_kfd_release(struct pt_regs *ctx)
{
	struct file *filep = (struct file *)args__arg(ctx, GPUQ_ARG_RELEASE_FILE);
	__u64 p = (__u64)BPF_CORE_READ(filep, private_data);
	struct gpuq_process_exit_event *e;
	struct gpuq_owner o = {};
	__u8 one = 1;

	if (!p || !bpf_map_lookup_elem(&args_contexts, &p))
		return 0;
	bpf_map_delete_elem(&args_contexts, &p);
	args__owner(p, &o);
	bpf_map_update_elem(&exiting, &p, &one, BPF_ANY);
	e = reserve_event(sizeof(*e), GPUQ_EV_PROCESS_EXIT);
	if (!e)
		return 0;
	e->hdr.tgid = o.tgid;
	e->hdr.cgroup_id = o.cgroup_id;
	e->hdr.process_key = p;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * ---- process_teardown: kfd_process_dequeue_from_all_devices(p) ----------
 * The exit teardown (the kfd_process_wq kworker; the notifier itself since
 * v6.13) calls process_termination_*(dqm, qpd) for each of p's GPUs inside
 * this function: a qpd never learned at a create belongs to p.
 */
SEC("kprobe/kfd_process_dequeue_from_all_devices")
int args_kprobe_kfd_process_dequeue_from_all_devices(struct pt_regs *ctx)
{
	__u64 p = args__arg(ctx, GPUQ_ARG_DEQUEUE_PROCESS);
	__u32 tid = current_tid();

	if (bpf_map_update_elem(&args_teardowns, &tid, &p, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
	return 0;
}

/* Forgets one qpd of a torn-down process (bpf_for_each_map_elem callback). */
static long args__forget_qpd(struct bpf_map *map, __u64 *qpd, struct args_qpd *v, __u64 *p)
{
	if (v->process_key == *p)
		bpf_map_delete_elem(map, qpd);
	return 0;
}

/*
 * The process's qpds die with it, and kmalloc hands their addresses to the
 * next processes: a stale entry would attribute another process's
 * operations to this one. Forgotten once the terminations are done.
 */
SEC("kretprobe/kfd_process_dequeue_from_all_devices")
int args_kretprobe_kfd_process_dequeue_from_all_devices(struct pt_regs *ctx)
{
	__u32 tid = current_tid();
	__u64 *p = bpf_map_lookup_elem(&args_teardowns, &tid);
	__u64 key;

	if (!p)
		return 0;
	key = *p;
	bpf_map_delete_elem(&args_teardowns, &tid);
	bpf_for_each_map_elem(&args_qpds, args__forget_qpd, &key, 0);
	return 0;
}

/* ---- dqm operations: learning, and the op slot -------------------------- */

static __always_inline __u32 args__dqm_gpu(__u64 dqm)
{
	__u32 *gpu = bpf_map_lookup_elem(&args_dqms, &dqm);

	return gpu ? *gpu : 0;
}

/*
 * The owner and GPU of qpd; false when it was never learned (its process
 * created no queue while we ran).
 */
static __always_inline bool args__qpd(__u64 dqm, __u64 qpd, struct gpuq_owner *o, __u32 *gpu)
{
	struct args_qpd *v = bpf_map_lookup_elem(&args_qpds, &qpd);

	*gpu = args__dqm_gpu(dqm);
	if (!v)
		return false;
	args__owner(v->process_key, o);
	if (!*gpu)
		*gpu = v->gpu_id;
	return true;
}

/* create_queue_cpsch and create_queue_nocpsch: (dqm, q, qpd, ...) */
static __always_inline int args__create_op(struct pt_regs *ctx)
{
	__u64 dqm = args__arg(ctx, GPUQ_ARG_CREATE_DQM);
	__u64 qpd = args__arg(ctx, GPUQ_ARG_CREATE_QPD);
	struct gpuq_kfd_create_queue_args a = {};
	struct args_qpd v = {}, *old;
	struct gpuq_owner o = {};
	__u32 tid = current_tid();
	struct create_call *call;
	__u32 gpu;

	call = bpf_map_lookup_elem(&create_calls, &tid);
	/*
	 * inside the create ioctl: the uapi args (amdkfd's kernel copy) name
	 * the GPU; unread, the queue is placed as below rather than on GPU 0
	 */
	if (call && !bpf_probe_read_kernel(&a, sizeof(a), (void *)call->args)) {
		bpf_map_update_elem(&args_dqms, &dqm, &a.gpu_id, BPF_ANY);
		old = bpf_map_lookup_elem(&args_qpds, &qpd);
		v.process_key = call->process_key;
		v.gpu_id = a.gpu_id;
		v.evicted = old && old->process_key == v.process_key ? old->evicted : 0;
		bpf_map_update_elem(&args_qpds, &qpd, &v, BPF_ANY);
		o.process_key = call->process_key;
		o.tgid = current_tgid();
		o.cgroup_id = bpf_get_current_cgroup_id();
		op_set(GPUQ_CAUSE_CREATE, a.gpu_id, 0, &o);
		return 0;
	}
	/* CRIU restore and the like: known process or none */
	args__qpd(dqm, qpd, &o, &gpu);
	op_set(GPUQ_CAUSE_CREATE, gpu, 0, &o);
	return 0;
}

SEC("kprobe/create_queue_cpsch")
int args_kprobe_create_queue_cpsch(struct pt_regs *ctx)
{
	return args__create_op(ctx);
}

GPUQ_ARGS_EXIT(create_queue_cpsch, args_kretprobe_create_queue_cpsch, op_exit)

SEC("kprobe/create_queue_nocpsch")
int args_kprobe_create_queue_nocpsch(struct pt_regs *ctx)
{
	return args__create_op(ctx);
}

GPUQ_ARGS_EXIT(create_queue_nocpsch, args_kretprobe_create_queue_nocpsch, op_exit)

SEC("kprobe/destroy_queue_cpsch")
int args_kprobe_destroy_queue_cpsch(struct pt_regs *ctx)
{
	__u64 q = args__arg(ctx, GPUQ_ARG_DESTROY_Q);
	struct args_queue *known = bpf_map_lookup_elem(&args_queues, &q);
	struct gpuq_owner o = {};
	__u32 gpu;

	args__qpd(args__arg(ctx, GPUQ_ARG_DESTROY_DQM), args__arg(ctx, GPUQ_ARG_DESTROY_QPD), &o,
		  &gpu);
	op_set(GPUQ_CAUSE_DESTROY, gpu, known ? known->key.queue_id : 0, &o);
	return 0;
}

GPUQ_ARGS_EXIT(destroy_queue_cpsch, args_kretprobe_destroy_queue_cpsch, op_exit)

/*
 * A termination inside the exit teardown of p: the qpd is p's on this GPU,
 * whatever was learned for its address before (a process that issued ioctls
 * but created no queue while we ran has none; a dead one may have left it).
 */
static __always_inline int args__terminate(struct pt_regs *ctx)
{
	__u64 dqm = args__arg(ctx, GPUQ_ARG_OP_DQM);
	__u64 qpd = args__arg(ctx, GPUQ_ARG_OP_QPD);
	struct gpuq_owner o = {};
	__u32 tid = current_tid();
	struct args_qpd v = {};
	__u64 *p;
	__u32 gpu;

	args__qpd(dqm, qpd, &o, &gpu);
	p = bpf_map_lookup_elem(&args_teardowns, &tid);
	if (p && o.process_key != *p) {
		/* never learned, or learned for a process that died before */
		o = (struct gpuq_owner){};
		args__owner(*p, &o);
		v.process_key = *p;
		v.gpu_id = gpu;
		bpf_map_update_elem(&args_qpds, &qpd, &v, BPF_ANY);
	}
	op_set(GPUQ_CAUSE_TERMINATE, gpu, 0, &o);
	return 0;
}

SEC("kprobe/process_termination_cpsch")
int args_kprobe_process_termination_cpsch(struct pt_regs *ctx)
{
	return args__terminate(ctx);
}

GPUQ_ARGS_EXIT(process_termination_cpsch, args_kretprobe_process_termination_cpsch, op_exit)

SEC("kprobe/process_termination_nocpsch")
int args_kprobe_process_termination_nocpsch(struct pt_regs *ctx)
{
	return args__terminate(ctx);
}

GPUQ_ARGS_EXIT(process_termination_nocpsch, args_kretprobe_process_termination_nocpsch, op_exit)

/* ---- runlist_unmap / runlist_map (HWS) ---------------------------------- */

static __always_inline int args__hws_entry(__u32 op, __u64 dqm, __u32 filter)
{
	struct runlist_call c = {};
	__u32 tid = current_tid();
	struct op_slot *s;

	from_op_slot(&c);
	c.gpu_id = args__dqm_gpu(dqm);
	if (!c.gpu_id) {
		s = bpf_map_lookup_elem(&op_slots, &tid);
		if (s)
			c.gpu_id = s->gpu_id;
	}
	if (!c.gpu_id)
		return 0; /* a GPU no queue was created on while we ran */
	c.filter = filter;
	/* active_queues (dqm->active_queue_count) is a struct read: 0 here */
	runlist_begin(op, &c);
	return 0;
}

SEC("kprobe/unmap_queues_cpsch")
int args_kprobe_unmap_queues_cpsch(struct pt_regs *ctx)
{
	return args__hws_entry(GPUQ_RUNLIST_UNMAP, args__arg(ctx, GPUQ_ARG_RUNLIST_DQM),
			       (__u32)args__arg(ctx, GPUQ_ARG_RUNLIST_FILTER));
}

GPUQ_ARGS_EXIT(unmap_queues_cpsch, args_kretprobe_unmap_queues_cpsch, handle_unmap_exit)

SEC("kprobe/map_queues_cpsch")
int args_kprobe_map_queues_cpsch(struct pt_regs *ctx)
{
	return args__hws_entry(GPUQ_RUNLIST_MAP, args__arg(ctx, GPUQ_ARG_RUNLIST_DQM), 0);
}

GPUQ_ARGS_EXIT(map_queues_cpsch, args_kretprobe_map_queues_cpsch, handle_map_exit)

/* ---- mes_add / mes_remove_v11/v12/v12_1 --------------------------------------- */

SEC("kprobe/add_queue_mes")
int args_kprobe_add_queue_mes(struct pt_regs *ctx)
{
	__u64 q = args__arg(ctx, GPUQ_ARG_CREATE_Q);
	struct args_queue *known = bpf_map_lookup_elem(&args_queues, &q);
	struct runlist_call c = {};

	from_op_slot(&c);
	if (!args__qpd(args__arg(ctx, GPUQ_ARG_CREATE_DQM), args__arg(ctx, GPUQ_ARG_CREATE_QPD),
		       &c.owner, &c.gpu_id) &&
	    !c.gpu_id)
		return 0;
	/* a queue being created has no id yet here (it is learned at return) */
	c.queue_id = known ? known->key.queue_id : 0;
	runlist_begin(GPUQ_RUNLIST_MES_ADD, &c);
	return 0;
}

GPUQ_ARGS_EXIT(add_queue_mes, args_kretprobe_add_queue_mes, handle_mes_add_exit)

/*
 * mes_v1x_0_remove_hw_queue(mes, input): input is amdgpu's, not uapi; the
 * enclosing dqm operation's slot names the GPU, owner and queue instead.
 */
static __always_inline int args__mes_remove_entry(void)
{
	__u32 tid = current_tid();
	struct runlist_call c = {};
	struct op_slot *s = bpf_map_lookup_elem(&op_slots, &tid);

	if (!s || !s->gpu_id)
		return 0; /* not under a KFD dqm operation we know */
	c.owner = s->owner;
	c.cause = s->cause;
	c.gpu_id = s->gpu_id;
	c.queue_id = s->queue_id;
	runlist_begin(GPUQ_RUNLIST_MES_REMOVE, &c);
	return 0;
}

SEC("kprobe/mes_v11_0_remove_hw_queue")
int args_kprobe_mes_v11_0_remove_hw_queue(struct pt_regs *ctx)
{
	return args__mes_remove_entry();
}

GPUQ_ARGS_EXIT(mes_v11_0_remove_hw_queue, args_kretprobe_mes_v11_0_remove_hw_queue,
	       handle_mes_remove_exit)

SEC("kprobe/mes_v12_0_remove_hw_queue")
int args_kprobe_mes_v12_0_remove_hw_queue(struct pt_regs *ctx)
{
	return args__mes_remove_entry();
}

GPUQ_ARGS_EXIT(mes_v12_0_remove_hw_queue, args_kretprobe_mes_v12_0_remove_hw_queue,
	       handle_mes_remove_exit)

SEC("kprobe/mes_v12_1_remove_hw_queue")
int args_kprobe_mes_v12_1_remove_hw_queue(struct pt_regs *ctx)
{
	return args__mes_remove_entry();
}

GPUQ_ARGS_EXIT(mes_v12_1_remove_hw_queue, args_kretprobe_mes_v12_1_remove_hw_queue,
	       handle_mes_remove_exit)

/* ---- evict_* / restore_* ------------------------------------------------- */

/*
 * The real transition is qpd->evicted 0 -> 1 (evict) and 1 -> 0 (restore).
 * Here the counter is shadowed from the calls seen: exact for a qpd learned
 * at a create; a qpd first seen evicting counts from 0, one first seen
 * restoring from 1 (an eviction from before the agent started).
 */
static __always_inline int args__evict_entry(struct pt_regs *ctx, __u32 kind)
{
	__u64 qpd = args__arg(ctx, GPUQ_ARG_OP_QPD);
	struct args_qpd *v = bpf_map_lookup_elem(&args_qpds, &qpd);
	struct args_qpd fresh = {};
	struct evict_call c = {};
	__u32 before, after;

	if (!args__qpd(args__arg(ctx, GPUQ_ARG_OP_DQM), qpd, &c.owner, &c.gpu_id)) {
		if (!c.gpu_id)
			return 0;
		/* owner unknown: the agent counts the record as no_owner */
		fresh.gpu_id = c.gpu_id;
		fresh.evicted = kind == GPUQ_EVICTION_EVICT ? 0 : 1;
		bpf_map_update_elem(&args_qpds, &qpd, &fresh, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&args_qpds, &qpd);
		if (!v)
			return 0;
	} else if (!v) {
		return 0;
	}
	before = v->evicted;
	if (kind == GPUQ_EVICTION_EVICT)
		after = before + 1;
	else
		after = before > 1 ? before - 1 : 0;
	v->evicted = after;
	c.qpd = qpd;
	c.kind = kind;
	c.evicted_before = before;
	eviction_begin(&c);
	return 0;
}

static __always_inline int args__evict_exit(int ret)
{
	__u32 tid = current_tid();
	struct evict_call *c;
	struct args_qpd *v;

	op_exit(ret);
	c = bpf_map_lookup_elem(&evict_calls, &tid);
	if (!c)
		return 0;
	v = bpf_map_lookup_elem(&args_qpds, &c->qpd);
	/* queue_count (a struct read) is 0 here; no metric uses it */
	if (v)
		eviction_emit(c, v->evicted, 0, ret);
	bpf_map_delete_elem(&evict_calls, &tid);
	return 0;
}

#define GPUQ_ARGS_EVICT_PROGRAMS(fn, args_kprobe_prog, args_kretprobe_prog, kind)                  \
	SEC("kprobe/" #fn)                                                                         \
	int args_kprobe_prog(struct pt_regs *ctx)                                                  \
	{                                                                                          \
		return args__evict_entry(ctx, kind);                                               \
	}                                                                                          \
	GPUQ_ARGS_EXIT(fn, args_kretprobe_prog, args__evict_exit)

GPUQ_ARGS_EVICT_PROGRAMS(evict_process_queues_cpsch, args_kprobe_evict_process_queues_cpsch,
			 args_kretprobe_evict_process_queues_cpsch, GPUQ_EVICTION_EVICT)
GPUQ_ARGS_EVICT_PROGRAMS(evict_process_queues_nocpsch, args_kprobe_evict_process_queues_nocpsch,
			 args_kretprobe_evict_process_queues_nocpsch, GPUQ_EVICTION_EVICT)
GPUQ_ARGS_EVICT_PROGRAMS(restore_process_queues_cpsch, args_kprobe_restore_process_queues_cpsch,
			 args_kretprobe_restore_process_queues_cpsch, GPUQ_EVICTION_RESTORE)
GPUQ_ARGS_EVICT_PROGRAMS(restore_process_queues_nocpsch, args_kprobe_restore_process_queues_nocpsch,
			 args_kretprobe_restore_process_queues_nocpsch, GPUQ_EVICTION_RESTORE)

#endif /* GPUQ_ARGS_TIER_BPF_H */

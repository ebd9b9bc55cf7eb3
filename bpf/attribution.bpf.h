/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who a scheduler operation is for. Runlist, MES and eviction hooks run in
 * kworkers, in other processes' tasks (userptr invalidation) or under the
 * owner's ioctl, so the owner always comes from a kfd_process pointer
 * (q->process, qpd->pqm->process, p), never from current
 * (docs/kfd-probe-points.md 5.8).
 *
 *  - process_owners: kfd_process -> tgid, cgroup as seen at queue create (the
 *    owner's context); else the lead thread's cgroup.
 *  - op_slots: per thread, the dqm operation in progress (create, destroy,
 *    evict, restore, terminate, update ioctl) and its process and GPU; the
 *    runlist operations it runs inherit them.
 *  - doorbells: (gpu_id, doorbell_off) -> queue, learned at create and by
 *    add_queue_mes; MES remove names its queue only by doorbell.
 */
#ifndef GPUQ_ATTRIBUTION_BPF_H
#define GPUQ_ATTRIBUTION_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>
#include "events.bpf.h"
#include "kfd_compat.bpf.h"

struct gpuq_owner {
	__u64 process_key; /* struct kfd_process * (0: unknown) */
	__u64 cgroup_id;
	__u32 tgid;
	__u32 pad;
};

struct owner_val {
	__u64 cgroup_id;
	__u32 tgid;
	__u32 pad;
};

/* The dqm operation a thread is inside. */
struct op_slot {
	struct gpuq_owner owner;
	__u32 cause;	/* enum gpuq_runlist_cause */
	__u32 gpu_id;	/* dqm->dev->id; update ioctl: from the live-queue map */
	__u32 queue_id; /* update ioctl: the queue it changes; else 0 */
	__u32 pad;
};

struct doorbell_key {
	__u32 gpu_id;
	__u32 doorbell_off;
};

struct doorbell_val {
	__u64 process_key;
	__u32 queue_id;
	__u32 pad;
};

/* @brief kfd_process -> owner as seen at queue create (LRU: keys are never deleted) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct owner_val);
} process_owners SEC(".maps");

/* @brief thread id -> dqm operation in progress */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct op_slot);
} op_slots SEC(".maps");

/* @brief (gpu_id, doorbell_off) -> queue, for MES remove */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct doorbell_key);
	__type(value, struct doorbell_val);
} doorbells SEC(".maps");

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* Called where current is the owner (queue create). */
static __always_inline void remember_owner(__u64 process_key, __u32 tgid, __u64 cgroup_id)
{
	struct owner_val v = { .cgroup_id = cgroup_id, .tgid = tgid };

	bpf_map_update_elem(&process_owners, &process_key, &v, BPF_ANY);
}

/*
 * The owner of p. The cached cgroup is used only while the lead thread's tgid
 * still matches: a kfd_process freed and reallocated at the same address
 * belongs to another process.
 */
static __always_inline void owner_of(struct kfd_process *p, struct gpuq_owner *o)
{
	struct task_struct *lead;
	struct owner_val *cached;

	o->process_key = (__u64)p;
	if (!p)
		return;
	lead = BPF_CORE_READ(p, lead_thread);
	o->tgid = BPF_CORE_READ(lead, tgid);
	cached = bpf_map_lookup_elem(&process_owners, &o->process_key);
	if (cached && cached->tgid == o->tgid)
		o->cgroup_id = cached->cgroup_id;
	else
		o->cgroup_id = kfd__task_cgroup_id(lead);
}

static __always_inline void learn_doorbell(__u32 gpu_id, __u32 doorbell_off, __u64 process_key,
					   __u32 queue_id)
{
	struct doorbell_key k = { .gpu_id = gpu_id, .doorbell_off = doorbell_off };
	struct doorbell_val v = { .process_key = process_key, .queue_id = queue_id };

	if (bpf_map_update_elem(&doorbells, &k, &v, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

/* Forgets a freed queue's doorbell, unless another queue has taken it since. */
static __always_inline void forget_doorbell(__u32 gpu_id, __u32 doorbell_off, __u64 process_key,
					    __u32 queue_id)
{
	struct doorbell_key k = { .gpu_id = gpu_id, .doorbell_off = doorbell_off };
	struct doorbell_val *v = bpf_map_lookup_elem(&doorbells, &k);

	if (v && v->process_key == process_key && v->queue_id == queue_id)
		bpf_map_delete_elem(&doorbells, &k);
}

static __always_inline void op_set(__u32 cause, __u32 gpu_id, __u32 queue_id,
				   const struct gpuq_owner *owner)
{
	struct op_slot s = {
		.owner = *owner, .cause = cause, .gpu_id = gpu_id, .queue_id = queue_id
	};
	__u32 tid = current_tid();

	if (bpf_map_update_elem(&op_slots, &tid, &s, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

/* Enters a dqm operation on qpd's process. */
static __always_inline int op_enter(__u32 cause, struct device_queue_manager *dqm,
				    struct qcm_process_device *qpd)
{
	struct gpuq_owner owner = {};

	if (!kfd__sched_types_present())
		return 0;
	owner_of(BPF_CORE_READ(qpd, pqm, process), &owner);
	op_set(cause, kfd__dqm_gpu_id(dqm), 0, &owner);
	return 0;
}

/* Leaves it (at the operation's return; `ret` unused). */
static __always_inline int op_exit(int ret)
{
	__u32 tid = current_tid();

	bpf_map_delete_elem(&op_slots, &tid);
	return 0;
}

/*
 * fexit and kretprobe programs of a hook whose exit only needs the return
 * value: bpf_get_func_ret() (5.17) instead of a declared argument list, whose
 * length differs between kernels (unmap_queues_cpsch gained grace_period).
 *
 * These macros take each program's name spelled out, not pasted from fn, so
 * that grep finds the programs agent/loader/hooks.cc names; the unit tier
 * checks each name's section against its hook (HooksTest).
 */
#define GPUQ_EXIT_PROGRAMS(fn, fexit_prog, kretprobe_prog, handler)                                \
	SEC("fexit/" #fn)                                                                          \
	int fexit_prog(__u64 *ctx)                                                                 \
	{                                                                                          \
		__u64 ret = 0;                                                                     \
                                                                                                   \
		bpf_get_func_ret(ctx, &ret);                                                       \
		return handler((int)ret);                                                          \
	}                                                                                          \
	SEC("kretprobe/" #fn)                                                                      \
	int BPF_KRETPROBE(kretprobe_prog, long ret)                                                \
	{                                                                                          \
		return handler((int)ret);                                                          \
	}

/* The args-kprobe tier's kretprobe of fn (bpf/args_tier.bpf.h). */
#define GPUQ_ARGS_EXIT(fn, args_kretprobe_prog, handler)                                           \
	SEC("kretprobe/" #fn)                                                                      \
	int BPF_KRETPROBE(args_kretprobe_prog, long ret)                                           \
	{                                                                                          \
		return handler((int)ret);                                                          \
	}

/*
 * The four programs of a dqm op taking (dqm, qpd): fentry and kprobe entry
 * twins calling enter(arg, dqm, qpd), and the exit twins above.
 */
#define GPUQ_DQM_QPD_PROGRAMS(fn, fentry_prog, kprobe_prog, fexit_prog, kretprobe_prog, enter,     \
			      arg, exit_handler)                                                   \
	SEC("fentry/" #fn)                                                                         \
	int BPF_PROG(fentry_prog, struct device_queue_manager *dqm,                                \
		     struct qcm_process_device *qpd)                                               \
	{                                                                                          \
		return enter(arg, dqm, qpd);                                                       \
	}                                                                                          \
	SEC("kprobe/" #fn)                                                                         \
	int BPF_KPROBE(kprobe_prog, struct device_queue_manager *dqm,                              \
		       struct qcm_process_device *qpd)                                             \
	{                                                                                          \
		return enter(arg, dqm, qpd);                                                       \
	}                                                                                          \
	GPUQ_EXIT_PROGRAMS(fn, fexit_prog, kretprobe_prog, exit_handler)

#endif /* GPUQ_ATTRIBUTION_BPF_H */

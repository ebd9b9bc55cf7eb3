/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * amdkfd types as the BPF side sees them, and one accessor per layout change.
 *
 * amdkfd's structs live in amdgpu's module BTF, not in vmlinux. The
 * definitions below hold only the fields gpuq reads; CO-RE relocates each by
 * name against whatever kernel runs (checked on Debian 6.1.192 and 6.12.117,
 * offsets in docs/kfd-probe-points.md, Appendix A). Rules:
 *  - Every read of an amdgpu type sits behind kfd__types_present(), so the
 *    programs still load on a kernel without amdgpu (relocations that cannot
 *    be resolved are poisoned by libbpf and the verifier drops the dead
 *    branch).
 *  - Enum-typed kernel fields are declared with an enum of the same name:
 *    libbpf refuses to relocate an enum field read through an integer.
 *  - None of these names may exist in vmlinux BTF: libbpf looks there first
 *    and only falls back to module BTF when vmlinux has no candidate.
 */
#ifndef GPUQ_KFD_COMPAT_BPF_H
#define GPUQ_KFD_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>
#include <bpf/bpf_core_read.h>

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/*
 * kfd_priv.h: enum kfd_queue_type / kfd_queue_format. The values below are
 * placeholders: every value gpuq compares with is read from the running
 * kernel's BTF (kfd__queue_type), because they changed: "drm/amdkfd: remove
 * DIQ" dropped KFD_QUEUE_TYPE_DIQ between 6.18 and 7.2 (Debian 6.18.15's BTF:
 * DIQ 3, SDMA_XGMI 4, SDMA_BY_ENG_ID 5; 7.2.13's: SDMA_XGMI 3,
 * SDMA_BY_ENG_ID 4), and SDMA_BY_ENG_ID is new in 6.12.
 */
enum kfd_queue_type {
	KFD_QUEUE_TYPE_COMPUTE,
	KFD_QUEUE_TYPE_SDMA,
	KFD_QUEUE_TYPE_HIQ,
	KFD_QUEUE_TYPE_DIQ,
	KFD_QUEUE_TYPE_SDMA_XGMI,
	KFD_QUEUE_TYPE_SDMA_BY_ENG_ID,
};
enum kfd_queue_format { KFD_QUEUE_FORMAT_PM4, KFD_QUEUE_FORMAT_AQL };

struct queue_properties {
	enum kfd_queue_type type;
	enum kfd_queue_format format;
	unsigned int queue_id;
	__u64 queue_address;
	__u64 queue_size;
	__u32 priority;
	__u32 queue_percent;
	/*
	 * uint32_t __user * on 6.1, void __user * since the 64-bit wptr
	 * rework; a local pointer matches either (pointers are compatible).
	 */
	void *read_ptr;
	void *write_ptr;
	/* dword index of the queue's doorbell in the BAR (MES names queues by it) */
	__u32 doorbell_off;
};

struct kfd_process {
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
	/* 7.2+: secondary contexts (AMDKFD_IOC_CREATE_PROCESS) */
	__u16 context_id;
	/* the process's XNACK mode (AMDKFD_IOC_SET_XNACK_MODE; 5.13+) */
	bool xnack_enabled;
};

/* kfd_priv.h: the context_id of the process /dev/kfd's open() creates */
#define KFD_CONTEXT_ID_PRIMARY 0xFFFF

struct queue {
	struct queue_properties properties;
	struct kfd_process *process;
	/* struct kfd_dev * before 6.5, struct kfd_node * since: see below */
	void *device;
};

/* The per-GPU queue scheduler; `dev` has the same kfd_dev/kfd_node split. */
/* kfd_packet_manager.c: set by pm_create_runlist_ib for the runlist it built */
struct packet_manager {
	bool is_over_subscription;
};

struct device_queue_manager {
	void *dev; /* struct kfd_dev * before 6.5, struct kfd_node * since */
	struct packet_manager packet_mgr;
	/* the registered processes: struct device_process_node, by .list */
	struct list_head queues;
	unsigned int processes_count;
	unsigned int active_queue_count;
	unsigned int active_cp_queue_count;
	unsigned int gws_queue_count;
};

/* DECLARE_BITMAP(cp_queue_bitmap, KGD_MAX_QUEUES): 128 bits since 4.x */
struct kgd2kfd_shared_resources {
	unsigned long cp_queue_bitmap[2];
};

struct process_queue_manager {
	struct kfd_process *process;
};

/* One process's state on one GPU (kfd_process_device.qpd). */
struct qcm_process_device {
	struct device_queue_manager *dqm;
	struct process_queue_manager *pqm;
	unsigned int queue_count;
	unsigned int evicted; /* eviction nesting count: 0 = queues on the GPU */
};

/* kfd_priv.h: one entry of dqm->queues per process registered on the GPU */
struct device_process_node {
	struct qcm_process_device *qpd;
	struct list_head list;
};

/*
 * amdgpu_gmc.h: the GPU asks KFD to chain (time-slice) a runlist that mixes
 * XNACK modes (between 6.12 and 6.16: not in Debian's 6.12.117, in 6.16.12 on; GC 9.4.3 with MEC
 * firmware 184+, GC 9.5.0 with 23+): AMDGPU_GMC_XNACK_FLAG_CHAIN.
 */
#define KFD__XNACK_FLAG_CHAIN (1u << 0)
struct amdgpu_gmc {
	__u32 xnack_flags;
};
struct amdgpu_device {
	struct amdgpu_gmc gmc;
};

/* amdgpu_mes.h: what remove_queue_mes() hands mes_v1x_0_remove_hw_queue() */
struct mes_remove_queue_input {
	__u32 doorbell_offset; /* = queue_properties.doorbell_off */
};

/*
 * "drm/amdkfd: Introduce kfd_node struct (v5)" (multi-partition support,
 * merged for v6.5) split struct kfd_dev into a per-partition struct kfd_node;
 * queue->device became a kfd_node and the gpu_id moved with it (kfd_dev.id at
 * +96 on 6.1, kfd_node.id at +36 on 6.12). kfd_dev still exists after the
 * split, so test for kfd_node first.
 */
/* Since 6.5 the device-wide resources moved to the kfd_dev a node points to. */
struct kfd_dev___v6_5 {
	struct kgd2kfd_shared_resources shared_resources;
};
struct kfd_node___v6_5 {
	__u32 id;
	unsigned int max_proc_per_quantum;
	struct kfd_dev___v6_5 *kfd;
	struct amdgpu_device *adev;
};
struct kfd_dev___v6_1 {
	__u32 id;
	unsigned int max_proc_per_quantum;
	struct kgd2kfd_shared_resources shared_resources;
};

#pragma clang attribute pop

/* True when the running kernel's BTF describes amdkfd's queue structs. */
static __always_inline bool kfd__types_present(void)
{
	return bpf_core_type_exists(struct queue) && bpf_core_type_exists(struct kfd_process);
}

/*
 * True when the BTF also describes the queue scheduler structs the runlist,
 * MES and eviction hooks read (all of amdgpu's since 4.x).
 */
static __always_inline bool kfd__sched_types_present(void)
{
	return kfd__types_present() && bpf_core_type_exists(struct device_queue_manager) &&
	       bpf_core_type_exists(struct qcm_process_device) &&
	       bpf_core_type_exists(struct process_queue_manager);
}

/*
 * A kernel enum kfd_queue_type value as gpuq's enum gpuq_queue_type, by the
 * enumerator names of the running kernel's BTF; GPUQ_QUEUE_UNKNOWN for a
 * value this kernel's enum has no name gpuq knows for.
 */
static __always_inline __u32 kfd__queue_type(__u32 raw)
{
#define KFD__QUEUE_TYPE(name, gpuq)                                                                \
	if (bpf_core_enum_value_exists(enum kfd_queue_type, name) &&                               \
	    raw == bpf_core_enum_value(enum kfd_queue_type, name))                                 \
		return gpuq;
	KFD__QUEUE_TYPE(KFD_QUEUE_TYPE_COMPUTE, GPUQ_QUEUE_COMPUTE)
	KFD__QUEUE_TYPE(KFD_QUEUE_TYPE_SDMA, GPUQ_QUEUE_SDMA)
	KFD__QUEUE_TYPE(KFD_QUEUE_TYPE_HIQ, GPUQ_QUEUE_HIQ)
	KFD__QUEUE_TYPE(KFD_QUEUE_TYPE_DIQ, GPUQ_QUEUE_DIQ)
	KFD__QUEUE_TYPE(KFD_QUEUE_TYPE_SDMA_XGMI, GPUQ_QUEUE_SDMA_XGMI)
	KFD__QUEUE_TYPE(KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, GPUQ_QUEUE_SDMA_BY_ENG_ID)
#undef KFD__QUEUE_TYPE
	return GPUQ_QUEUE_UNKNOWN;
}

/* A kernel enum kfd_queue_format value as enum gpuq_queue_format. */
static __always_inline __u32 kfd__queue_format(__u32 raw)
{
	if (bpf_core_enum_value_exists(enum kfd_queue_format, KFD_QUEUE_FORMAT_AQL) &&
	    raw == bpf_core_enum_value(enum kfd_queue_format, KFD_QUEUE_FORMAT_AQL))
		return GPUQ_QUEUE_FORMAT_AQL;
	return GPUQ_QUEUE_FORMAT_PM4;
}

/*
 * The limits pm_calc_rlib_size holds a runlist to (6.1 and 6.12 sources):
 * max(1, dev->max_proc_per_quantum) processes (hws_max_conc_proc, bounded by
 * the VMIDs KFD owns) and get_cp_queues_num(dqm) compute queues, the bits
 * of the CP queue bitmap KFD owns. 0 when neither layout matches.
 */
static __always_inline __u32 kfd__popcount_bitmap(const unsigned long *bm)
{
	return __builtin_popcountll(bm[0]) + __builtin_popcountll(bm[1]);
}

static __always_inline void kfd__runlist_limits(void *dev, __u32 *processes, __u32 *cp_queues)
{
	unsigned long bm[2] = {};

	*processes = 0;
	*cp_queues = 0;
	if (bpf_core_type_exists(struct kfd_node___v6_5)) {
		struct kfd_node___v6_5 *node = dev;
		struct kfd_dev___v6_5 *kfd = BPF_CORE_READ(node, kfd);

		if (bpf_core_field_exists(node->max_proc_per_quantum))
			*processes = BPF_CORE_READ(node, max_proc_per_quantum);
		if (!kfd || bpf_core_read(&bm, sizeof(bm), &kfd->shared_resources.cp_queue_bitmap))
			return;
	} else if (bpf_core_type_exists(struct kfd_dev___v6_1)) {
		struct kfd_dev___v6_1 *d = dev;

		if (bpf_core_field_exists(d->max_proc_per_quantum))
			*processes = BPF_CORE_READ(d, max_proc_per_quantum);
		if (bpf_core_read(&bm, sizeof(bm), &d->shared_resources.cp_queue_bitmap))
			return;
	} else {
		return;
	}
	if (*processes < 1)
		*processes = 1;
	*cp_queues = kfd__popcount_bitmap(bm);
}

/*
 * The processes pm_create_runlist_ib looks at for an XNACK conflict: it
 * walks all of dqm->queues; beyond this many the walk says no conflict.
 */
#define KFD__RUNLIST_PROCESSES_MAX 64

/*
 * pm_create_runlist_ib's XNACK test (kfd_packet_manager.c, with
 * OVER_SUBSCRIPTION_XNACK_CONFLICT, 6.16+ in Debian's kernels): on a GPU that chains on it
 * (adev->gmc.xnack_flags & AMDGPU_GMC_XNACK_FLAG_CHAIN), processes of the
 * runlist (dqm->queues) with different XNACK modes oversubscribe it. Read
 * at the map's return under the dqm lock. False where the kernel has no
 * such test (no xnack_flags: 6.12 and older, every kfd_dev-shaped kernel),
 * on a GPU that does not chain, and where a read fails.
 */
static __always_inline bool kfd__xnack_conflict(struct device_queue_manager *dqm)
{
	struct kfd_node___v6_5 *node;
	struct amdgpu_device *adev;
	struct list_head *head, *pos;
	__u32 flags;
	int first = -1, i;

	if (!bpf_core_type_exists(struct kfd_node___v6_5) ||
	    !bpf_core_field_exists(struct amdgpu_gmc, xnack_flags) ||
	    !bpf_core_field_exists(struct kfd_process, xnack_enabled) ||
	    !bpf_core_type_exists(struct device_process_node))
		return false;
	node = BPF_CORE_READ(dqm, dev);
	adev = node ? BPF_CORE_READ(node, adev) : NULL;
	if (!adev || bpf_core_read(&flags, sizeof(flags), &adev->gmc.xnack_flags) ||
	    !(flags & KFD__XNACK_FLAG_CHAIN))
		return false;
	head = &dqm->queues;
	if (bpf_core_read(&pos, sizeof(pos), &head->next))
		return false;
	for (i = 0; i < KFD__RUNLIST_PROCESSES_MAX && pos && pos != head; i++) {
		struct device_process_node *n =
		    (void *)((char *)pos - bpf_core_field_offset(struct device_process_node, list));
		struct kfd_process *p = BPF_CORE_READ(n, qpd, pqm, process);
		bool xnack;

		if (!p || bpf_core_read(&xnack, sizeof(xnack), &p->xnack_enabled))
			return false;
		if (first < 0)
			first = xnack;
		else if (xnack != first)
			return true;
		if (bpf_core_read(&pos, sizeof(pos), &n->list.next))
			return false;
	}
	return false;
}

/* gpu_id of a queue->device or dqm->dev (0 when neither layout matches). */
static __always_inline __u32 kfd__dev_gpu_id(void *dev)
{
	if (bpf_core_type_exists(struct kfd_node___v6_5))
		return BPF_CORE_READ((struct kfd_node___v6_5 *)dev, id);
	if (bpf_core_type_exists(struct kfd_dev___v6_1))
		return BPF_CORE_READ((struct kfd_dev___v6_1 *)dev, id);
	return 0;
}

/* gpu_id of the device a queue lives on. */
static __always_inline __u32 kfd__queue_gpu_id(struct queue *q)
{
	return kfd__dev_gpu_id(BPF_CORE_READ(q, device));
}

/* gpu_id of the device a queue scheduler runs. */
static __always_inline __u32 kfd__dqm_gpu_id(struct device_queue_manager *dqm)
{
	return kfd__dev_gpu_id(BPF_CORE_READ(dqm, dev));
}

/* The kfd_process that embeds an mmu_notifier (container_of by CO-RE offset). */
static __always_inline struct kfd_process *kfd__process_of_notifier(struct mmu_notifier *mn)
{
	return (struct kfd_process *)((char *)mn -
				      bpf_core_field_offset(struct kfd_process, mmu_notifier));
}

/*
 * cgroup v2 id of a task: task->cgroups->dfl_cgrp->kn->id, the same value
 * bpf_get_current_cgroup_id() returns for current. Used where current is not
 * the owner (exit teardown runs in a kworker). kernfs_node.id is a u64 since
 * v5.5 ("kernfs: convert kernfs_node->id from union kernfs_node_id to u64").
 */
static __always_inline __u64 kfd__task_cgroup_id(struct task_struct *task)
{
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

#endif /* GPUQ_KFD_COMPAT_BPF_H */

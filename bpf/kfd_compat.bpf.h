/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * amdkfd types as the BPF side sees them, and one accessor per layout change.
 *
 * amdkfd's structs live in amdgpu's module BTF, not in vmlinux. The
 * definitions below hold only the fields gpuq reads; CO-RE relocates each by
 * name against whatever kernel runs (checked on Debian 6.1.192 and 6.12.117,
 * offsets in shared/design/kfd-probe-points.md, Appendix A). Rules:
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
#include <bpf/bpf_core_read.h>

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

/* kfd_priv.h: enum kfd_queue_type / kfd_queue_format (one value suffices) */
enum kfd_queue_type { KFD_QUEUE_TYPE_COMPUTE___gpuq };
enum kfd_queue_format { KFD_QUEUE_FORMAT_PM4___gpuq };

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
};

struct kfd_process {
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
};

struct queue {
	struct queue_properties properties;
	struct kfd_process *process;
	/* struct kfd_dev * before 6.5, struct kfd_node * since: see below */
	void *device;
};

/*
 * "drm/amdkfd: Introduce kfd_node struct (v5)" (multi-partition support,
 * merged for v6.5) split struct kfd_dev into a per-partition struct kfd_node;
 * queue->device became a kfd_node and the gpu_id moved with it (kfd_dev.id at
 * +96 on 6.1, kfd_node.id at +36 on 6.12). kfd_dev still exists after the
 * split, so test for kfd_node first.
 */
struct kfd_node___v6_5 {
	__u32 id;
};
struct kfd_dev___v6_1 {
	__u32 id;
};

#pragma clang attribute pop

/* True when the running kernel's BTF describes amdkfd's queue structs. */
static __always_inline bool kfd__types_present(void)
{
	return bpf_core_type_exists(struct queue) && bpf_core_type_exists(struct kfd_process);
}

/* gpu_id of the device a queue lives on (0 when neither layout matches). */
static __always_inline __u32 kfd__queue_gpu_id(struct queue *q)
{
	void *dev = BPF_CORE_READ(q, device);

	if (bpf_core_type_exists(struct kfd_node___v6_5))
		return BPF_CORE_READ((struct kfd_node___v6_5 *)dev, id);
	if (bpf_core_type_exists(struct kfd_dev___v6_1))
		return BPF_CORE_READ((struct kfd_dev___v6_1 *)dev, id);
	return 0;
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

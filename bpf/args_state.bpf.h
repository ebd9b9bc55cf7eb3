/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the args-kprobe tier (args_tier.bpf.h) learns on the create path the
 * BTF hooks share (queue_records.bpf.h, gpuq.bpf.c's create ioctl): a
 * process by its mm, for the exit notifier, and a queue by its struct queue
 * pointer, for its destroy. Both only when the agent plans that tier.
 */
#ifndef GPUQ_ARGS_STATE_BPF_H
#define GPUQ_ARGS_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>
#include "attribution.bpf.h"
#include "events.bpf.h"
#include "live_queues.bpf.h"

/* Set by the agent when it plans the args-kprobe tier (args_tier.bpf.h). */
const volatile bool args_tier = false;

/* A queue created while the agent ran, by its struct queue pointer. */
struct args_queue {
	struct live_key key;
	struct live_val val;
};

/* A KFD process by its mm, for the exit notifier (mn, mm). */
struct args_mm {
	__u64 process_key;
	char comm[GPUQ_COMM_LEN];
};

/* @brief args tier: struct queue * -> queue identity (created while we ran) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct args_queue);
} args_queues SEC(".maps");

/* @brief args tier: mm_struct * -> kfd_process, for process_exit */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct args_mm);
} args_mms SEC(".maps");

/* @brief args tier: secondary kfd_process (7.2+) -> 1, from AMDKFD_IOC_CREATE_PROCESS's return */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} args_contexts SEC(".maps");

/*
 * Called at the create ioctl's entry (current is the owner of p): its mm and
 * owner, so its exit is seen and attributed even if the create fails.
 */
static __always_inline void args__learn_mm(__u64 p)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct args_mm v = { .process_key = p };
	__u64 mm = (__u64)BPF_CORE_READ(task, mm);

	remember_owner(p, current_tgid(), bpf_get_current_cgroup_id());
	/* a secondary context shares the mm but not its exit notifier */
	if (!mm || bpf_map_lookup_elem(&args_contexts, &p))
		return;
	bpf_get_current_comm(v.comm, sizeof(v.comm));
	bpf_map_update_elem(&args_mms, &mm, &v, BPF_ANY);
}

/* Called at the create ioctl's successful return: q is now that queue. */
static __always_inline void args__learn_queue(__u64 q, struct live_key *key, struct live_val *val)
{
	struct args_queue v = { .key = *key, .val = *val };

	if (!q)
		return;
	if (bpf_map_update_elem(&args_queues, &q, &v, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

#endif /* GPUQ_ARGS_STATE_BPF_H */

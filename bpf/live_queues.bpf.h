/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live-queue table: every user queue created while the agent ran, by
 * (kfd_process, queue id), with what its destroy needs (it may run in a
 * kworker), and the create ioctls in flight. Written by every probe tier's
 * create path (queue_records.bpf.h), read by the destroys, the exit read
 * (exit_read.bpf.h) and the records about a live queue.
 */
#ifndef GPUQ_LIVE_QUEUES_BPF_H
#define GPUQ_LIVE_QUEUES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>
#include "events.bpf.h"

/* Identity of a live user queue: KFD queue ids are unique per process. */
struct live_key {
	__u64 process_key; /* struct kfd_process * */
	__u32 queue_id;
	__u32 pad;
};

/* What uninit_queue needs, cached at create: it may run in a kworker. */
struct live_val {
	__u64 cgroup_id;
	__u32 tgid;
	__u32 gpu_id;
	__u32 queue_type;
	__u32 flags;		/* LIVE_F_* */
	__u64 write_ptr;	/* &amd_queue_t.write_dispatch_id of a ROCr queue, else 0 */
	__u64 exit_write_index; /* LIVE_F_EXIT_INDEX: read as its owner exited */
};

/* exit_write_index holds the write index read when the owner exited (exit_read.bpf.h) */
#define LIVE_F_EXIT_INDEX (1u << 0)

/* Arguments of an in-flight create ioctl, from entry to exit. */
struct create_call {
	__u64 process_key;
	__u64 args; /* kernel copy of struct kfd_ioctl_create_queue_args */
	__u64 q;    /* args tier: the struct queue * kfd_procfs_add_queue saw */
};

/* @brief user queues created while the agent ran: live_key -> live_val */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct live_key);
	__type(value, struct live_val);
} live_queues SEC(".maps");

/* @brief kfd_process pointers whose mm is gone: their destroys are exit teardown */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} exiting SEC(".maps");

/* @brief create ioctls in flight, by thread id */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct create_call);
} create_calls SEC(".maps");

static __always_inline void track_queue(struct live_key *key, struct live_val *val)
{
	if (bpf_map_update_elem(&live_queues, key, val, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

#endif /* GPUQ_LIVE_QUEUES_BPF_H */

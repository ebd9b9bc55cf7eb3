/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The exit read. A process that exits without destroying its ROCr queues
 * (a job that ends, is killed or _exit()s) leaves the packets it wrote after
 * the sampler's last read in memory that goes with it: amdkfd tears its
 * queues down only once the mm is gone (kfd_process_notifier_release from
 * exit_mmap, the destroys in a kworker), where no user read works. So the
 * last thread of such a process reads every live queue's write index while
 * its memory is still mapped, and the teardown's destroy record carries it
 * (submit_destroy, GPUQ_DESTROY_F_WRITE_INDEX).
 *
 * Function tiers: exit_mm_release(tsk, mm) (kernel/fork.c, global since
 * v5.5, "exit/exec: Seperate mm_release()"), which exit_mm() calls with
 * current->mm still set, after do_exit() decremented signal->live: 0 there
 * is the group's last thread. It reads only vmlinux types, so the same body
 * runs on fentry and on kprobes, with or without amdgpu BTF.
 * Tracepoint tier: sys_enter of exit_group, and of exit by the last thread
 * (tracepoint_tier.bpf.h); a process killed by a signal is not read there.
 *
 */
#ifndef GPUQ_EXIT_READ_BPF_H
#define GPUQ_EXIT_READ_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.bpf.h"
#include "live_queues.bpf.h"

/* @brief tgids that created ROCr queues while we ran: whose exit to read */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} exit_readers SEC(".maps");

static __always_inline void exit_read_learn(__u32 tgid)
{
	__u8 one = 1;

	bpf_map_update_elem(&exit_readers, &tgid, &one, BPF_ANY);
}

/* One live queue of *tgid: its write index now (bpf_for_each_map_elem callback). */
static long exit_read_queue(struct bpf_map *map, struct live_key *key, struct live_val *val,
			    __u32 *tgid)
{
	if (val->tgid != *tgid || !val->write_ptr)
		return 0;
	if (!bpf_probe_read_user(&val->exit_write_index, sizeof(val->exit_write_index),
				 (void *)val->write_ptr))
		val->flags |= LIVE_F_EXIT_INDEX;
	return 0;
}

/* current is its process's last thread, its memory still mapped. */
static __always_inline void exit_read_current(void)
{
	__u32 tgid = current_tgid();

	/* every thread exit of the host gets here: one lookup for the others */
	if (!bpf_map_lookup_elem(&exit_readers, &tgid))
		return;
	bpf_map_delete_elem(&exit_readers, &tgid);
	bpf_for_each_map_elem(&live_queues, exit_read_queue, &tgid, 0);
}

static __always_inline int handle_exit_mm_release(struct task_struct *tsk)
{
	if (BPF_CORE_READ(tsk, signal, live.counter) != 0)
		return 0; /* other threads still run: they may write more */
	exit_read_current();
	return 0;
}

SEC("fentry/exit_mm_release")
int BPF_PROG(fentry_exit_mm_release, struct task_struct *tsk, struct mm_struct *mm)
{
	return handle_exit_mm_release(tsk);
}

SEC("kprobe/exit_mm_release")
int BPF_KPROBE(kprobe_exit_mm_release, struct task_struct *tsk, struct mm_struct *mm)
{
	return handle_exit_mm_release(tsk);
}

#endif /* GPUQ_EXIT_READ_BPF_H */

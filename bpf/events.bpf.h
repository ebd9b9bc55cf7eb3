/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How the kernel side hands records to the agent: the `events` ring buffer,
 * the per-reason `drops` counters, and the one way to reserve a record.
 * Shared by gpuq.bpf.c and the host tests' probe (tests/bpf), so the
 * emission path the tests drive on a real kernel is the production one.
 */
#ifndef GPUQ_EVENTS_BPF_H
#define GPUQ_EVENTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>

/* @brief lifecycle events for the agent (struct gpuq_*_event) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 2 * 1024 * 1024);
} events SEC(".maps");

/* @brief events lost in the kernel, indexed by enum gpuq_drop_reason */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUQ_DROP__MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	/*
	 * Atomic even on a per-CPU slot: fentry programs run with
	 * migration, not preemption, disabled (__bpf_prog_enter_recur), and
	 * so do tracepoint programs in Debian's 7.x (__bpf_trace_run under
	 * rcu_read_lock_dont_migrate; srcu-fast and faultable tracepoints).
	 * On a preemptible kernel (Debian's boot lazy from 6.16) another
	 * program preempting this one on the same CPU may count into the
	 * same slot between its load and its store.
	 */
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void *reserve_event(__u64 size, __u16 type)
{
	struct gpuq_event_header *hdr = bpf_ringbuf_reserve(&events, size, 0);

	if (!hdr) {
		count_drop(GPUQ_DROP_RINGBUF_FULL);
		return NULL;
	}
	/* ring memory is not zeroed; every byte of a record is defined */
	__builtin_memset(hdr, 0, size);
	hdr->type = type;
	hdr->size = size;
	hdr->ts_ns = bpf_ktime_get_ns();
	return hdr;
}

static __always_inline __u32 current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif /* GPUQ_EVENTS_BPF_H */

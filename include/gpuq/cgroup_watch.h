/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What bpf/cgroup_watch.bpf.c hands the agent: one record per cgroup v2
 * directory created or removed, in its own `cgroup_events` ring buffer (never
 * the `events` ring, so a host creating many cgroups cannot crowd out queue
 * events). Not an event type of abi.h and never written into captures: a
 * capture already carries the path of every cgroup its events name
 * (GPUQ_EV_CGROUP_PATH), which is what the agent derives from these records.
 * Same rules as abi.h (fixed-width types, explicit padding, no pointers, the
 * layout pinned at compile time below).
 */
#ifndef GPUQ_CGROUP_WATCH_H
#define GPUQ_CGROUP_WATCH_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include <gpuq/abi_assert.h>

/* The kernel's own buffer for the path of a cgroup tracepoint
 * (TRACE_CGROUP_PATH_LEN in kernel/cgroup/cgroup-internal.h). */
#define GPUQ_CGROUP_WATCH_PATH_MAX 1024

enum gpuq_cgroup_watch_kind {
	GPUQ_CGROUP_MKDIR = 1,
	GPUQ_CGROUP_RMDIR = 2,
};

/* Reasons a cgroup record was lost; indexes of `cgroup_drops`. */
enum gpuq_cgroup_watch_drop {
	GPUQ_CGROUP_DROP_RINGBUF_FULL = 0,
	GPUQ_CGROUP_DROP__MAX,
};

struct gpuq_cgroup_watch_record {
	__u64 cgroup_id; /* kernfs node id: the inode of the directory, what
			  * bpf_get_current_cgroup_id() returns */
	__u64 ts_ns;	 /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 kind;	 /* enum gpuq_cgroup_watch_kind */
	__u32 level;	 /* depth below the v2 root (root = 0) */
	__u32 path_len;	 /* bytes of path before its NUL */
	__u32 pad;
	char path[GPUQ_CGROUP_WATCH_PATH_MAX]; /* relative to the v2 root, "/a/b" */
};
GPUQ_ABI_OFFSET(gpuq_cgroup_watch_record, cgroup_id, 0);
GPUQ_ABI_OFFSET(gpuq_cgroup_watch_record, ts_ns, 8);
GPUQ_ABI_OFFSET(gpuq_cgroup_watch_record, kind, 16);
GPUQ_ABI_OFFSET(gpuq_cgroup_watch_record, level, 20);
GPUQ_ABI_OFFSET(gpuq_cgroup_watch_record, path_len, 24);
GPUQ_ABI_OFFSET(gpuq_cgroup_watch_record, path, 32);
GPUQ_ABI_SIZE(gpuq_cgroup_watch_record, 1056); /* 2*8 + 4*4 + 1024 */

#endif /* GPUQ_CGROUP_WATCH_H */

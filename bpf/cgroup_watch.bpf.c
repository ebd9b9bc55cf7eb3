// SPDX-License-Identifier: GPL-2.0
/*
 * gpuq cgroup watcher: every cgroup v2 directory created or removed, with its
 * id and path, so the agent can attribute a cgroup id it first sees after the
 * cgroup is gone (a container that rang doorbells for 2 s and exited).
 *
 * Raw tracepoints cgroup:cgroup_mkdir and cgroup:cgroup_rmdir, whose
 * arguments are (struct cgroup *cgrp, const char *path) on every kernel since
 * 4.x, Debian's 6.1 and 6.12 included. Why raw_tp and not the alternatives:
 *  - tp/cgroup/cgroup_mkdir (struct trace_event_raw_cgroup, CO-RE on its
 *    root/id/level/__data_loc path fields) attaches through the tracepoint's
 *    id, which libbpf reads from tracefs: a host without tracefs mounted
 *    (this project's CI machines) cannot attach it;
 *  - tp_btf/cgroup_mkdir needs BTF-typed attachment of a tracing program,
 *    which kernels that refuse fentry may refuse too;
 *  - raw_tp attaches by name (BPF_RAW_TRACEPOINT_OPEN), needs neither, and
 *    reads struct cgroup through CO-RE.
 * The kernel computes `path` (cgroup_path into a 1024-byte buffer) only while
 * a probe is attached, and the id is cgrp->kn->id: the inode number of the
 * directory, what bpf_get_current_cgroup_id() returns. Only the default (v2)
 * hierarchy, whose hierarchy_id is 0, is passed on: on hybrid hosts the v1
 * hierarchies' mkdirs are not what cgroup ids name.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <gpuq/cgroup_watch.h>

char LICENSE[] SEC("license") = "GPL";

/* @brief created and removed v2 cgroups (struct gpuq_cgroup_watch_record) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 512 * 1024);
} cgroup_events SEC(".maps");

/* @brief records lost, indexed by enum gpuq_cgroup_watch_drop */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUQ_CGROUP_DROP__MAX);
	__type(key, __u32);
	__type(value, __u64);
} cgroup_drops SEC(".maps");

static __always_inline int emit(struct cgroup *cgrp, const char *path, __u32 kind)
{
	struct gpuq_cgroup_watch_record *rec;
	long len;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != 0)
		return 0; /* a v1 hierarchy */
	rec = bpf_ringbuf_reserve(&cgroup_events, sizeof(*rec), 0);
	if (!rec) {
		__u32 reason = GPUQ_CGROUP_DROP_RINGBUF_FULL;
		__u64 *n = bpf_map_lookup_elem(&cgroup_drops, &reason);

		/* atomic: a preemptible program (events.bpf.h, count_drop) */
		if (n)
			__sync_fetch_and_add(n, 1);
		return 0;
	}
	rec->cgroup_id = BPF_CORE_READ(cgrp, kn, id);
	rec->ts_ns = bpf_ktime_get_ns();
	rec->kind = kind;
	rec->level = BPF_CORE_READ(cgrp, level);
	rec->pad = 0;
	len = bpf_probe_read_kernel_str(rec->path, sizeof(rec->path), path);
	rec->path_len = len > 0 ? len - 1 : 0;
	if (len <= 0)
		rec->path[0] = '\0';
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

SEC("raw_tp/cgroup_mkdir")
int BPF_PROG(cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	return emit(cgrp, path, GPUQ_CGROUP_MKDIR);
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	return emit(cgrp, path, GPUQ_CGROUP_RMDIR);
}

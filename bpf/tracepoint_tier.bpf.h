/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tracepoint tier, for kernels that refuse kprobes (and trampolines):
 * the raw syscall tracepoints sys_enter/sys_exit, filtered to ioctls on
 * /dev/kfd, decode the uapi args of AMDKFD_IOC_CREATE_QUEUE, DESTROY_QUEUE
 * UPDATE_QUEUE (a queue's new priority and percentage) and SET_CU_MASK (the
 * CUs it may run on; the BTF tiers also make these two the cause of runlist
 * operations, which this tier cannot see); any other KFD ioctl teaches the process, and
 * exit_group's sys_enter or its last thread's sched_process_exit, whichever runs first, ends a
 * process that issued one; exit_group (and exit by the last thread) reads its ROCr queues' last
 * write indexes first. Raw tracepoints (tp_btf) and not syscalls:sys_enter_ioctl: they need no
 * tracefs mount (often absent in a container) and have the same cost class.
 *
 * The filter runs on every syscall of the host, so it is ordered cheapest
 * first: the syscall number, then the ioctl command's type and number
 * ('K', 0x02/0x03/0x07; the size bits differ between kernels: 88 vs 96 bytes),
 * and only then the file: its char device major against /dev/kfd's, which
 * the agent reads from /proc/devices (rodata kfd_major). The major and not
 * f_op: kfd_fops is a static of amdgpu, with no stable address to compare.
 *
 * Processes are keyed by their kfd_process pointer, read as the file's
 * private_data (struct file is vmlinux's, so no amdgpu BTF is needed; amdkfd
 * sets it at open, and opens of one mm share one kfd_process). A tgid's first
 * kfd_process seen is its primary (tp_procs); another one on a file of the
 * same tgid is a secondary context (AMDKFD_IOC_CREATE_PROCESS, 7.2+: the
 * ioctl puts a new kfd_process of the same mm in that file), learned at its
 * creation's return or, if the kernel skipped that program, at its first
 * queue create: queue ids are unique per context only. A context ends when
 * its file is closed (amdkfd tears it down at the file's release: a dup'ed or
 * inherited fd that keeps the file open is not seen here) or with its
 * process. Included by gpuq.bpf.c.
 */
#ifndef GPUQ_TRACEPOINT_TIER_BPF_H
#define GPUQ_TRACEPOINT_TIER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <gpuq/abi.h>
#include <gpuq/kfd_uapi.h>
#include "attribution.bpf.h"
#include "events.bpf.h"
#include "exit_read.bpf.h"
#include "live_queues.bpf.h"
#include "queue_records.bpf.h"

/* Set by the agent from /proc/devices ("kfd"). */
const volatile __u32 kfd_major = 0;

#define GPUQ_NR_CLOSE 3 /* x86-64 */
#define GPUQ_NR_IOCTL 16
#define GPUQ_NR_EXIT 60
#define GPUQ_NR_EXIT_GROUP 231
#define GPUQ_IOC_NR(cmd) ((cmd)&0xff)
#define GPUQ_IOC_TYPE(cmd) (((cmd) >> 8) & 0xff)
#define GPUQ_MINORBITS 20 /* kernel-internal dev_t */

/* An ioctl on /dev/kfd from sys_enter to sys_exit. */
struct tp_call {
	__u64 process_key; /* the file's kfd_process */
	__u64 file;	   /* the /dev/kfd struct file */
	__u64 args;	   /* user pointer to the uapi args */
	__u32 nr;
	__u32 queue_id; /* destroy: from the args at entry */
	/*
	 * The args were read at entry. A program cannot fault a page in, so a
	 * read of user memory can fail (the helper then zeroes what it read
	 * into: queue 0 of GPU 0 if used).
	 */
	__u32 args_read;
	__u32 pad;
	struct gpuq_kfd_create_queue_args create; /* create: at entry */
};

/* @brief tracepoint tier: KFD ioctls in flight, by thread id */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct tp_call);
} tp_calls SEC(".maps");

/* @brief tracepoint tier: tgid -> primary kfd_process of processes that issued a KFD ioctl */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} tp_procs SEC(".maps");

/* @brief tracepoint tier: kfd_process of a secondary KFD context -> its owner's tgid */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u32);
} tp_contexts SEC(".maps");

/* Contexts in tp_contexts: while 0, a close() costs one load here. */
__u64 tp_contexts_live = 0;

/* The struct file of fd of current, if it is a /dev/kfd file; else 0. */
static __always_inline __u64 tp__kfd_file(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;
	__u32 rdev;

	if (fd < 0 || (__u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return 0;
	rdev = BPF_CORE_READ(file, f_inode, i_rdev);
	return kfd_major && (rdev >> GPUQ_MINORBITS) == kfd_major ? (__u64)file : 0;
}

/* Secondary contexts and process ends: defined after the helpers they use. */
static __always_inline void tp__close(int fd);
static __always_inline void tp__process_gone(__u32 tgid, struct task_struct *task);

/*
 * The KFD process of a call on `file` (its private_data), learned with its
 * owner (current): a tgid's first is its primary, whose exit
 * sched_process_exit reports; any other is a secondary context.
 */
static __always_inline __u64 tp__process(__u64 file)
{
	__u64 p = (__u64)BPF_CORE_READ((struct file *)file, private_data);
	__u32 tgid = current_tgid();
	__u64 *primary;

	if (!p)
		return 0;
	primary = bpf_map_lookup_elem(&tp_procs, &tgid);
	if (primary && *primary == p)
		return p;
	remember_owner(p, tgid, bpf_get_current_cgroup_id());
	if (!primary) {
		bpf_map_update_elem(&tp_procs, &tgid, &p, BPF_ANY);
	} else if (bpf_map_update_elem(&tp_contexts, &p, &tgid, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&tp_contexts_live, 1);
	}
	return p;
}

/*
 * A KFD create, destroy, update, set-CU-mask or create-process ioctl (regs: its syscall
 * registers, which sys_exit still has): fills c from its args. False for
 * any other ioctl.
 */
static __always_inline bool tp__kfd_call(struct pt_regs *regs, struct tp_call *c)
{
	__u32 cmd = (__u32)PT_REGS_PARM2_CORE(regs), nr = GPUQ_IOC_NR(cmd);

	if (GPUQ_IOC_TYPE(cmd) != GPUQ_KFD_IOC_TYPE ||
	    (nr != GPUQ_KFD_IOC_CREATE_QUEUE && nr != GPUQ_KFD_IOC_DESTROY_QUEUE &&
	     nr != GPUQ_KFD_IOC_UPDATE_QUEUE && nr != GPUQ_KFD_IOC_SET_CU_MASK &&
	     nr != GPUQ_KFD_IOC_CREATE_PROCESS))
		return false;
	c->file = tp__kfd_file((int)PT_REGS_PARM1_CORE(regs));
	if (!c->file)
		return false;
	c->args = PT_REGS_PARM3_CORE(regs);
	c->nr = nr;
	/* a process that creates queues: its exit ends them (failed or not) */
	c->process_key = tp__process(c->file);
	if (nr == GPUQ_KFD_IOC_CREATE_QUEUE)
		c->args_read = !bpf_probe_read_user(&c->create, sizeof(c->create), (void *)c->args);
	else if (nr == GPUQ_KFD_IOC_DESTROY_QUEUE)
		c->args_read =
		    !bpf_probe_read_user(&c->queue_id, sizeof(c->queue_id), (void *)c->args);
	return true;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tp_sys_enter, struct pt_regs *regs, long id)
{
	struct tp_call c = {};
	__u32 cmd, nr, tid;

	if (id == GPUQ_NR_CLOSE) {
		if (tp_contexts_live)
			tp__close((int)PT_REGS_PARM1_CORE(regs));
		return 0;
	}
	if (id != GPUQ_NR_IOCTL) {
		/*
		 * The exit read (exit_read.bpf.h): exit_group, or exit by the
		 * last thread, is the last moment its memory is mapped.
		 */
		if (id == GPUQ_NR_EXIT_GROUP ||
		    (id == GPUQ_NR_EXIT &&
		     BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), signal,
				   live.counter) == 1))
			exit_read_current();
		/*
		 * exit_group does not return: the process ends here already. A
		 * second chance for its end besides sched_process_exit, which
		 * the kernel may skip (a task preempted inside it: see
		 * tp_sys_enter's skipped calls); whichever runs first reports it.
		 */
		if (id == GPUQ_NR_EXIT_GROUP)
			tp__process_gone(current_tgid(),
					 (struct task_struct *)bpf_get_current_task());
		return 0;
	}
	cmd = (__u32)PT_REGS_PARM2_CORE(regs);
	nr = GPUQ_IOC_NR(cmd);
	if (GPUQ_IOC_TYPE(cmd) != GPUQ_KFD_IOC_TYPE)
		return 0;
	if (nr != GPUQ_KFD_IOC_CREATE_QUEUE && nr != GPUQ_KFD_IOC_DESTROY_QUEUE &&
	    nr != GPUQ_KFD_IOC_UPDATE_QUEUE && nr != GPUQ_KFD_IOC_SET_CU_MASK &&
	    nr != GPUQ_KFD_IOC_CREATE_PROCESS) {
		/*
		 * Any other KFD ioctl (ROCr issues several in hsa_init): learn
		 * the process once, so its exit is seen even if it never
		 * creates a queue. Known tgids stop at one lookup; the other
		 * 'K' ioctls (the console's KDGKBMODE...) at the fd check.
		 */
		__u64 file;

		tid = current_tgid();
		if (bpf_map_lookup_elem(&tp_procs, &tid))
			return 0;
		file = tp__kfd_file((int)PT_REGS_PARM1_CORE(regs));
		if (file)
			tp__process(file);
		return 0;
	}
	if (!tp__kfd_call(regs, &c))
		return 0;
	tid = current_tid();
	/*
	 * An entry left by this thread's previous KFD call: the kernel skipped
	 * that call's sys_exit program (from 7.x a tracepoint program can be
	 * preempted, and then the next task on the CPU misses it), so its
	 * record is lost: counted.
	 */
	if (bpf_map_lookup_elem(&tp_calls, &tid))
		count_drop(GPUQ_DROP_KFD_EXIT_SKIPPED);
	bpf_map_update_elem(&tp_calls, &tid, &c, BPF_ANY);
	return 0;
}

static __always_inline void tp__create_exit(struct tp_call *c, long ret)
{
	struct create_call call = { .process_key = c->process_key };
	struct gpuq_kfd_create_queue_args a = c->create;

	/*
	 * A success: the kernel copied queue_id and doorbell_offset back to the
	 * args. A failure not read at entry: its args are still the caller's
	 * (the kernel's own copy of them brought the page in).
	 */
	if ((!ret || !c->args_read) && bpf_probe_read_user(&a, sizeof(a), (void *)c->args)) {
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
		return;
	}
	if (ret)
		emit_create_failed(&call, &a, ret);
	else
		emit_ioctl_create(&call, &a);
}

static __always_inline void tp__destroy_exit(struct tp_call *c, long ret)
{
	struct live_key key = { .process_key = c->process_key, .queue_id = c->queue_id };
	struct live_val *val;
	struct live_val v;

	if (ret)
		return;
	/* not read at entry: the args are still the caller's */
	if (!c->args_read &&
	    bpf_probe_read_user(&key.queue_id, sizeof(key.queue_id), (void *)c->args)) {
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
		return;
	}
	val = bpf_map_lookup_elem(&live_queues, &key);
	if (!val)
		return; /* created before the agent started: reconciliation retires it */
	v = *val;
	bpf_map_delete_elem(&live_queues, &key);
	submit_destroy(&key, &v, 0);
}

/*
 * AMDKFD_IOC_UPDATE_QUEUE returned 0: the kernel copied the args in (their
 * page is resident) and wrote nothing back, so they are read here.
 */
static __always_inline void tp__update_exit(struct tp_call *c, long ret)
{
	struct gpuq_kfd_update_queue_args a;

	if (ret)
		return;
	if (bpf_probe_read_user(&a, sizeof(a), (void *)c->args)) {
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
		return;
	}
	emit_update(c->process_key, &a);
}

/*
 * AMDKFD_IOC_SET_CU_MASK returned 0: as for the update, the kernel copied
 * the args and the mask in and wrote nothing back, so both are read here.
 */
static __always_inline void tp__cu_mask_exit(struct tp_call *c, long ret)
{
	struct gpuq_kfd_set_cu_mask_args a;

	if (ret)
		return;
	if (bpf_probe_read_user(&a, sizeof(a), (void *)c->args)) {
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
		return;
	}
	emit_cu_mask(c->process_key, &a);
}

/* AMDKFD_IOC_CREATE_PROCESS returned 0: `file` now holds a secondary context. */
static __always_inline void tp__context_created(__u64 file)
{
	tp__process(file);
}

/* The exit record of a process or context, which marks its destroys as exit teardown. */
static __always_inline void tp__emit_exit(__u64 key, __u32 tgid, struct task_struct *task)
{
	struct gpuq_process_exit_event *e;
	struct owner_val *owner;
	__u8 one = 1;

	bpf_map_update_elem(&exiting, &key, &one, BPF_ANY);
	owner = bpf_map_lookup_elem(&process_owners, &key);
	e = reserve_event(sizeof(*e), GPUQ_EV_PROCESS_EXIT);
	if (!e)
		return;
	e->hdr.tgid = tgid;
	e->hdr.cgroup_id = owner ? owner->cgroup_id : 0;
	e->hdr.process_key = key;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(tp_sys_exit, struct pt_regs *regs, long ret)
{
	struct tp_call call = {}, *entered;
	__u32 tid;

	if (BPF_CORE_READ(regs, orig_ax) != GPUQ_NR_IOCTL)
		return 0;
	tid = current_tid();
	entered = bpf_map_lookup_elem(&tp_calls, &tid);
	if (entered) {
		call = *entered;
		bpf_map_delete_elem(&tp_calls, &tid);
		/*
		 * Another ioctl's entry: the kernel skipped the sys_exit
		 * program of the KFD call that left it (any ioctl ends here,
		 * a tty's ENOTTY one too, and must not pass for that call).
		 */
		if (call.args != PT_REGS_PARM3_CORE(regs) ||
		    call.nr != GPUQ_IOC_NR((__u32)PT_REGS_PARM2_CORE(regs))) {
			count_drop(GPUQ_DROP_KFD_EXIT_SKIPPED);
			call = (struct tp_call){};
			entered = NULL;
		}
	}
	if (!entered && !tp__kfd_call(regs, &call)) {
		/*
		 * No entry: not a KFD call, or one whose sys_enter program the
		 * kernel skipped (see tp_sys_enter). The syscall registers still
		 * hold its arguments and the kernel has written its results to
		 * the args: such a call is handled from those, as its entry
		 * would have been.
		 */
		return 0;
	}
	if (call.nr == GPUQ_KFD_IOC_CREATE_QUEUE)
		tp__create_exit(&call, ret);
	else if (call.nr == GPUQ_KFD_IOC_DESTROY_QUEUE)
		tp__destroy_exit(&call, ret);
	else if (call.nr == GPUQ_KFD_IOC_UPDATE_QUEUE)
		tp__update_exit(&call, ret);
	else if (call.nr == GPUQ_KFD_IOC_SET_CU_MASK)
		tp__cu_mask_exit(&call, ret);
	else if (!ret)
		tp__context_created(call.file);
	return 0;
}

/* Which live queues a teardown ends: one context's, or all of a tgid's. */
struct tp_teardown {
	__u64 process_key; /* 0: every queue of tgid */
	__u32 tgid;
	__u32 pad;
};

/* Destroys the live queues a teardown ends (bpf_for_each_map_elem callback). */
static long tp__destroy_of(struct bpf_map *map, struct live_key *key, struct live_val *val,
			   struct tp_teardown *t)
{
	struct live_key k = *key;
	struct live_val v = *val;

	if (t->process_key ? k.process_key != t->process_key : v.tgid != t->tgid)
		return 0;
	bpf_map_delete_elem(map, key);
	submit_destroy(&k, &v, 0);
	return 0;
}

/* Ends the contexts of a tgid whose last thread exits (bpf_for_each_map_elem callback). */
static long tp__end_context_of(struct bpf_map *map, __u64 *file, __u32 *tgid, struct tp_teardown *t)
{
	__u64 key = *file;

	if (*tgid != t->tgid)
		return 0;
	bpf_map_delete_elem(map, file);
	__sync_fetch_and_add(&tp_contexts_live, -1);
	tp__emit_exit(key, t->tgid, (struct task_struct *)bpf_get_current_task());
	return 0;
}

/* close(fd) of a secondary context's file: amdkfd tears the context down. */
static __always_inline void tp__close(int fd)
{
	struct tp_teardown t = {};
	__u64 file = tp__kfd_file(fd), p;
	__u32 *tgid;

	if (!file)
		return;
	p = (__u64)BPF_CORE_READ((struct file *)file, private_data);
	tgid = bpf_map_lookup_elem(&tp_contexts, &p);
	if (!tgid)
		return;
	t.process_key = p;
	t.tgid = *tgid;
	bpf_map_delete_elem(&tp_contexts, &p);
	__sync_fetch_and_add(&tp_contexts_live, -1);
	tp__emit_exit(p, t.tgid, (struct task_struct *)bpf_get_current_task());
	bpf_for_each_map_elem(&live_queues, tp__destroy_of, &t, 0);
}

/*
 * The end of tgid, a process that asked for KFD queues while we ran: its
 * exit record, then its contexts' and its queues' ends (amdkfd tears the
 * queues down with the mm, the contexts with the files). Once: the first of
 * exit_group's sys_enter and the last thread's sched_process_exit.
 */
static __always_inline void tp__process_gone(__u32 tgid, struct task_struct *task)
{
	__u64 *primary = bpf_map_lookup_elem(&tp_procs, &tgid);
	struct tp_teardown t = { .tgid = tgid };
	__u64 p;

	if (!primary)
		return;
	p = *primary;
	if (bpf_map_delete_elem(&tp_procs, &tgid))
		return; /* another thread of tgid got there first */
	tp__emit_exit(p, tgid, task);
	if (tp_contexts_live)
		bpf_for_each_map_elem(&tp_contexts, tp__end_context_of, &t, 0);
	bpf_for_each_map_elem(&live_queues, tp__destroy_of, &t, 0);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tp_sched_process_exit, struct task_struct *task)
{
	if (BPF_CORE_READ(task, signal, live.counter) == 0)
		tp__process_gone(BPF_CORE_READ(task, tgid), task);
	return 0;
}

#endif /* GPUQ_TRACEPOINT_TIER_BPF_H */

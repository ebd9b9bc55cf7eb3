// SPDX-License-Identifier: GPL-2.0
/*
 * gpuq kernel side: amdkfd hardware-queue lifecycle.
 *
 * Each hook has an fentry/fexit and a kprobe/kretprobe twin sharing one body;
 * the agent enables exactly one twin per hook before load
 * (agent/loader/hooks.cc). Lifecycle events go through the `events` ring
 * buffer; losses are counted per reason in `drops`.
 *
 *   queue_create   kfd_procfs_add_queue(q): every successful user queue
 *                  creation, in the creating task's context.
 *   create_ioctl   kfd_ioctl_create_queue(filep, p, data), entry and exit:
 *                  failed creates, and the create path itself when
 *                  queue_create cannot be hooked (uapi args only, no amdgpu
 *                  BTF needed).
 *   queue_destroy  uninit_queue(q): a queue struct is freed, by explicit
 *                  destroy or by exit teardown in a kworker.
 *   process_exit   kfd_process_notifier_release(mn, mm): the owner's mm is
 *                  gone; its queues are torn down later.
 *
 * queue_create also learns, in the creator's context, ROCr's amd_queue_t
 * behind the queue (rocr_queue.bpf.h), the queue's doorbell for MES and the
 * owner's cgroup for hooks that run elsewhere (attribution.bpf.h). Runlist,
 * MES and eviction hooks (all optional): runlist.bpf.h and eviction.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include <gpuq/abi.h>
#include <gpuq/kfd_uapi.h>
#include "args_state.bpf.h"
#include "attribution.bpf.h"
#include "events.bpf.h"
#include "exit_read.bpf.h"
#include "kfd_compat.bpf.h"
#include "live_queues.bpf.h"
#include "queue_records.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Read by the agent after open to refuse a skeleton of another ABI. */
const volatile __u32 gpuq_abi_version = GPUQ_ABI_VERSION;
/* Set by the agent when kfd_procfs_add_queue cannot be hooked. */
const volatile bool create_via_ioctl = false;

/* ---- queue_create ------------------------------------------------------ */

static __always_inline int handle_queue_create(struct queue *q)
{
	struct gpuq_queue_create_event *e;
	struct live_key key = {};
	struct live_val val = {};
	struct kfd_process *p;

	if (!kfd__types_present())
		return 0;

	p = BPF_CORE_READ(q, process);
	key.process_key = (__u64)p;
	key.queue_id = BPF_CORE_READ(q, properties.queue_id);
	/* ioctl context: current is the owner (kfd_ioctl checks the group leader) */
	val.cgroup_id = bpf_get_current_cgroup_id();
	val.tgid = BPF_CORE_READ(p, lead_thread, tgid);
	val.gpu_id = kfd__queue_gpu_id(q);
	val.queue_type = kfd__queue_type(BPF_CORE_READ(q, properties.type));
	learn_doorbell(val.gpu_id, BPF_CORE_READ(q, properties.doorbell_off), key.process_key,
		       key.queue_id);

	e = begin_create(&key, &val);
	if (!e)
		return 0;
	e->queue_format = kfd__queue_format(BPF_CORE_READ(q, properties.format));
	e->ring_address = BPF_CORE_READ(q, properties.queue_address);
	e->ring_size = BPF_CORE_READ(q, properties.queue_size);
	e->read_ptr = (__u64)BPF_CORE_READ(q, properties.read_ptr);
	e->write_ptr = (__u64)BPF_CORE_READ(q, properties.write_ptr);
	e->priority = BPF_CORE_READ(q, properties.priority);
	e->percentage = BPF_CORE_READ(q, properties.queue_percent);
	finish_create(&key, e);
	return 0;
}

SEC("fentry/kfd_procfs_add_queue")
int BPF_PROG(fentry_kfd_procfs_add_queue, struct queue *q)
{
	return handle_queue_create(q);
}

SEC("kprobe/kfd_procfs_add_queue")
int BPF_KPROBE(kprobe_kfd_procfs_add_queue, struct queue *q)
{
	return handle_queue_create(q);
}

/* ---- create_ioctl ------------------------------------------------------ */

static __always_inline int handle_create_ioctl_entry(void *p, void *data)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct create_call call = {
		.process_key = (__u64)p,
		.args = (__u64)data,
	};

	bpf_map_update_elem(&create_calls, &tid, &call, BPF_ANY);
	if (args_tier)
		args__learn_mm((__u64)p);
	return 0;
}

static __always_inline int handle_create_ioctl_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct gpuq_kfd_create_queue_args a = {};
	struct create_call *call;

	call = bpf_map_lookup_elem(&create_calls, &tid);
	if (!call)
		return 0;
	/* amdkfd's kernel copy of the uapi args: unread, no record is made up */
	if (bpf_probe_read_kernel(&a, sizeof(a), (void *)call->args))
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
	else if (ret)
		emit_create_failed(call, &a, ret);
	else if (create_via_ioctl)
		emit_ioctl_create(call, &a);
	bpf_map_delete_elem(&create_calls, &tid);
	return 0;
}

SEC("fentry/kfd_ioctl_create_queue")
int BPF_PROG(fentry_kfd_ioctl_create_queue, void *filep, void *p, void *data)
{
	return handle_create_ioctl_entry(p, data);
}

SEC("fexit/kfd_ioctl_create_queue")
int BPF_PROG(fexit_kfd_ioctl_create_queue, void *filep, void *p, void *data, int ret)
{
	return handle_create_ioctl_exit(ret);
}

SEC("kprobe/kfd_ioctl_create_queue")
int BPF_KPROBE(kprobe_kfd_ioctl_create_queue, void *filep, void *p, void *data)
{
	return handle_create_ioctl_entry(p, data);
}

SEC("kretprobe/kfd_ioctl_create_queue")
int BPF_KRETPROBE(kretprobe_kfd_ioctl_create_queue, int ret)
{
	return handle_create_ioctl_exit(ret);
}

/* ---- queue_destroy ----------------------------------------------------- */

static __always_inline int handle_queue_destroy(struct queue *q)
{
	struct live_key key = {};
	struct live_val val = {};
	struct live_val *cached;
	struct kfd_process *p;
	__u32 tid, flags = 0;

	if (!kfd__types_present())
		return 0;

	p = BPF_CORE_READ(q, process);
	key.process_key = (__u64)p;
	key.queue_id = BPF_CORE_READ(q, properties.queue_id);
	cached = bpf_map_lookup_elem(&live_queues, &key);
	if (cached) {
		val = *cached;
		bpf_map_delete_elem(&live_queues, &key);
	} else {
		/*
		 * Not created while we ran. Skip kernel queues (HIQ/DIQ have no
		 * process) and the cleanup of a create that failed in this
		 * thread; report the rest as untracked so the agent can retire
		 * queues it seeded from sysfs.
		 */
		if (!p)
			return 0;
		tid = (__u32)bpf_get_current_pid_tgid();
		if (bpf_map_lookup_elem(&create_calls, &tid))
			return 0;
		val.queue_type = kfd__queue_type(BPF_CORE_READ(q, properties.type));
		if (val.queue_type == GPUQ_QUEUE_HIQ || val.queue_type == GPUQ_QUEUE_DIQ)
			return 0;
		val.tgid = BPF_CORE_READ(p, lead_thread, tgid);
		val.cgroup_id = kfd__task_cgroup_id(BPF_CORE_READ(p, lead_thread));
		val.gpu_id = kfd__queue_gpu_id(q);
		flags = GPUQ_DESTROY_F_UNTRACKED;
	}

	forget_doorbell(val.gpu_id, BPF_CORE_READ(q, properties.doorbell_off), key.process_key,
			key.queue_id);
	submit_destroy(&key, &val, flags);
	return 0;
}

SEC("fentry/uninit_queue")
int BPF_PROG(fentry_uninit_queue, struct queue *q)
{
	return handle_queue_destroy(q);
}

SEC("kprobe/uninit_queue")
int BPF_KPROBE(kprobe_uninit_queue, struct queue *q)
{
	return handle_queue_destroy(q);
}

/* ---- process_exit ------------------------------------------------------ */

/* p's address space, or p itself (a secondary context), is gone: its queues go next. */
static __always_inline void emit_process_exit(struct kfd_process *p)
{
	struct gpuq_process_exit_event *e;
	struct task_struct *lead;
	__u8 one = 1;
	__u64 key = (__u64)p;

	bpf_map_update_elem(&exiting, &key, &one, BPF_ANY);
	e = reserve_event(sizeof(*e), GPUQ_EV_PROCESS_EXIT);
	if (!e)
		return;
	lead = BPF_CORE_READ(p, lead_thread);
	e->hdr.tgid = BPF_CORE_READ(lead, tgid);
	e->hdr.cgroup_id = kfd__task_cgroup_id(lead);
	e->hdr.process_key = key;
	BPF_CORE_READ_STR_INTO(&e->comm, lead, comm);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int handle_process_exit(struct mmu_notifier *mn)
{
	if (!kfd__types_present())
		return 0;
	emit_process_exit(kfd__process_of_notifier(mn));
	return 0;
}

SEC("fentry/kfd_process_notifier_release")
int BPF_PROG(fentry_kfd_process_notifier_release, struct mmu_notifier *mn, struct mm_struct *mm)
{
	return handle_process_exit(mn);
}

SEC("kprobe/kfd_process_notifier_release")
int BPF_KPROBE(kprobe_kfd_process_notifier_release, struct mmu_notifier *mn, struct mm_struct *mm)
{
	return handle_process_exit(mn);
}

/* ---- context_exit ------------------------------------------------------ */

/*
 * kfd_release(inode, filep): a /dev/kfd file's last reference is gone. If
 * it held a secondary context (AMDKFD_IOC_CREATE_PROCESS, 7.2+: context_id
 * is not KFD_CONTEXT_ID_PRIMARY), amdkfd tears that kfd_process down now
 * (kfd_process_notifier_release_internal), in the closing task: its exit,
 * before its destroys. The primary context ends with the mm instead.
 */
static __always_inline int handle_context_exit(struct file *filep)
{
	struct kfd_process *p;

	if (!kfd__types_present() || !bpf_core_field_exists(struct kfd_process, context_id))
		return 0;
	p = BPF_CORE_READ(filep, private_data);
	if (!p || BPF_CORE_READ(p, context_id) == KFD_CONTEXT_ID_PRIMARY)
		return 0;
	emit_process_exit(p);
	return 0;
}

SEC("fentry/kfd_release")
int BPF_PROG(fentry_kfd_release, struct inode *inode, struct file *filep)
{
	return handle_context_exit(filep);
}

SEC("kprobe/kfd_release")
int BPF_KPROBE(kprobe_kfd_release, struct inode *inode, struct file *filep)
{
	return handle_context_exit(filep);
}

/*
 * Runlist/MES operations and evictions, then the BTF-free bodies of
 * every hook (args-kprobe tier).
 */
#include "runlist.bpf.h"
#include "eviction.bpf.h"
#include "args_tier.bpf.h"
#include "tracepoint_tier.bpf.h"

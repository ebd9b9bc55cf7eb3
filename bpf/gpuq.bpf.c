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
#include "attribution.bpf.h"
#include "events.bpf.h"
#include "kfd_compat.bpf.h"
#include "rocr_queue.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Read by the agent after open to refuse a skeleton of another ABI. */
const volatile __u32 gpuq_abi_version = GPUQ_ABI_VERSION;
/* Set by the agent when kfd_procfs_add_queue cannot be hooked. */
const volatile bool create_via_ioctl = false;
/* Set by the agent when it plans the args-kprobe tier (args_tier.bpf.h). */
const volatile bool args_tier = false;

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

/* args_tier.bpf.h, defined after the maps they use */
static __always_inline void args__learn_mm(__u64 p);
static __always_inline void args__learn_queue(__u64 q, struct live_key *key, struct live_val *val);

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

static __always_inline __u32 queue_type_from_uapi(__u32 uapi_type)
{
	switch (uapi_type) {
	case GPUQ_KFD_IOC_QUEUE_TYPE_SDMA:
		return GPUQ_QUEUE_SDMA;
	case GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return GPUQ_QUEUE_SDMA_XGMI;
	case GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
		return GPUQ_QUEUE_SDMA_BY_ENG_ID;
	default: /* COMPUTE and COMPUTE_AQL */
		return GPUQ_QUEUE_COMPUTE;
	}
}

#include "exit_read.bpf.h"

static __always_inline void track_queue(struct live_key *key, struct live_val *val)
{
	if (bpf_map_update_elem(&live_queues, key, val, BPF_ANY))
		count_drop(GPUQ_DROP_MAP_FULL);
}

/*
 * Tracks a new queue and reserves its create record with the owner and
 * identity fields filled; the caller adds what its hook knows, and submits.
 */
static __always_inline struct gpuq_queue_create_event *begin_create(struct live_key *key,
								    struct live_val *val)
{
	struct gpuq_queue_create_event *e;

	/*
	 * A process creating queues is alive. Its kfd_process may sit at the
	 * address of one that exited earlier (slab reuse): forget that mark, or
	 * its explicit destroys would count as exit teardown.
	 */
	bpf_map_delete_elem(&exiting, &key->process_key);
	remember_owner(key->process_key, val->tgid, val->cgroup_id);
	track_queue(key, val);
	e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_CREATE);
	if (!e)
		return NULL;
	e->hdr.tgid = val->tgid;
	e->hdr.cgroup_id = val->cgroup_id;
	e->hdr.process_key = key->process_key;
	e->gpu_id = val->gpu_id;
	e->queue_id = key->queue_id;
	e->queue_type = val->queue_type;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/*
 * Submits a create record once its hook filled it: a ROCr queue's write
 * pointer is kept with the live queue, so that its destroy can read the
 * final write index (submit_destroy).
 */
static __always_inline void finish_create(struct live_key *key, struct gpuq_queue_create_event *e)
{
	struct live_val *live;

	rocr_queue_learn(e);
	if (e->flags & GPUQ_CREATE_F_ROCR_LAYOUT) {
		live = bpf_map_lookup_elem(&live_queues, key);
		if (live)
			live->write_ptr = e->write_ptr;
		exit_read_learn(e->hdr.tgid);
	}
	bpf_ringbuf_submit(e, 0);
}

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

static __always_inline void emit_ioctl_create(struct create_call *call,
					      struct gpuq_kfd_create_queue_args *a)
{
	struct gpuq_queue_create_event *e;
	struct live_key key = {};
	struct live_val val = {};

	key.process_key = call->process_key;
	key.queue_id = a->queue_id;
	val.cgroup_id = bpf_get_current_cgroup_id();
	val.tgid = current_tgid();
	val.gpu_id = a->gpu_id;
	val.queue_type = queue_type_from_uapi(a->queue_type);

	if (args_tier)
		args__learn_queue(call->q, &key, &val);
	e = begin_create(&key, &val);
	if (!e)
		return;
	e->queue_format = a->queue_type == GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
			      ? GPUQ_QUEUE_FORMAT_AQL
			      : GPUQ_QUEUE_FORMAT_PM4;
	e->ring_address = a->ring_base_address;
	e->ring_size = a->ring_size;
	e->read_ptr = a->read_pointer_address;
	e->write_ptr = a->write_pointer_address;
	e->priority = a->queue_priority;
	e->percentage = a->queue_percentage;
	e->flags = GPUQ_CREATE_F_VIA_IOCTL;
	finish_create(&key, e);
}

static __always_inline void emit_create_failed(struct create_call *call,
					       struct gpuq_kfd_create_queue_args *a, long ret)
{
	struct gpuq_queue_create_failed_event *e;

	e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_CREATE_FAILED);
	if (!e)
		return;
	e->hdr.tgid = current_tgid();
	e->hdr.cgroup_id = bpf_get_current_cgroup_id();
	e->hdr.process_key = call->process_key;
	e->gpu_id = a->gpu_id;
	e->queue_type = queue_type_from_uapi(a->queue_type);
	e->error = ret;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
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

/*
 * Why the queue goes: exit teardown when the owner's mm is gone (marked by
 * process_exit) or when the free runs outside the owner (kfd_process_wq
 * kworker); otherwise the owner destroyed it through the ioctl.
 */
static __always_inline __u32 destroy_reason(__u64 process_key, __u32 owner_tgid)
{
	if (bpf_map_lookup_elem(&exiting, &process_key))
		return GPUQ_DESTROY_PROCESS_EXIT;
	if (current_tgid() != owner_tgid)
		return GPUQ_DESTROY_PROCESS_EXIT;
	return GPUQ_DESTROY_IOCTL;
}

/* Writes the destroy record of a queue (BTF and args tiers). */
static __always_inline void submit_destroy(struct live_key *key, struct live_val *val, __u32 flags)
{
	struct gpuq_queue_destroy_event *e;

	e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_DESTROY);
	if (!e)
		return;
	e->hdr.tgid = val->tgid;
	e->hdr.cgroup_id = val->cgroup_id;
	e->hdr.process_key = key->process_key;
	e->gpu_id = val->gpu_id;
	e->queue_id = key->queue_id;
	e->queue_type = val->queue_type;
	e->reason = destroy_reason(key->process_key, val->tgid);
	e->flags = flags;
	e->write_index = 0;
	/*
	 * The owner destroying its queue (the ioctl, or closing a secondary
	 * context's file: current is the owner, its memory mapped): the
	 * packets written since the sampler's last read would go with the
	 * queue's memory; the final write index keeps them. The exit teardown
	 * runs after the memory is gone (the read fails): it carries what the
	 * owner's last thread left (exit_read.bpf.h).
	 */
	if (val->write_ptr && current_tgid() == val->tgid &&
	    !bpf_probe_read_user(&e->write_index, sizeof(e->write_index), (void *)val->write_ptr)) {
		e->flags |= GPUQ_DESTROY_F_WRITE_INDEX;
	} else if (e->reason == GPUQ_DESTROY_PROCESS_EXIT && (val->flags & LIVE_F_EXIT_INDEX)) {
		e->write_index = val->exit_write_index;
		e->flags |= GPUQ_DESTROY_F_WRITE_INDEX;
	}
	bpf_ringbuf_submit(e, 0);
}

/*
 * The owner of a record about the live queue (process_key, queue_id) by its
 * caller (an update, a CU mask): what its create cached, or current's for a
 * queue created before we ran. Fills hdr's owner fields, returns its GPU (0
 * where unknown).
 */
static __always_inline __u32 live_queue_owner(struct gpuq_event_header *hdr, __u64 process_key,
					      __u32 queue_id)
{
	struct live_key key = { .process_key = process_key, .queue_id = queue_id };
	struct live_val *val = bpf_map_lookup_elem(&live_queues, &key);

	hdr->tgid = val ? val->tgid : current_tgid();
	hdr->cgroup_id = val ? val->cgroup_id : bpf_get_current_cgroup_id();
	hdr->process_key = process_key;
	return val ? val->gpu_id : 0;
}

/*
 * A successful AMDKFD_IOC_UPDATE_QUEUE by its caller (the owner: amdkfd looks
 * the queue up in the caller's process). `a` is what the call was given.
 * A queue created before the agent ran is not in live_queues: its record
 * carries the caller as owner and gpu 0; the agent finds the queue by owner
 * and queue id.
 */
static __always_inline void emit_update(__u64 process_key,
					const struct gpuq_kfd_update_queue_args *a)
{
	struct gpuq_queue_update_event *e;

	e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_UPDATE);
	if (!e)
		return;
	e->gpu_id = live_queue_owner(&e->hdr, process_key, a->queue_id);
	e->queue_id = a->queue_id;
	e->ring_address = a->ring_base_address;
	e->ring_size = a->ring_size;
	e->percentage = a->queue_percentage;
	e->priority = a->queue_priority;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
}

/*
 * A successful AMDKFD_IOC_SET_CU_MASK by its caller (the owner, as for an
 * update): `a` is what the call was given. The mask is read from the
 * caller's memory, which amdkfd has just copied (memdup_user), so it is
 * resident; amdkfd uses at most its first 1024 bits (max_num_cus), as many
 * as are read here. An unreadable mask leaves words_read 0.
 */
static __always_inline void emit_cu_mask(__u64 process_key,
					 const struct gpuq_kfd_set_cu_mask_args *a)
{
	struct gpuq_queue_cu_mask_event *e;
	__u32 words = a->num_cu_mask / 32, size;

	if (words > GPUQ_CU_MASK_WORDS)
		words = GPUQ_CU_MASK_WORDS;
	/* the bound the verifier sees: size <= sizeof(e->mask) */
	size = words * sizeof(__u32);
	if (size > sizeof(e->mask))
		size = sizeof(e->mask);
	barrier_var(size);
	e = reserve_event(sizeof(*e), GPUQ_EV_QUEUE_CU_MASK);
	if (!e)
		return;
	e->gpu_id = live_queue_owner(&e->hdr, process_key, a->queue_id);
	e->queue_id = a->queue_id;
	e->num_cu_mask = a->num_cu_mask;
	__builtin_memset(e->mask, 0, sizeof(e->mask));
	e->words_read = words;
	if (bpf_probe_read_user(e->mask, size, (const void *)a->cu_mask_ptr)) {
		count_drop(GPUQ_DROP_ARGS_UNREADABLE);
		e->words_read = 0;
	}
	bpf_ringbuf_submit(e, 0);
}

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

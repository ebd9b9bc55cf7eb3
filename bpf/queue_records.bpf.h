/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The queue records every probe tier writes, from what its hook knows: a
 * create (begin_create .. finish_create, or emit_ioctl_create from the uapi
 * args), a failed create, a destroy, an update and a CU mask. The BTF hooks
 * (gpuq.bpf.c), the args-kprobe tier (args_tier.bpf.h) and the tracepoint
 * tier (tracepoint_tier.bpf.h) share them, so a record means the same
 * whichever tier wrote it.
 */
#ifndef GPUQ_QUEUE_RECORDS_BPF_H
#define GPUQ_QUEUE_RECORDS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>
#include <gpuq/kfd_uapi.h>
#include "args_state.bpf.h"
#include "attribution.bpf.h"
#include "events.bpf.h"
#include "exit_read.bpf.h"
#include "live_queues.bpf.h"
#include "rocr_queue.bpf.h"

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

#endif /* GPUQ_QUEUE_RECORDS_BPF_H */

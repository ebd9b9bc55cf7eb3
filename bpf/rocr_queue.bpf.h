/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ROCr's amd_queue_t behind a KFD queue (docs/kfd-probe-points.md 3):
 * ROCr passes &amd_queue.write_dispatch_id (+56) as the write pointer, and
 * the embedded hsa_queue_t at +0 repeats the ring's address and size (in
 * 64-byte AQL packets) and holds the doorbell signal, filled before the
 * create ioctl. Read from user memory, so only in the creating task's context
 * (the ioctl), where the page was just written.
 */
#ifndef GPUQ_ROCR_QUEUE_BPF_H
#define GPUQ_ROCR_QUEUE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <gpuq/abi.h>

#define GPUQ_AMD_QUEUE_WRITE_INDEX_OFF 56
#define GPUQ_AQL_PACKET_SIZE 64

/* hsa_queue_t, the leading 32 bytes of amd_queue_t (hsa.h, x86-64 large model) */
struct gpuq_hsa_queue_head {
	__u32 type;
	__u32 features;
	__u64 base_address;
	__u64 doorbell_signal; /* hsa_signal_t.handle */
	__u32 size;	       /* packets */
	__u32 reserved1;
};

/*
 * Sets GPUQ_CREATE_F_ROCR_LAYOUT, doorbell_handle and write_index_at_create
 * when write_ptr - 56 validates as amd_queue_t for e's ring; leaves them 0
 * (opaque queue: SDMA, gfx7/8 legacy doorbells, non-ROCr clients) otherwise.
 */
static __always_inline void rocr_queue_learn(struct gpuq_queue_create_event *e)
{
	struct gpuq_hsa_queue_head h;
	__u64 write_index;

	if (e->write_ptr < GPUQ_AMD_QUEUE_WRITE_INDEX_OFF || !e->ring_size)
		return;
	if (bpf_probe_read_user(&h, sizeof(h),
				(void *)(e->write_ptr - GPUQ_AMD_QUEUE_WRITE_INDEX_OFF)))
		return;
	if (h.base_address != e->ring_address ||
	    (__u64)h.size * GPUQ_AQL_PACKET_SIZE != e->ring_size)
		return;
	if (bpf_probe_read_user(&write_index, sizeof(write_index), (void *)e->write_ptr))
		return;
	e->flags |= GPUQ_CREATE_F_ROCR_LAYOUT;
	e->doorbell_handle = h.doorbell_signal;
	e->write_index_at_create = write_index;
}

#endif /* GPUQ_ROCR_QUEUE_BPF_H */

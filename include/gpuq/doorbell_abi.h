/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The doorbell counter's maps (--doorbells=uprobe): what bpf/doorbell.bpf.c
 * counts per rung doorbell and agent/submissions/doorbell_counter.cc reads back.
 * Map contents, not ring-buffer records: never written into captures (the
 * agent copies each count into abi.h's gpuq_doorbell_count_record), so they
 * change neither the capture format nor GPUQ_ABI_VERSION. The per-class
 * counts are indexed by abi.h's enum gpuq_packet_class here, in the record
 * and in the model, so they are copied as they are at every step. Same rules
 * as abi.h: fixed-width types, explicit padding, layout pinned below.
 */
#ifndef GPUQ_DOORBELL_ABI_H
#define GPUQ_DOORBELL_ABI_H

#include <gpuq/abi.h>

/* Reasons a doorbell was not counted; indexes of `doorbell_drops`. */
enum gpuq_doorbell_drop {
	GPUQ_DB_DROP_MAP_FULL = 0, /* doorbell_counts had no room for a new doorbell */
	GPUQ_DB_DROP__MAX,
};

/* Key of doorbell_counts and known_doorbells. Handles are addresses in one
 * process: two processes may share a value. */
struct gpuq_doorbell_key {
	__u64 handle; /* hsa_signal_t.handle: the amd_signal_t address */
	__u32 tgid;
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_doorbell_key, handle, 0);
GPUQ_ABI_OFFSET(gpuq_doorbell_key, tgid, 8);
GPUQ_ABI_SIZE(gpuq_doorbell_key, 16); /* 8 + 2*4 */

/*
 * Value of doorbell_counts: cumulative since the doorbell's first ring.
 * by_packet counts AQL packets, not rings: a ring publishes every packet
 * from the previous ring's index + 1 to the stored index (HIP 7 replays a
 * graph in batches of up to 256 packets with one ring each; HIP 5/6 ring
 * once per packet), each classified by its own slot's header.
 */
struct gpuq_doorbell_count {
	__u64 by_packet[GPUQ_PACKET__MAX]; /* packets, by enum gpuq_packet_class */
	__u64 barrier_dispatches;	   /* kernel dispatches with the barrier bit */
	__u64 cgroup_id; /* cgroup v2 id of the ringing task at the first doorbell */
	__u64 rings;	 /* doorbell stores counted */
	/*
	 * The write index after the last packet counted: the next ring's
	 * batch starts here. Advanced with compare-and-swap, so two CPUs
	 * ringing one queue (HIP streams sharing a queue) count each packet
	 * once, whichever rings last.
	 */
	__u64 next_index;
	/*
	 * The probe's own cache, not read by the agent: the amd_queue_t the
	 * signal named when it was last read, that queue's ring and
	 * hsa_queue_t.id, and the retire epoch (bpf/doorbell.bpf.c) of that
	 * read. While no queue has been destroyed since, a ring reads only
	 * its packet headers.
	 */
	__u64 queue_ptr;
	__u64 ring_base;
	__u64 queue_id;
	__u32 ring_packets;
	__u32 epoch;
};
GPUQ_ABI_OFFSET(gpuq_doorbell_count, by_packet, 0);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, barrier_dispatches, 40);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, cgroup_id, 48);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, rings, 56);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, next_index, 64);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, queue_ptr, 72);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, ring_base, 80);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, queue_id, 88);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, ring_packets, 96);
GPUQ_ABI_OFFSET(gpuq_doorbell_count, epoch, 100);
GPUQ_ABI_SIZE(gpuq_doorbell_count, 104); /* 6*8 + 6*8 + 2*4 */

#endif /* GPUQ_DOORBELL_ABI_H */

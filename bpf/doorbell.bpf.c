// SPDX-License-Identifier: GPL-2.0
/*
 * gpuq doorbell counter (opt-in, --doorbells=uprobe): uprobes on
 * libhsa-runtime64's exported hsa_signal_store_screlease and
 * hsa_signal_store_relaxed (@ROCR_1), counted here per doorbell signal. No
 * ring-buffer traffic: one map update per rung doorbell.
 *
 *   rdi = hsa_signal_t.handle = address of the amd_signal_t
 *   rsi = value, for a doorbell the AQL write index of the packet just written
 *
 * A store is a doorbell if amd_signal_t.kind < 0 (DOORBELL -1,
 * LEGACY_DOORBELL -2), or if (tgid, handle) is in `known_doorbells` (the
 * InterceptQueue case, whose doorbell has kind USER). Completion and user
 * signals (kind 1) are ignored.
 *
 * A ring publishes every packet from the previous ring's index + 1 to
 * `value`: HIP 5 and 6 ring once per packet, HIP 7 replays a graph in
 * batches (1, 2, 4 ... 256 packets) with one ring of the batch's last index
 * (clr's VirtualGPU::dispatchGenericAqlPacketBatch, ROCm 7.0). Each packet
 * is classified by the AQL header of its own slot:
 * amd_signal_t.queue_ptr -> amd_queue_t.base_address[index & (size - 1)];
 * the ring of each doorbell's queue is cached in its count (count_doorbell).
 * Where a batch starts: the count's next_index, advanced by every ring. A
 * doorbell's first ring counts from index 0 when its queue cannot have rung
 * before the probe was attached (the process started after; ROCr starts
 * every queue at index 0), else the rung packet only: packets published
 * before the agent attached are not its to count.
 *
 * The cache is trusted until a queue is destroyed: uretprobes on
 * hsa_queue_destroy and hsa_shut_down (@ROCR_1) bump `retire_epoch`, and a
 * count cached at another epoch reads its signal again. The memory of a
 * destroyed queue's doorbell signal goes back to ROCr's shared signal pool
 * (Shared<SharedSignal> in LocalSignal, core/inc/signal.h, rocm-5.2.3) and
 * may come back as a completion signal; AqlQueue::Destroy deletes the queue
 * before hsa_queue_destroy returns, and ROCr's own queues go at
 * hsa_shut_down. Left open: another thread's store on that memory reused
 * between the free and the return, and queues destroyed through the API
 * table without the exported call (a tool's own queues).
 *
 * Layouts (x86-64 HSA_LARGE_MODEL, see docs kfd-probe-points.md section 3):
 *   amd_signal_t (64 B): kind s64 @0, value @8, ..., queue_ptr @48
 *   amd_queue_t:  base_address @8, doorbell_signal @16, size u32 @24 (packets),
 *                 id u64 @32 (unique per queue in a process: HSA 1.2 2.8.1)
 *   AQL packet: 64 B slots, header u16 @0, type = bits 0-7
 *
 * The maps' key, value and drop reasons are include/gpuq/doorbell_abi.h's,
 * shared with the agent (agent/submissions/doorbell_counter.cc). The packet
 * classes are the ABI's (enum gpuq_packet_class), so by_packet is copied into
 * gpuq_doorbell_count_record.by_packet as it is; their sum is the total.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <gpuq/doorbell_abi.h>

char LICENSE[] SEC("license") = "GPL";

/* The leading 56 bytes of amd_signal_t, read at once. */
struct amd_signal_head {
	__s64 kind;
	__u64 value;
	__u64 event_mailbox_ptr;
	__u32 event_id;
	__u32 reserved1;
	__u64 start_ts;
	__u64 end_ts;
	__u64 queue_ptr;
};

/* amd_queue_t (hsa_queue_t) from offset 8 to 40. */
struct amd_queue_ring {
	__u64 base_address;
	__u64 doorbell_signal;
	__u32 size;
	__u32 reserved1;
	__u64 id;
};

/* @brief doorbells rung: (tgid, handle) -> counts */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct gpuq_doorbell_key);
	__type(value, struct gpuq_doorbell_count);
} doorbell_counts SEC(".maps");

/* @brief doorbell handles learned outside this probe (queue creation) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct gpuq_doorbell_key);
	__type(value, __u8);
} known_doorbells SEC(".maps");

/* @brief doorbells not counted, indexed by enum gpuq_doorbell_drop */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUQ_DB_DROP__MAX);
	__type(key, __u32);
	__type(value, __u64);
} doorbell_drops SEC(".maps");

/*
 * Bumped when a queue may have been destroyed; 32 bits wrap only after 2^32
 * destroys between two rings of one doorbell.
 */
__u32 retire_epoch;

/*
 * A batch larger than this many packets is classified by its last slots
 * only, the rest counted as unreadable: a ring holds at most its size, and
 * ROCr's largest queue (HSA_AGENT_INFO_QUEUE_MAX_SIZE) is 128 Ki packets.
 */
#define MAX_CLASSIFIED (128u << 10)

/*
 * The class of the packet in slot index of a ring of `packets` slots, from
 * its first 4 bytes: the header (type in byte 0) and, in a vendor-specific
 * packet, AMD's format in byte 2. CLR publishes them with one 32-bit
 * release store (rocvirtual.cpp packet_store_release: header | rest << 16),
 * so they are read together.
 */
static __always_inline __u32 packet_class(__u64 ring_base, __u32 packets, __u64 index,
					  bool *barrier_bit)
{
	__u32 word;
	__u8 type;

	*barrier_bit = false;
	if (!ring_base || !packets || (packets & (packets - 1)))
		return GPUQ_PACKET_UNREADABLE;
	if (bpf_probe_read_user(&word, sizeof(word),
				(void *)(ring_base + (index & (packets - 1)) * 64)))
		return GPUQ_PACKET_UNREADABLE;
	type = word & 0xff; /* hsa_packet_type_t */
	*barrier_bit = word & (1u << GPUQ_AQL_HEADER_BARRIER);
	if (type == GPUQ_AQL_TYPE_KERNEL_DISPATCH)
		return GPUQ_PACKET_DISPATCH;
	if (type == GPUQ_AQL_TYPE_BARRIER_AND || type == GPUQ_AQL_TYPE_BARRIER_OR)
		return GPUQ_PACKET_BARRIER;
	if (type == GPUQ_AQL_TYPE_VENDOR_SPECIFIC &&
	    ((word >> 16) & 0xff) == GPUQ_AMD_FORMAT_EXT_KERNEL_DISPATCH)
		return GPUQ_PACKET_EXT_DISPATCH;
	return GPUQ_PACKET_OTHER; /* other VENDOR_SPECIFIC, INVALID, AGENT_DISPATCH */
}

/*
 * Reads queue_ptr's ring into count's cache. A read that fails, or names no
 * ring, changes nothing: the cache keeps the last ring read (the next ring
 * reads again, its epoch being stale), and where a batch starts stays put.
 * Another queue than the cached one (its amd_queue_t, ring or id changed;
 * ROCr 5.2.3 gives a queue made after a destroy the destroyed one's
 * hsa_queue_t and doorbell signal back, with a ring of its own) starts at
 * write index 0, as ROCr starts every queue: its first ring counts from
 * there. Racing rings of one doorbell may both refresh: same values.
 */
static __always_inline void cache_ring(struct gpuq_doorbell_count *count, __u64 queue_ptr,
				       __u32 epoch)
{
	struct amd_queue_ring ring;

	if (bpf_probe_read_user(&ring, sizeof(ring), (void *)(queue_ptr + 8)) ||
	    !ring.base_address || !ring.size)
		return;
	if (count->ring_packets &&
	    (count->queue_ptr != queue_ptr || count->ring_base != ring.base_address ||
	     count->ring_packets != ring.size || count->queue_id != ring.id))
		count->next_index = 0;
	count->ring_base = ring.base_address;
	count->ring_packets = ring.size;
	count->queue_id = ring.id;
	count->queue_ptr = queue_ptr;
	count->epoch = epoch;
}

/*
 * Whether the ringing process started after the probe calling this was
 * attached (its bpf_cookie: CLOCK_MONOTONIC ns taken before the attach, as
 * task_struct.start_time is). Then none of its queues rang unseen.
 */
static __always_inline bool started_after_attach(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, group_leader, start_time) >= bpf_get_attach_cookie(ctx);
}

/* What classify_slot reads, and the count it adds to. */
struct batch {
	struct gpuq_doorbell_count *count;
	__u64 ring_base;
	__u64 first; /* write index of the first packet classified */
	__u32 ring_packets;
	__u32 pad;
};

/*
 * One packet of a batch. Added to the map value at once: counts kept on
 * the stack would differ from one iteration to the next, and the verifier
 * (which walks bpf_loop callbacks until their state repeats, Linux 6.8)
 * would never see them converge.
 */
static long classify_slot(__u32 i, void *data)
{
	struct batch *b = data;
	bool barrier_bit;
	__u32 type = packet_class(b->ring_base, b->ring_packets, b->first + i, &barrier_bit);

	if (type < GPUQ_PACKET__MAX)
		__sync_fetch_and_add(&b->count->by_packet[type], 1);
	if (barrier_bit && (type == GPUQ_PACKET_DISPATCH || type == GPUQ_PACKET_EXT_DISPATCH))
		__sync_fetch_and_add(&b->count->barrier_dispatches, 1);
	return 0;
}

/* One attempt of claim_packets, in a bpf_loop. */
struct claim {
	struct gpuq_doorbell_count *count;
	__u64 value;
	__u64 packets;
};

static long claim_once(__u32 i, void *data)
{
	struct claim *c = data;
	__u64 next, seen;

	next = *(volatile __u64 *)&c->count->next_index;
	if (c->value + 1 <= next)
		return 1; /* a later ring counted these packets */
	seen = __sync_val_compare_and_swap(&c->count->next_index, next, c->value + 1);
	if (seen != next)
		return 0; /* another ring moved it: again */
	c->packets = c->value + 1 - next;
	return 1;
}

/*
 * Claims the packets up to `value` for this ring: from next_index, which
 * only grows, by compare-and-swap (a ring that finds a later ring already
 * counted its packets claims none). Returns how many; none after eight
 * lost races, whose winners counted them.
 */
static __always_inline __u64 claim_packets(struct gpuq_doorbell_count *count, __u64 value)
{
	struct claim c = { .count = count, .value = value };

	bpf_loop(8, claim_once, &c, 0);
	return c.packets;
}

/*
 * Per ring of a doorbell cached since the last queue destroy: one lookup,
 * a compare-and-swap claiming the ring's packets, one header read and one
 * atomic add per packet from the cached ring, one add for the ring.
 * Otherwise the signal's head is read first, its kind (a destroyed queue's
 * signal memory is reused for completion signals) and the queue it names,
 * then that queue's ring.
 */
static __always_inline int count_doorbell(void *ctx, __u64 handle, __u64 value)
{
	struct gpuq_doorbell_key key = { .handle = handle };
	struct gpuq_doorbell_count *count;
	struct amd_signal_head sig;
	struct batch b = {};
	__u64 packets, classified;
	__u32 epoch;

	key.tgid = bpf_get_current_pid_tgid() >> 32;
	/* read before the signal: a destroy after it makes the cache stale */
	epoch = *(volatile __u32 *)&retire_epoch;
	count = bpf_map_lookup_elem(&doorbell_counts, &key);
	if (count && count->queue_ptr && count->epoch == epoch)
		goto classify;
	if (bpf_probe_read_user(&sig, sizeof(sig), (void *)handle))
		sig.kind = 0;
	if (sig.kind >= 0) {
		if (!bpf_map_lookup_elem(&known_doorbells, &key))
			return 0;
		/* learned doorbells of unknown layout: count, do not classify */
		sig.queue_ptr = 0;
	}
	if (!count) {
		struct gpuq_doorbell_count init = { .cgroup_id = bpf_get_current_cgroup_id() };
		__u32 reason = GPUQ_DB_DROP_MAP_FULL;
		__u64 *n;

		/* a queue that may have rung unseen: from this ring on */
		if (!started_after_attach(ctx))
			init.next_index = value;
		/* EEXIST: another CPU inserted it first, which is fine */
		bpf_map_update_elem(&doorbell_counts, &key, &init, BPF_NOEXIST);
		count = bpf_map_lookup_elem(&doorbell_counts, &key);
		if (!count) {
			n = bpf_map_lookup_elem(&doorbell_drops, &reason);
			/* atomic: the plain pair runs preemptible on a kernel built so */
			if (n)
				__sync_fetch_and_add(n, 1);
			return 0;
		}
	}
	if (!sig.queue_ptr) {
		/*
		 * A learned doorbell of unknown layout: what its value means
		 * is not known, so the rung packet only, unclassified.
		 */
		__sync_fetch_and_add(&count->rings, 1);
		__sync_fetch_and_add(&count->by_packet[GPUQ_PACKET_UNREADABLE], 1);
		return 0;
	}
	cache_ring(count, sig.queue_ptr, epoch);
classify:
	__sync_fetch_and_add(&count->rings, 1);
	/*
	 * A batch is claimed even when no ring could be read (then its
	 * packets are unreadable): claimed later, they would be counted from
	 * wherever the batch start stood.
	 */
	packets = claim_packets(count, value);
	if (!packets)
		return 0;
	classified = packets; /* at most the ring: older slots were overwritten */
	if (classified > count->ring_packets)
		classified = count->ring_packets;
	if (classified > MAX_CLASSIFIED)
		classified = MAX_CLASSIFIED;
	b.count = count;
	b.ring_base = count->ring_base;
	b.ring_packets = count->ring_packets;
	b.first = value + 1 - classified;
	bpf_loop(classified, classify_slot, &b, 0);
	/* overwritten slots of a batch larger than the ring */
	if (packets > classified)
		__sync_fetch_and_add(&count->by_packet[GPUQ_PACKET_UNREADABLE],
				     packets - classified);
	return 0;
}

/*
 * Two pairs of doorbell programs; the agent loads one (doorbell_counter.cc,
 * decided from vmlinux BTF before the load).
 *
 * Since Linux 6.13 ("bpf: Support private stack for bpf progs",
 * a76ab5731e32) a kprobe-type program, which a uprobe program is, runs on a
 * per-CPU private stack when a frame of it takes 64 bytes or more, as
 * count_doorbell's does. A uprobe program runs with migration, not
 * preemption, disabled (Linux 6.1, 8c7dcb84e3b7), and no recursion guard
 * keeps a second task out. On a preemptible kernel (Debian's boot lazy from
 * 6.16) a task preempted inside count_doorbell and the next task ringing a
 * doorbell on that CPU share one stack: the second overwrites the first's
 * pointers, and the first dereferences them. Seen on 7.3 as a NULL
 * dereference in classify_slot.
 *
 * The guarded pair holds preemption off around count_doorbell, a
 * subprogram so that its frame is taken only once preemption is off
 * (bpf_preempt_disable/enable, Linux 6.10, fc7566ad0a82). Where the kernel
 * lacks these kfuncs it has no private stacks either, and the plain pair
 * runs. The kfuncs are weak: libbpf leaves the plain pair's object loadable
 * on kernels without them, as the guarded pair is then not loaded.
 */
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

static __noinline int count_doorbell_frame(void *ctx, __u64 handle, __u64 value)
{
	return count_doorbell(ctx, handle, value);
}

static __always_inline int count_doorbell_unpreempted(void *ctx, __u64 handle, __u64 value)
{
	bpf_preempt_disable();
	count_doorbell_frame(ctx, handle, value);
	bpf_preempt_enable();
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(doorbell_store_screlease, __u64 handle, __s64 value)
{
	return count_doorbell(ctx, handle, value);
}

SEC("uprobe")
int BPF_KPROBE(doorbell_store_relaxed, __u64 handle, __s64 value)
{
	return count_doorbell(ctx, handle, value);
}

SEC("uprobe")
int BPF_KPROBE(doorbell_store_screlease_guarded, __u64 handle, __s64 value)
{
	return count_doorbell_unpreempted(ctx, handle, value);
}

SEC("uprobe")
int BPF_KPROBE(doorbell_store_relaxed_guarded, __u64 handle, __s64 value)
{
	return count_doorbell_unpreempted(ctx, handle, value);
}

/*
 * At the return of hsa_queue_destroy (the queue's signal memory is free) and
 * of hsa_shut_down (ROCr's own queues are gone too).
 */
SEC("uretprobe")
int BPF_KRETPROBE(doorbell_retire)
{
	__sync_fetch_and_add(&retire_epoch, 1);
	return 0;
}

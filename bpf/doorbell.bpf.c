// SPDX-License-Identifier: GPL-2.0
/*
 * gpuq doorbell counter (opt-in, --doorbells=uprobe): uprobes on
 * libhsa-runtime64's exported hsa_signal_store_screlease and
 * hsa_signal_store_relaxed (@ROCR_1), counted here per doorbell signal. No
 * ring-buffer traffic: one map update per rung doorbell.
 *
 *   rdi = hsa_signal_t.handle = address of the amd_signal_t
 *   rsi = value, for a doorbell the AQL index of the last packet it publishes
 *
 * One ring may publish many packets: HIP 7.2 replays a graph in batches of
 * 1, 2, 4 ... 256 packets with one store of the batch's last index
 * (VirtualGPU::dispatchGenericAqlPacketBatch, clr rocm-7.2). So each doorbell
 * keeps the next index no ring has published, and a ring counts the packets
 * from there to its value (claim_packets). A queue hsa_queue_create returned
 * while the probes were attached (uprobe + uretprobe, `fresh_queues`) counts
 * from index 0; a queue older than the probes from its first ring seen.
 *
 * A store is a doorbell if amd_signal_t.kind < 0 (DOORBELL -1,
 * LEGACY_DOORBELL -2), or if (tgid, handle) is in `known_doorbells` (the
 * InterceptQueue case, whose doorbell has kind USER). Completion and user
 * signals (kind 1) are ignored.
 *
 * The packet types come from the AQL headers of the published slots:
 * amd_signal_t.queue_ptr -> amd_queue_t.base_address[index & (size - 1)];
 * the ring of each doorbell's queue is cached in its count (count_doorbell).
 *
 * The cache is trusted until a queue is created or destroyed: uretprobes on
 * hsa_queue_create, hsa_queue_destroy and hsa_shut_down (@ROCR_1) bump
 * `retire_epoch`, and a
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
 *   amd_queue_t:  base_address @8, doorbell_signal @16, size u32 @24 (packets)
 *   AQL packet: 64 B slots, header u16 @0, type = bits 0-7
 *
 * The maps' key, value and drop reasons are include/gpuq/doorbell_abi.h's,
 * shared with the agent (agent/submissions/doorbell_counter.cc). The packet
 * classes are the ABI's (enum gpuq_packet_class), so by_packet is copied into
 * gpuq_doorbell_count_record.by_packet as it is; their sum is the packets
 * published, `rings` the stores.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
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

/* amd_queue_t (hsa_queue_t) from offset 8 to 28. */
struct amd_queue_ring {
	__u64 base_address;
	__u64 doorbell_signal;
	__u32 size;
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

/*
 * @brief queues hsa_queue_create returned, not rung yet: (tgid, amd_queue_t
 * address) -> 1
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct gpuq_doorbell_key);
	__type(value, __u8);
} fresh_queues SEC(".maps");

/* @brief hsa_queue_create calls in flight: thread -> its hsa_queue_t ** */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} creating SEC(".maps");

/* @brief doorbells not counted, indexed by enum gpuq_doorbell_drop */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GPUQ_DB_DROP__MAX);
	__type(key, __u32);
	__type(value, __u64);
} doorbell_drops SEC(".maps");

/*
 * Bumped when a queue may have been created or destroyed; 32 bits wrap only
 * after 2^32 of those between two rings of one doorbell.
 */
__u32 retire_epoch;

/* by_packet is indexed with a mask */
_Static_assert(GPUQ_PACKET__MAX == 4, "enum gpuq_packet_class: a power of two");

/*
 * Class by hsa_packet_type_t (the header's low byte); from 256: the header
 * was not readable. A table, not branches: count_packets runs it up to
 * GPUQ_DB_CLASSIFY_MAX times, and the verifier walks every branch of every
 * iteration.
 */
static const __u8 packet_classes[512] = {
	[0 ... 1] = GPUQ_PACKET_OTHER, /* VENDOR_SPECIFIC, INVALID */
	[2] = GPUQ_PACKET_DISPATCH,    /* KERNEL_DISPATCH */
	[3] = GPUQ_PACKET_BARRIER,     /* BARRIER_AND */
	[4] = GPUQ_PACKET_OTHER,       /* AGENT_DISPATCH */
	[5] = GPUQ_PACKET_BARRIER,     /* BARRIER_OR */
	[6 ... 255] = GPUQ_PACKET_OTHER,
	[256 ... 511] = GPUQ_PACKET_UNREADABLE, /* bpf_probe_read_user failed */
};

/* The class of the packet in slot index of a ring of `packets` slots. */
static __always_inline __u32 packet_class(__u64 ring_base, __u32 packets, __u64 index)
{
	__u16 header = 0;
	__u64 row;
	long err;

	err = bpf_probe_read_user(&header, sizeof(header),
				  (void *)(ring_base + (index & (packets - 1)) * 64));
	/* err < 0: its sign bits make the row 511 (unreadable); no branch */
	row = (header & 0xff) | ((__u64)err >> 55);
	/*
	 * Keep the mask clang would drop as redundant: 6.1's verifier loses an
	 * OR's bounds and refuses the table read without it ("math between
	 * map_value pointer and register with unbounded min value").
	 */
	barrier_var(row);
	return packet_classes[row & 511] & (GPUQ_PACKET__MAX - 1);
}

/* Reads queue_ptr's ring into count's cache (queue_ptr 0: unclassified). */
static __always_inline void cache_ring(struct gpuq_doorbell_count *count, __u64 queue_ptr,
				       __u32 epoch)
{
	struct amd_queue_ring ring = {};

	if (queue_ptr && bpf_probe_read_user(&ring, sizeof(ring), (void *)(queue_ptr + 8)))
		ring = (struct amd_queue_ring){};
	count->ring_base = ring.base_address;
	count->ring_packets = ring.size;
	count->queue_ptr = queue_ptr;
	count->epoch = epoch;
}

/*
 * The packets a ring of `value` publishes: from count->next_index to value,
 * claimed by moving next_index past value. A value below next_index was
 * published by a ring with a higher index already (racing producers of one
 * queue): nothing left. After 8 lost races the packets stay unclaimed, and
 * the doorbell's next ring claims them.
 */
static __always_inline __u64 claim_packets(struct gpuq_doorbell_count *count, __u64 value)
{
	__u64 next = *(volatile __u64 *)&count->next_index;
	__u64 seen;
	int i;

	for (i = 0; i < 8; i++) {
		if (value < next)
			return 0;
		seen = __sync_val_compare_and_swap(&count->next_index, next, value + 1);
		if (seen == next)
			return value + 1 - next;
		next = seen;
	}
	return 0;
}

/*
 * Counts n packets ending at index last by their headers, newest first: at
 * most GPUQ_DB_CLASSIFY_MAX and no more than the ring holds (older slots
 * were overwritten); the rest, and all of a ring not known, as unreadable.
 * The verifier walks each iteration: about 70 instructions each, so 256
 * iterations keep the program at ~19k verified instructions (6.18; ~38k on 6.1).
 */
static __always_inline void count_packets(struct gpuq_doorbell_count *count, __u64 last, __u64 n)
{
	__u64 base = count->ring_base, window = 0, i;
	__u32 packets = count->ring_packets, class;

	if (base && packets && !(packets & (packets - 1)))
		window = n < packets ? n : packets;
	if (window > GPUQ_DB_CLASSIFY_MAX)
		window = GPUQ_DB_CLASSIFY_MAX;
	/*
	 * One atomic add per packet, no per-class sums kept across iterations:
	 * the verifier would follow every combination of them.
	 */
	for (i = 0; i < GPUQ_DB_CLASSIFY_MAX; i++) {
		if (i >= window)
			break;
		class = packet_class(base, packets, last - i);
		__sync_fetch_and_add(&count->by_packet[class], 1);
	}
	if (n > window)
		__sync_fetch_and_add(&count->by_packet[GPUQ_PACKET_UNREADABLE], n - window);
}

/*
 * Whether queue_ptr's queue came out of hsa_queue_create since the agent
 * attached (forgotten once asked): its packets are then counted from index
 * 0, else from the first ring the probe sees.
 */
static __always_inline bool take_fresh(__u64 queue_ptr, __u32 tgid)
{
	struct gpuq_doorbell_key key = { .handle = queue_ptr, .tgid = tgid };

	if (!queue_ptr || !bpf_map_lookup_elem(&fresh_queues, &key))
		return false;
	bpf_map_delete_elem(&fresh_queues, &key);
	return true;
}

/*
 * Per ring of a doorbell cached since the last queue create or destroy: one
 * lookup, a claim of the packets it publishes, their headers from the cached
 * ring, a few atomic adds. Otherwise the signal's head is read first, its
 * kind (a destroyed queue's signal memory is reused for completion signals)
 * and the queue it names, then that queue's ring.
 */
static __always_inline int count_doorbell(__u64 handle, __u64 value)
{
	struct gpuq_doorbell_key key = { .handle = handle };
	struct gpuq_doorbell_count *count;
	struct amd_signal_head sig;
	__u64 old_base, n;
	__u32 epoch;
	bool fresh;

	key.tgid = bpf_get_current_pid_tgid() >> 32;
	/* read before the signal: a destroy after it makes the cache stale */
	epoch = *(volatile __u32 *)&retire_epoch;
	count = bpf_map_lookup_elem(&doorbell_counts, &key);
	if (count && count->queue_ptr && count->epoch == epoch)
		goto claim;
	if (bpf_probe_read_user(&sig, sizeof(sig), (void *)handle))
		sig.kind = 0;
	if (sig.kind >= 0) {
		if (!bpf_map_lookup_elem(&known_doorbells, &key))
			return 0;
		/* learned doorbells of unknown layout: count, do not classify */
		sig.queue_ptr = 0;
	}
	fresh = take_fresh(sig.queue_ptr, key.tgid);
	if (!count) {
		struct gpuq_doorbell_count init = {
			.cgroup_id = bpf_get_current_cgroup_id(),
			/* a queue older than the probe: from this ring on */
			.next_index = fresh ? 0 : value,
		};
		__u32 reason = GPUQ_DB_DROP_MAP_FULL;
		__u64 *drops;

		cache_ring(&init, sig.queue_ptr, epoch);
		/* EEXIST: another CPU inserted it first, which is fine */
		bpf_map_update_elem(&doorbell_counts, &key, &init, BPF_NOEXIST);
		count = bpf_map_lookup_elem(&doorbell_counts, &key);
		if (!count) {
			drops = bpf_map_lookup_elem(&doorbell_drops, &reason);
			if (drops)
				*drops += 1; /* per-CPU slot */
			return 0;
		}
	} else {
		/*
		 * Read the ring again even if the signal names the same
		 * amd_queue_t: ROCr 5.2.3 gives a queue created after a destroy
		 * the destroyed one's hsa_queue_t and doorbell signal back, with
		 * a ring of its own (another size, another address) and indices
		 * from 0 again. Racing rings of one doorbell may both refresh:
		 * same values.
		 */
		old_base = count->ring_base;
		cache_ring(count, sig.queue_ptr, epoch);
		if (fresh)
			count->next_index = 0;
		else if (count->ring_base != old_base && value < count->next_index)
			count->next_index = value; /* another queue, not seen created */
	}
claim:
	__sync_fetch_and_add(&count->rings, 1);
	n = claim_packets(count, value);
	if (n)
		count_packets(count, value, n);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(doorbell_store_screlease, __u64 handle, __s64 value)
{
	return count_doorbell(handle, value);
}

SEC("uprobe")
int BPF_KPROBE(doorbell_store_relaxed, __u64 handle, __s64 value)
{
	return count_doorbell(handle, value);
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

/*
 * hsa_queue_create(agent, size, type, callback, data, private_segment_size,
 * group_segment_size, hsa_queue_t **queue): the 8th argument is the second
 * on the stack, above the return address (SysV x86-64).
 */
SEC("uprobe")
int BPF_KPROBE(doorbell_queue_create)
{
	__u64 id = bpf_get_current_pid_tgid(), out = 0;

	if (bpf_probe_read_user(&out, sizeof(out), (void *)(PT_REGS_SP(ctx) + 16)) || !out)
		return 0;
	bpf_map_update_elem(&creating, &id, &out, BPF_ANY);
	return 0;
}

/* Its return: HSA_STATUS_SUCCESS marks the queue fresh. */
SEC("uretprobe")
int BPF_KRETPROBE(doorbell_queue_created, int status)
{
	__u64 id = bpf_get_current_pid_tgid(), *out;
	struct gpuq_doorbell_key key = { .tgid = id >> 32 };
	__u8 one = 1;

	out = bpf_map_lookup_elem(&creating, &id);
	if (!out)
		return 0;
	if (status == 0 && !bpf_probe_read_user(&key.handle, sizeof(key.handle), (void *)*out) &&
	    key.handle)
		bpf_map_update_elem(&fresh_queues, &key, &one, BPF_ANY);
	bpf_map_delete_elem(&creating, &id);
	/* a doorbell cached before may name this queue now (ROCr 5.2.3 reuse) */
	__sync_fetch_and_add(&retire_epoch, 1);
	return 0;
}

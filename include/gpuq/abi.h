/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpuq event ABI: the one definition of what crosses from bpf/ to agent/ and
 * what a capture file holds. Included by both sides, so only fixed-width
 * kernel types, explicit padding and no pointers.
 *
 * Every record starts with struct gpuq_event_header. `size` is the whole
 * record in bytes, a multiple of 8; decoders reject records whose size is
 * smaller than the type's struct, and skip trailing bytes of larger ones, so a
 * minor ABI change may append fields or record types: it adds a
 * GPUQ_ABI_MINOR and that minor's row of record sizes
 * (agent/sources/capture_minors.h).
 * Bump GPUQ_ABI_VERSION when a field moves, changes meaning or is removed
 * (see docs/abi.md).
 */
#ifndef GPUQ_ABI_H
#define GPUQ_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include <gpuq/abi_assert.h>

#define GPUQ_ABI_VERSION 1
/*
 * What a capture of ABI 1 holds, written into its header (abi_minor); each
 * minor's record sizes are a row of kRecordSizesByMinor
 * (agent/sources/capture_minors.h):
 *   0  written before minors were numbered (the field was `reserved`, 0):
 *      every record type up to GPUQ_EV_SOURCE_DROPS, each at least the
 *      decoder's smallest size (fields appended since read as 0), and
 *      doorbell_count's by_packet may count rings by the rung slot's packet
 *      type instead of the AQL packets the rings published.
 *   1  every record at its full size as pinned below; by_packet counts AQL
 *      packets.
 *   2  doorbell_count is 104 bytes: by_packet has GPUQ_PACKET_EXT_DISPATCH,
 *      AMD's extended kernel dispatch packets (gfx1250), and
 *      barrier_dispatches follows it.
 *   3  GPUQ_EV_PROCESS_KNOBS: the runtime variables that shape a process's
 *      queues, read from its environment.
 *   4  creates and destroys flagged _F_RECOVERED: what reconciliation learned
 *      of lost records, counted in the totals (sizes as in 3).
 */
#define GPUQ_ABI_MINOR 4

#define GPUQ_COMM_LEN 16
#define GPUQ_GPU_NAME_LEN 32
/* Longest cgroup path a capture record carries (cgroupfs allows PATH_MAX). */
#define GPUQ_CGROUP_PATH_MAX 4096

enum gpuq_event_type {
	GPUQ_EV_INVALID = 0, /* a zeroed record is never valid */
	/* written by the kernel side */
	GPUQ_EV_QUEUE_CREATE = 1,
	GPUQ_EV_QUEUE_DESTROY = 2,
	GPUQ_EV_PROCESS_EXIT = 3,
	GPUQ_EV_QUEUE_CREATE_FAILED = 4,
	/* written by the agent into capture files, so a replay is self-contained */
	GPUQ_EV_GPU_INFO = 5,
	GPUQ_EV_CGROUP_PATH = 6,
	GPUQ_EV_CONTAINER_META = 7,
	/* written by the kernel side: preemption and eviction */
	GPUQ_EV_RUNLIST = 8,
	GPUQ_EV_EVICTION = 9,
	/* written by the agent: what it sampled or read from BPF maps */
	GPUQ_EV_QUEUE_SAMPLE = 10,
	GPUQ_EV_DOORBELL_COUNT = 11,
	/* written by the kernel side: a queue's properties changed */
	GPUQ_EV_QUEUE_UPDATE = 12,
	/* written by the kernel side: a queue was fenced to a set of CUs */
	GPUQ_EV_QUEUE_CU_MASK = 13,
	/* written by the agent into capture files: what its source lost */
	GPUQ_EV_SOURCE_DROPS = 14,
	/* written by the agent: the queue-shaping variables of a process */
	GPUQ_EV_PROCESS_KNOBS = 15,
	GPUQ_EV__MAX,
};

/*
 * Queue types: gpuq's own stable numbering, which is amdkfd's internal enum
 * kfd_queue_type (kfd_priv.h) up to 6.18. The kernel's numbering changed
 * (KFD_QUEUE_TYPE_DIQ was removed by 7.2, so SDMA_XGMI is 3 there), and so
 * does what /sys/class/kfd/kfd/proc/<pid>/queues/<qid>/type shows: bpf/
 * converts by the enumerator names of the running kernel's BTF
 * (kfd__queue_type), the agent converts sysfs values the same way
 * (sources/kfd_queue_types.h), and the create ioctl's uapi types are
 * converted too. Records always carry these values.
 */
enum gpuq_queue_type {
	GPUQ_QUEUE_COMPUTE = 0,
	GPUQ_QUEUE_SDMA = 1,
	GPUQ_QUEUE_HIQ = 2,
	GPUQ_QUEUE_DIQ = 3,
	GPUQ_QUEUE_SDMA_XGMI = 4,
	GPUQ_QUEUE_SDMA_BY_ENG_ID = 5, /* new in 6.12 */
	GPUQ_QUEUE__MAX,
	GPUQ_QUEUE_UNKNOWN = 255, /* a kernel value without a name gpuq knows */
};

/* kfd_queue_format: compute queues are AQL for ROCr, PM4 otherwise. */
enum gpuq_queue_format {
	GPUQ_QUEUE_FORMAT_PM4 = 0,
	GPUQ_QUEUE_FORMAT_AQL = 1,
};

enum gpuq_destroy_reason {
	GPUQ_DESTROY_UNKNOWN = 0,
	GPUQ_DESTROY_IOCTL = 1,	       /* the owner destroyed it (AMDKFD_IOC_DESTROY_QUEUE) */
	GPUQ_DESTROY_PROCESS_EXIT = 2, /* torn down with its process (kworker) */
	GPUQ_DESTROY__MAX,
};

/* Which kernel path produced a create record. */
#define GPUQ_CREATE_F_VIA_IOCTL (1u << 0) /* fallback: exit of kfd_ioctl_create_queue */
/*
 * agent: live when the capture began, not created in it: found in KFD sysfs
 * (no addresses), or with its create's fields and flags the start state of
 * a recording made by a running agent (Model::StateAsRecords).
 */
#define GPUQ_CREATE_F_SEEDED (1u << 1)
/*
 * write_ptr - 56 is a ROCr amd_queue_t: its base_address equals ring_address
 * and size * 64 equals ring_size (kfd-probe-points.md section 3). Then the
 * indexes count AQL packets and doorbell_handle is the queue's doorbell
 * signal. Without it (SDMA, non-ROCr clients) the queue is opaque.
 */
#define GPUQ_CREATE_F_ROCR_LAYOUT (1u << 2)
/*
 * agent (minor 4), with GPUQ_CREATE_F_SEEDED: reconciliation found the queue
 * in KFD sysfs after the agent started and no create record announced it
 * (a skipped program, a full ring buffer): counted as a create.
 */
#define GPUQ_CREATE_F_RECOVERED (1u << 3)

/* The queue was not in the live-queue map: created before the agent started. */
#define GPUQ_DESTROY_F_UNTRACKED (1u << 0)
/*
 * write_index holds the ROCr queue's amd_queue_t.write_dispatch_id, read in
 * the owner's context as it destroyed the queue (the ioctl): the packets
 * written since the sampler's last read are counted, not lost with the
 * queue's memory. Only for GPUQ_CREATE_F_ROCR_LAYOUT queues created while
 * the agent ran, and never for exit teardown (the mm is gone by then).
 */
#define GPUQ_DESTROY_F_WRITE_INDEX (1u << 1)
/*
 * agent (minor 4): reconciliation found the queue gone from KFD sysfs in two
 * passes and no destroy record came (reason GPUQ_DESTROY_UNKNOWN): counted
 * as its destroy; a destroy record arriving after it counts no second one.
 */
#define GPUQ_DESTROY_F_RECOVERED (1u << 2)

/* Reasons the kernel side lost an event; indexes of the `drops` map. */
enum gpuq_drop_reason {
	GPUQ_DROP_RINGBUF_FULL = 0,
	GPUQ_DROP_MAP_FULL = 1,
	/*
	 * tracepoint tier: a KFD create/destroy whose sys_exit program the
	 * kernel skipped (a tracepoint program preempted on that CPU, 7.x)
	 */
	GPUQ_DROP_KFD_EXIT_SKIPPED = 2,
	/*
	 * a KFD ioctl whose args a program could not read: in the tracepoint
	 * tier from user memory (a page not present: a tracepoint program
	 * cannot fault it in), elsewhere amdkfd's kernel copy (a create's
	 * return, an update's cause); its record is lost, not made up
	 */
	GPUQ_DROP_ARGS_UNREADABLE = 3,
	GPUQ_DROP__MAX,
};

struct gpuq_event_header {
	__u16 type;	   /* enum gpuq_event_type */
	__u16 size;	   /* whole record, header included, multiple of 8 */
	__u32 tgid;	   /* owner process, init pid namespace */
	__u64 ts_ns;	   /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id;   /* owner's cgroup v2 id, cached at create */
	__u64 process_key; /* struct kfd_process *: stable identity of the owner */
};
GPUQ_ABI_OFFSET(gpuq_event_header, type, 0);
GPUQ_ABI_OFFSET(gpuq_event_header, size, 2);
GPUQ_ABI_OFFSET(gpuq_event_header, tgid, 4);
GPUQ_ABI_OFFSET(gpuq_event_header, ts_ns, 8);
GPUQ_ABI_OFFSET(gpuq_event_header, cgroup_id, 16);
GPUQ_ABI_OFFSET(gpuq_event_header, process_key, 24);
GPUQ_ABI_SIZE(gpuq_event_header, 32); /* 2+2+4+8+8+8 */

struct gpuq_queue_create_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;	    /* KFD gpu_id (topology node's gpu_id) */
	__u32 queue_id;	    /* KFD queue id, unique within the owner process */
	__u32 queue_type;   /* enum gpuq_queue_type */
	__u32 queue_format; /* enum gpuq_queue_format */
	__u64 ring_address; /* user VA of the ring */
	__u64 ring_size;    /* bytes */
	__u64 read_ptr;	    /* user VA of the read index (ROCr: amd_queue_t+128) */
	__u64 write_ptr;    /* user VA of the write index (ROCr: amd_queue_t+56) */
	__u32 priority;	    /* 0..15 */
	__u32 percentage;   /* 0..100; 0 means inactive */
	__u32 flags;	    /* GPUQ_CREATE_F_* */
	__u32 pad;
	char comm[GPUQ_COMM_LEN];
	/* appended within minor 0; 0 where absent = unknown */
	__u64 doorbell_handle;	     /* hsa_signal_t.handle (GPUQ_CREATE_F_ROCR_LAYOUT) */
	__u64 write_index_at_create; /* amd_queue_t.write_dispatch_id when created */
};
GPUQ_ABI_OFFSET(gpuq_queue_create_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, queue_id, 36);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, queue_type, 40);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, queue_format, 44);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, ring_address, 48);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, ring_size, 56);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, read_ptr, 64);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, write_ptr, 72);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, priority, 80);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, percentage, 84);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, flags, 88);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, pad, 92);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, comm, 96);
/* Appended without a version bump: the original 112 bytes stay put. */
GPUQ_ABI_OFFSET(gpuq_queue_create_event, doorbell_handle, 112);
GPUQ_ABI_OFFSET(gpuq_queue_create_event, write_index_at_create, 120);
GPUQ_ABI_SIZE(gpuq_queue_create_event, 128); /* 32 + 4*4 + 4*8 + 4*4 + 16 + 2*8 */

struct gpuq_queue_destroy_event {
	struct gpuq_event_header hdr; /* owner fields from the create-time cache */
	__u32 gpu_id;
	__u32 queue_id;
	__u32 queue_type;
	__u32 reason; /* enum gpuq_destroy_reason */
	__u32 flags;  /* GPUQ_DESTROY_F_* */
	__u32 pad;
	/* appended within minor 0: records without it are 56 bytes */
	__u64 write_index; /* GPUQ_DESTROY_F_WRITE_INDEX */
};
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, queue_id, 36);
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, queue_type, 40);
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, reason, 44);
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, flags, 48);
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, pad, 52);
GPUQ_ABI_OFFSET(gpuq_queue_destroy_event, write_index, 56);
GPUQ_ABI_SIZE(gpuq_queue_destroy_event, 64); /* 32 + 6*4 + 8 */

struct gpuq_process_exit_event {
	struct gpuq_event_header hdr;
	char comm[GPUQ_COMM_LEN];
};
GPUQ_ABI_OFFSET(gpuq_process_exit_event, comm, 32);
GPUQ_ABI_SIZE(gpuq_process_exit_event, 48); /* 32 + 16 */

struct gpuq_queue_create_failed_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;	  /* as requested by user space */
	__u32 queue_type; /* enum gpuq_queue_type, converted from the uapi type */
	__s32 error;	  /* negative errno returned by the ioctl */
	__u32 pad;
	char comm[GPUQ_COMM_LEN];
};
GPUQ_ABI_OFFSET(gpuq_queue_create_failed_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_queue_create_failed_event, queue_type, 36);
GPUQ_ABI_OFFSET(gpuq_queue_create_failed_event, error, 40);
GPUQ_ABI_OFFSET(gpuq_queue_create_failed_event, pad, 44);
GPUQ_ABI_OFFSET(gpuq_queue_create_failed_event, comm, 48);
GPUQ_ABI_SIZE(gpuq_queue_create_failed_event, 64); /* 32 + 4*4 + 16 */

/* Runlist / MES operations (GPUQ_EV_RUNLIST.op). */
enum gpuq_runlist_op {
	GPUQ_RUNLIST_UNMAP = 0,	     /* HWS: unmap_queues_cpsch (preempts the runlist) */
	GPUQ_RUNLIST_MAP = 1,	     /* HWS: map_queues_cpsch (submits the runlist) */
	GPUQ_RUNLIST_MES_ADD = 2,    /* MES: add_queue_mes (one queue) */
	GPUQ_RUNLIST_MES_REMOVE = 3, /* MES: mes_v1x_0_remove_hw_queue (one queue) */
	GPUQ_RUNLIST_OP__MAX,
};

/* GPUQ_EV_RUNLIST.flags */
/* The runlist fields (processes ... compute_queue_limit) were read (HWS map, BTF tiers). */
#define GPUQ_RUNLIST_F_RUNLIST_READ (1u << 0)
/* With RUNLIST_READ: amdkfd built the runlist oversubscribed
 * (packet_manager.is_over_subscription): HWS time-slices it, chained. */
#define GPUQ_RUNLIST_F_OVERSUBSCRIBED (1u << 1)
/* With OVERSUBSCRIBED: the runlist mixes processes of both XNACK modes on a
 * GPU that chains on that (6.16+, OVER_SUBSCRIPTION_XNACK_CONFLICT); 0 where
 * the kernel has no such test, and in some captures of minor 0. */
#define GPUQ_RUNLIST_F_XNACK_CONFLICT (1u << 2)

/* The process-level operation a runlist operation ran inside (per-tid slot). */
enum gpuq_runlist_cause {
	GPUQ_CAUSE_UNKNOWN = 0,
	GPUQ_CAUSE_CREATE = 1,	  /* create_queue_cpsch */
	GPUQ_CAUSE_DESTROY = 2,	  /* destroy_queue_cpsch */
	GPUQ_CAUSE_EVICT = 3,	  /* evict_process_queues_* */
	GPUQ_CAUSE_RESTORE = 4,	  /* restore_process_queues_* */
	GPUQ_CAUSE_TERMINATE = 5, /* process_termination_* */
	GPUQ_CAUSE_UPDATE = 6,	  /* kfd_ioctl_update_queue */
	GPUQ_CAUSE__MAX,
};

/*
 * One runlist operation, written at its return. The header names the
 * process whose operation caused it (tgid/process_key/cgroup_id 0 when the
 * cause is unknown); ts_ns is the return time.
 */
struct gpuq_runlist_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;
	__u32 op;	   /* enum gpuq_runlist_op */
	__u32 cause;	   /* enum gpuq_runlist_cause */
	__u32 filter;	   /* UNMAP: kfd_unmap_queues_filter (1 all, 2 dynamic, 3 pasid); else 0 */
	__s32 ret;	   /* 0 or -errno; -ETIME (-62) on UNMAP: the scheduler hung */
	__u32 queue_id;	   /* MES ops: the queue (0 if unknown); HWS: 0 */
	__u64 duration_ns; /* entry to return */
	__u32 active_queues; /* dqm->active_queue_count at entry (HWS), else 0 */
	__u32 flags;	     /* GPUQ_RUNLIST_F_* (0 in some captures of minor 0) */
	/*
	 * Appended within minor 0, HWS map with GPUQ_RUNLIST_F_RUNLIST_READ: the
	 * runlist the map left, read at its return under the dqm lock, with the
	 * limits amdkfd's pm_calc_rlib_size (kfd_packet_manager.c) holds it to.
	 */
	__u32 processes;	   /* dqm->processes_count */
	__u32 compute_queues;	   /* dqm->active_cp_queue_count */
	__u32 gws_queues;	   /* dqm->gws_queue_count */
	__u32 process_limit;	   /* max(1, max_proc_per_quantum) of the device */
	__u32 compute_queue_limit; /* CP queue slots KFD owns: bits of cp_queue_bitmap */
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_runlist_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_runlist_event, op, 36);
GPUQ_ABI_OFFSET(gpuq_runlist_event, cause, 40);
GPUQ_ABI_OFFSET(gpuq_runlist_event, filter, 44);
GPUQ_ABI_OFFSET(gpuq_runlist_event, ret, 48);
GPUQ_ABI_OFFSET(gpuq_runlist_event, queue_id, 52);
GPUQ_ABI_OFFSET(gpuq_runlist_event, duration_ns, 56);
GPUQ_ABI_OFFSET(gpuq_runlist_event, active_queues, 64);
GPUQ_ABI_OFFSET(gpuq_runlist_event, flags, 68);
GPUQ_ABI_OFFSET(gpuq_runlist_event, processes, 72);
GPUQ_ABI_OFFSET(gpuq_runlist_event, compute_queue_limit, 88);
GPUQ_ABI_SIZE(gpuq_runlist_event, 96); /* 32 + 6*4 + 8 + 2*4 + 6*4 */

/* GPUQ_EV_EVICTION.kind */
enum gpuq_eviction_kind {
	GPUQ_EVICTION_EVICT = 0,   /* qpd->evicted went 0 -> 1: queues taken off the GPU */
	GPUQ_EVICTION_RESTORE = 1, /* qpd->evicted went 1 -> 0: queues back */
	GPUQ_EVICTION_KIND__MAX,
};

/* kfd_process_evict_queues() trigger (KFD_QUEUE_EVICTION_TRIGGER_*), plus unknown. */
enum gpuq_eviction_trigger {
	GPUQ_TRIGGER_SVM = 0,
	GPUQ_TRIGGER_USERPTR = 1,
	GPUQ_TRIGGER_TTM = 2,
	GPUQ_TRIGGER_SUSPEND = 3,
	GPUQ_TRIGGER_CRIU_CHECKPOINT = 4,
	GPUQ_TRIGGER_CRIU_RESTORE = 5,
	GPUQ_TRIGGER__KNOWN,
	GPUQ_TRIGGER_UNKNOWN = 255, /* not via kfd_process_evict_queues (VM fault, ...) */
};

/*
 * A real eviction state change of one process on one GPU. Only transitions
 * are written (nested evictions only bump qpd->evicted). The header is the
 * owner (qpd->pqm->process), never current: evictions run in kworkers and
 * other tasks.
 */
struct gpuq_eviction_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;
	__u32 kind;	   /* enum gpuq_eviction_kind */
	__u32 trigger;	   /* enum gpuq_eviction_trigger; RESTORE: UNKNOWN */
	__s32 ret;	   /* return of the evict/restore function */
	__u64 duration_ns; /* time inside the evict/restore function */
	__u32 queues;	   /* qpd->queue_count */
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_eviction_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_eviction_event, kind, 36);
GPUQ_ABI_OFFSET(gpuq_eviction_event, trigger, 40);
GPUQ_ABI_OFFSET(gpuq_eviction_event, ret, 44);
GPUQ_ABI_OFFSET(gpuq_eviction_event, duration_ns, 48);
GPUQ_ABI_OFFSET(gpuq_eviction_event, queues, 56);
GPUQ_ABI_SIZE(gpuq_eviction_event, 64); /* 32 + 4*4 + 8 + 2*4 */

/* The sample could not be read (the process is gone, or the page is not mapped). */
#define GPUQ_SAMPLE_F_UNREADABLE (1u << 0)
/* With UNREADABLE: the agent has no ptrace access to the owner (it lacks
 * CAP_SYS_PTRACE, or Yama forbids it). Older readers see an unreadable sample. */
#define GPUQ_SAMPLE_F_DENIED (1u << 1)

/*
 * Agent-written: the write and read indexes of one queue as the sampler read
 * them from the owner's memory between read_begin_ns and hdr.ts_ns. Replays
 * apply the same deltas.
 */
struct gpuq_queue_sample_record {
	struct gpuq_event_header hdr; /* the queue's owner */
	__u32 gpu_id;
	__u32 queue_id;
	__u64 write_index; /* amd_queue_t.write_dispatch_id: AQL packets reserved */
	__u64 read_index;  /* amd_queue_t.read_dispatch_id: packets the CP consumed */
	__u32 flags;	   /* GPUQ_SAMPLE_F_* */
	__u32 pad;
	/* appended within minor 0 (0 where absent: not checked): the user VA
	 * the write index was read at. A sample of a queue destroyed since its
	 * read, whose queue_id a new queue took, is not the new queue's. */
	__u64 write_ptr;
	/* appended within minor 0 (0 where absent: not checked): when the read
	 * began; hdr.ts_ns is when it ended. A queue whose create record is
	 * stamped after the read began may have been read before it existed
	 * (its amd_queue_t still the destroyed predecessor's): not its sample. */
	__u64 read_begin_ns;
};
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, queue_id, 36);
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, write_index, 40);
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, read_index, 48);
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, flags, 56);
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, write_ptr, 64);
GPUQ_ABI_OFFSET(gpuq_queue_sample_record, read_begin_ns, 72);
GPUQ_ABI_SIZE(gpuq_queue_sample_record, 80); /* 32 + 2*4 + 2*8 + 2*4 + 2*8 */

/*
 * Packet classes of doorbell counts, by the AQL header of the rung slot:
 * its packet type (byte 0, hsa_packet_type_t) and, for a vendor-specific
 * packet, AMD's format (byte 2, hsa_amd_vendor_packet_header_t.AmdFormat).
 */
enum gpuq_packet_class {
	GPUQ_PACKET_DISPATCH = 0,   /* KERNEL_DISPATCH */
	GPUQ_PACKET_BARRIER = 1,    /* BARRIER_AND, BARRIER_OR */
	GPUQ_PACKET_OTHER = 2,	    /* other VENDOR_SPECIFIC, AGENT_DISPATCH, INVALID */
	GPUQ_PACKET_UNREADABLE = 3, /* header not readable */
	/*
	 * VENDOR_SPECIFIC with AmdFormat HSA_AMD_PACKET_TYPE_EXT_KERNEL_DISPATCH
	 * (3): a kernel dispatch, as CLR writes every launch and graph node on
	 * gfx12.5 (ROCr's hsa_ext_amd.h from interface 1.21; ABI minor 2).
	 */
	GPUQ_PACKET_EXT_DISPATCH = 4,
	GPUQ_PACKET__MAX,
};
/* hsa_packet_type_t and AMD's vendor formats the classes are made of */
#define GPUQ_AQL_TYPE_VENDOR_SPECIFIC 0
#define GPUQ_AQL_TYPE_KERNEL_DISPATCH 2
#define GPUQ_AQL_TYPE_BARRIER_AND 3
#define GPUQ_AQL_TYPE_BARRIER_OR 5
#define GPUQ_AMD_FORMAT_EXT_KERNEL_DISPATCH 3
/* hsa_packet_header_t: the barrier bit of every AQL packet's header */
#define GPUQ_AQL_HEADER_BARRIER 8

/*
 * Agent-written (--doorbells=uprobe): cumulative doorbell counts of one
 * doorbell signal of one process, as the kernel map held them at hdr.ts_ns.
 * hdr.cgroup_id is the ringer's; gpu_id/queue_id come from the queue whose
 * doorbell_handle matched (0/0 when none did). doorbells counts the rings,
 * by_packet the AQL packets they published (one ring may publish many: HIP
 * 7's graph batches). Some captures of minor 0 count rings in by_packet
 * too, by the rung slot's type: the same numbers under HIP 5 and 6, which
 * ring once per packet, not under HIP 7 (GPUQ_ABI_MINOR 1 says packets).
 */
struct gpuq_doorbell_count_record {
	struct gpuq_event_header hdr;
	__u64 doorbell_handle;
	__u32 gpu_id;
	__u32 queue_id;
	__u64 doorbells;		   /* rings */
	__u64 by_packet[GPUQ_PACKET__MAX]; /* packets, by enum gpuq_packet_class */
	/*
	 * Kernel dispatches (HSA or AMD extended) published with the header's
	 * barrier bit set: each waits for every packet before it on its queue,
	 * so streams that share a hardware queue run one after the other.
	 */
	__u64 barrier_dispatches;
};
GPUQ_ABI_OFFSET(gpuq_doorbell_count_record, doorbell_handle, 32);
GPUQ_ABI_OFFSET(gpuq_doorbell_count_record, gpu_id, 40);
GPUQ_ABI_OFFSET(gpuq_doorbell_count_record, queue_id, 44);
GPUQ_ABI_OFFSET(gpuq_doorbell_count_record, doorbells, 48);
GPUQ_ABI_OFFSET(gpuq_doorbell_count_record, by_packet, 56);
GPUQ_ABI_OFFSET(gpuq_doorbell_count_record, barrier_dispatches, 96);
GPUQ_ABI_SIZE(gpuq_doorbell_count_record, 104); /* 32 + 8 + 2*4 + 8 + 6*8 */

/*
 * Agent-written by `record` as a capture's last record: the events the
 * recording agent's source lost before they could reach the capture,
 * cumulative since it started (the reasons of gpuq_events_dropped_total that
 * happen before the model), so a replay or report of the capture counts them
 * as the recording agent's /metrics did. hdr.tgid and hdr.cgroup_id are 0. A
 * capture may hold several (a re-recorded one): the last counts.
 */
struct gpuq_source_drops_record {
	struct gpuq_event_header hdr;
	__u64 ringbuf_full;	 /* the kernel could not reserve ring space */
	__u64 map_full;		 /* the kernel's live-queue map was full */
	__u64 decode_error;	 /* records the agent could not decode */
	__u64 prog_skipped;	 /* runs of its BPF programs the kernel skipped */
	__u64 kfd_exit_skipped;	 /* tracepoint tier: KFD exits skipped */
	__u64 args_unreadable;	 /* tracepoint tier: ioctl args unreadable */
	__u64 doorbell_map_full; /* doorbells the doorbell map had no room for */
};
GPUQ_ABI_OFFSET(gpuq_source_drops_record, ringbuf_full, 32);
GPUQ_ABI_OFFSET(gpuq_source_drops_record, map_full, 40);
GPUQ_ABI_OFFSET(gpuq_source_drops_record, decode_error, 48);
GPUQ_ABI_OFFSET(gpuq_source_drops_record, prog_skipped, 56);
GPUQ_ABI_OFFSET(gpuq_source_drops_record, kfd_exit_skipped, 64);
GPUQ_ABI_OFFSET(gpuq_source_drops_record, args_unreadable, 72);
GPUQ_ABI_OFFSET(gpuq_source_drops_record, doorbell_map_full, 80);
GPUQ_ABI_SIZE(gpuq_source_drops_record, 88); /* 32 + 7*8 */

/*
 * The runtime variables that shape how many hardware queues a HIP or HSA
 * process creates and how its streams share them (name, slot of
 * gpuq_process_knobs_record.values); the agent's table of names is made from
 * this list. docs/kfd-probe-points.md ("Runtime knobs") cites the CLR and
 * ROCr lines that read each; the agent keeps these names and no other
 * variable (agent/sources/runtime_knobs.cc). A new knob takes the next free
 * slot; a slot's meaning never changes.
 */
#define GPUQ_RUNTIME_KNOBS(X)                                                                      \
	X(GPU_MAX_HW_QUEUES, 0)                                                                    \
	X(DEBUG_HIP_DYNAMIC_QUEUES, 1)                                                             \
	X(DEBUG_HIP_IGNORE_STREAM_PRIORITY, 2)                                                     \
	X(GPU_ENABLE_COOP_GROUPS, 3)                                                               \
	X(ROC_GLOBAL_CU_MASK, 4)                                                                   \
	X(DEBUG_HIP_FORCE_GRAPH_QUEUES, 5)                                                         \
	X(HSA_ENABLE_SDMA, 6)                                                                      \
	X(HSA_ENABLE_PEER_SDMA, 7)                                                                 \
	X(HSA_ENABLE_SDMA_GANG, 8)                                                                 \
	X(ROCR_VISIBLE_DEVICES, 9)                                                                 \
	X(HIP_VISIBLE_DEVICES, 10)                                                                 \
	X(CUDA_VISIBLE_DEVICES, 11)
#define GPUQ_KNOB_ENUMERATOR(name, slot) GPUQ_KNOB_##name = slot,
enum gpuq_runtime_knob { GPUQ_RUNTIME_KNOBS(GPUQ_KNOB_ENUMERATOR) GPUQ_KNOB__MAX };
#undef GPUQ_KNOB_ENUMERATOR
#define GPUQ_KNOB_SLOTS 16     /* room for knobs added later, same size */
#define GPUQ_KNOB_VALUE_LEN 24 /* a value, NUL-terminated, cut if longer */

/*
 * Agent-written (the sampler, once per process it has ptrace access to): the
 * knobs set in the process's initial environment (/proc/PID/environ, what it
 * was started with; a setenv() inside the process is not seen). hdr is the
 * process's. Bit k of `set` says knob k was in the environment, bit k of
 * `cut` that its value was longer than GPUQ_KNOB_VALUE_LEN - 1 bytes and is
 * cut there.
 */
struct gpuq_process_knobs_record {
	struct gpuq_event_header hdr;
	__u32 set;
	__u32 cut;
	char values[GPUQ_KNOB_SLOTS][GPUQ_KNOB_VALUE_LEN];
};
GPUQ_ABI_OFFSET(gpuq_process_knobs_record, set, 32);
GPUQ_ABI_OFFSET(gpuq_process_knobs_record, cut, 36);
GPUQ_ABI_OFFSET(gpuq_process_knobs_record, values, 40);
GPUQ_ABI_SIZE(gpuq_process_knobs_record, 424); /* 32 + 2*4 + 16*24 */
GPUQ_ABI_ASSERT(GPUQ_KNOB__MAX <= GPUQ_KNOB_SLOTS, "every knob has a slot");

/*
 * A successful AMDKFD_IOC_UPDATE_QUEUE (amdkfd's pqm_update_queue_properties):
 * the queue's new ring, percentage and priority, as the uapi args gave them
 * (amdkfd keeps percentage & 0xff: bits 8-15 name a PM4 queue's XCC). hdr
 * is the owner's; gpu_id is 0 for a queue created before the agent ran (the
 * model finds it by its owner and queue id).
 */
struct gpuq_queue_update_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;
	__u32 queue_id;
	__u64 ring_address;
	__u32 ring_size;  /* bytes */
	__u32 percentage; /* as given; & 0xff is the percentage, 0 inactive */
	__u32 priority;	  /* 0..15 */
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_queue_update_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_queue_update_event, queue_id, 36);
GPUQ_ABI_OFFSET(gpuq_queue_update_event, ring_address, 40);
GPUQ_ABI_OFFSET(gpuq_queue_update_event, ring_size, 48);
GPUQ_ABI_OFFSET(gpuq_queue_update_event, percentage, 52);
GPUQ_ABI_OFFSET(gpuq_queue_update_event, priority, 56);
GPUQ_ABI_SIZE(gpuq_queue_update_event, 64); /* 32 + 2*4 + 8 + 4*4 */

/*
 * A successful AMDKFD_IOC_SET_CU_MASK (amdkfd's kfd_ioctl_set_cu_mask, the
 * same from 6.1 to 7.3): the queue may run on the CUs whose bits are set,
 * CU i being bit i % 32 of word i / 32. amdkfd takes num_cu_mask bits (a
 * multiple of 32), at most max_num_cus = 1024 of them, and keeps the mask
 * in the queue's MQD until the next set. hdr is the owner's; gpu_id is 0 for
 * a queue created before the agent ran (found by owner and queue id).
 */
#define GPUQ_CU_MASK_WORDS 32 /* 1024 bits, amdkfd's max_num_cus */
struct gpuq_queue_cu_mask_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;
	__u32 queue_id;
	__u32 num_cu_mask; /* bits, as the caller gave them */
	__u32 words_read;  /* of mask[]: min(num_cu_mask / 32, 32); 0: unread */
	__u32 mask[GPUQ_CU_MASK_WORDS];
};
GPUQ_ABI_OFFSET(gpuq_queue_cu_mask_event, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_queue_cu_mask_event, queue_id, 36);
GPUQ_ABI_OFFSET(gpuq_queue_cu_mask_event, num_cu_mask, 40);
GPUQ_ABI_OFFSET(gpuq_queue_cu_mask_event, words_read, 44);
GPUQ_ABI_OFFSET(gpuq_queue_cu_mask_event, mask, 48);
GPUQ_ABI_SIZE(gpuq_queue_cu_mask_event, 176); /* 32 + 4*4 + 32*4 */

/* Agent-written: one KFD topology node, from /sys/class/kfd/kfd/topology. */
struct gpuq_gpu_info_record {
	struct gpuq_event_header hdr;
	__u32 gpu_id;
	__u32 node;
	__u32 vendor_id;
	__u32 device_id;
	__u32 location_id; /* PCI bus << 8 | devfn */
	__u32 domain;	   /* PCI domain */
	__u32 drm_render_minor;
	__u32 gfx_target_version;
	__u64 unique_id;
	__u32 simd_count;
	__u32 num_xcc;
	char name[GPUQ_GPU_NAME_LEN];
	/* appended within minor 0: 0 where absent (the CUs are unknown) */
	__u32 simd_per_cu; /* active CUs = simd_count / simd_per_cu */
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, gpu_id, 32);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, node, 36);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, vendor_id, 40);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, device_id, 44);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, location_id, 48);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, domain, 52);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, drm_render_minor, 56);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, gfx_target_version, 60);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, unique_id, 64);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, simd_count, 72);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, num_xcc, 76);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, name, 80);
GPUQ_ABI_OFFSET(gpuq_gpu_info_record, simd_per_cu, 112);
GPUQ_ABI_SIZE(gpuq_gpu_info_record, 120); /* 32 + 8*4 + 8 + 2*4 + 32 + 2*4 */

/* Agent-written: hdr.cgroup_id resolved to a path; path_len bytes follow. */
struct gpuq_cgroup_path_record {
	struct gpuq_event_header hdr;
	__u32 path_len; /* bytes of path that follow, no NUL */
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_cgroup_path_record, path_len, 32);
GPUQ_ABI_OFFSET(gpuq_cgroup_path_record, pad, 36);
GPUQ_ABI_SIZE(gpuq_cgroup_path_record, 40); /* 32 + 2*4 */
/* The longest path must fit the u16 hdr.size. */
GPUQ_ABI_ASSERT(40 + GPUQ_CGROUP_PATH_MAX <= 0xffff, "a cgroup path record fits hdr.size");

/*
 * Agent-written: what the container runtime said about the container
 * hdr.cgroup_id belongs to, as payload_len bytes of JSON that follow:
 * {"name","pod","namespace","container","labels":{...}}.
 */
#define GPUQ_CONTAINER_META_MAX 32768
struct gpuq_container_meta_record {
	struct gpuq_event_header hdr;
	__u32 payload_len;
	__u32 pad;
};
GPUQ_ABI_OFFSET(gpuq_container_meta_record, payload_len, 32);
GPUQ_ABI_OFFSET(gpuq_container_meta_record, pad, 36);
GPUQ_ABI_SIZE(gpuq_container_meta_record, 40); /* 32 + 2*4 */
GPUQ_ABI_ASSERT(40 + GPUQ_CONTAINER_META_MAX <= 0xffff, "a metadata record fits hdr.size");

/* Capture file: this header, then records back to back. */
#define GPUQ_CAPTURE_MAGIC "GPUQCAP1"
struct gpuq_capture_header {
	char magic[8];	   /* GPUQ_CAPTURE_MAGIC, no NUL */
	__u32 abi_version; /* GPUQ_ABI_VERSION of the writer */
	__u32 header_size; /* sizeof(struct gpuq_capture_header) */
	__u64 start_realtime_ns;
	__u64 start_monotonic_ns;
	__u32 flags;
	__u32 abi_minor; /* GPUQ_ABI_MINOR of the writer (0: before minors) */
};
GPUQ_ABI_OFFSET(gpuq_capture_header, magic, 0);
GPUQ_ABI_OFFSET(gpuq_capture_header, abi_version, 8);
GPUQ_ABI_OFFSET(gpuq_capture_header, header_size, 12);
GPUQ_ABI_OFFSET(gpuq_capture_header, start_realtime_ns, 16);
GPUQ_ABI_OFFSET(gpuq_capture_header, start_monotonic_ns, 24);
GPUQ_ABI_OFFSET(gpuq_capture_header, flags, 32);
GPUQ_ABI_OFFSET(gpuq_capture_header, abi_minor, 36);
GPUQ_ABI_SIZE(gpuq_capture_header, 40); /* 8 + 2*4 + 2*8 + 2*4 */
/* The magic fills its field exactly, without a NUL. */
GPUQ_ABI_ASSERT(sizeof(GPUQ_CAPTURE_MAGIC) - 1 == 8, "GPUQ_CAPTURE_MAGIC is 8 bytes");

#endif /* GPUQ_ABI_H */

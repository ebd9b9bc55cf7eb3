/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpuq event ABI: the one definition of what crosses from bpf/ to agent/ and
 * what a capture file holds. Included by both sides, so only fixed-width
 * kernel types, explicit padding and no pointers.
 *
 * Every record starts with struct gpuq_event_header. `size` is the whole
 * record in bytes, a multiple of 8; decoders reject records whose size is
 * smaller than the type's struct, and skip trailing bytes of larger ones, so a
 * minor ABI change may append fields. Bump GPUQ_ABI_VERSION when a field moves,
 * changes meaning or is removed (see docs/abi.md).
 */
#ifndef GPUQ_ABI_H
#define GPUQ_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GPUQ_ABI_VERSION 1

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
	GPUQ_EV__MAX,
};

/*
 * Queue types as amdkfd's internal enum kfd_queue_type (kfd_priv.h), which is
 * also what /sys/class/kfd/kfd/proc/<pid>/queues/<qid>/type shows. The uapi
 * enum of the create ioctl differs; bpf/ converts it.
 */
enum gpuq_queue_type {
	GPUQ_QUEUE_COMPUTE = 0,
	GPUQ_QUEUE_SDMA = 1,
	GPUQ_QUEUE_HIQ = 2,
	GPUQ_QUEUE_DIQ = 3,
	GPUQ_QUEUE_SDMA_XGMI = 4,
	GPUQ_QUEUE_SDMA_BY_ENG_ID = 5, /* new in 6.12 */
	GPUQ_QUEUE__MAX,
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
#define GPUQ_CREATE_F_SEEDED (1u << 1)	  /* agent: queue found in KFD sysfs at start */

/* The queue was not in the live-queue map: created before the agent started. */
#define GPUQ_DESTROY_F_UNTRACKED (1u << 0)

/* Reasons the kernel side lost an event; indexes of the `drops` map. */
enum gpuq_drop_reason {
	GPUQ_DROP_RINGBUF_FULL = 0,
	GPUQ_DROP_MAP_FULL = 1,
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
};

struct gpuq_queue_destroy_event {
	struct gpuq_event_header hdr; /* owner fields from the create-time cache */
	__u32 gpu_id;
	__u32 queue_id;
	__u32 queue_type;
	__u32 reason; /* enum gpuq_destroy_reason */
	__u32 flags;  /* GPUQ_DESTROY_F_* */
	__u32 pad;
};

struct gpuq_process_exit_event {
	struct gpuq_event_header hdr;
	char comm[GPUQ_COMM_LEN];
};

struct gpuq_queue_create_failed_event {
	struct gpuq_event_header hdr;
	__u32 gpu_id;	  /* as requested by user space */
	__u32 queue_type; /* enum gpuq_queue_type, converted from the uapi type */
	__s32 error;	  /* negative errno returned by the ioctl */
	__u32 pad;
	char comm[GPUQ_COMM_LEN];
};

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
};

/* Agent-written: hdr.cgroup_id resolved to a path; path_len bytes follow. */
struct gpuq_cgroup_path_record {
	struct gpuq_event_header hdr;
	__u32 path_len; /* bytes of path that follow, no NUL */
	__u32 pad;
};

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

/* Capture file: this header, then records back to back. */
#define GPUQ_CAPTURE_MAGIC "GPUQCAP1"
struct gpuq_capture_header {
	char magic[8];	   /* GPUQ_CAPTURE_MAGIC, no NUL */
	__u32 abi_version; /* GPUQ_ABI_VERSION of the writer */
	__u32 header_size; /* sizeof(struct gpuq_capture_header) */
	__u64 start_realtime_ns;
	__u64 start_monotonic_ns;
	__u32 flags;
	__u32 reserved;
};

#endif /* GPUQ_ABI_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * amdkfd as Debian's 6.1.192 amdgpu.ko describes it in BTF: only the structs
 * and fields gpuq's CO-RE reads touch, at their real offsets
 * (docs/kfd-probe-points.md, Appendix A). Compiled with -g into an
 * object whose .BTF the host tests pass as btf_custom_path, so the verifier
 * checks the full hook bodies on a host without amdgpu. Stands for the real
 * module BTF; tests/kernel (QEMU, Debian kernels) covers the real one, and
 * tests/bpf/layout_btf_test.sh holds this file to it (kind and offset of
 * every amdkfd field and enumerator gpuq reads: a field missing here would
 * leave the program paths that read it dead in the verifier tests).
 *
 * 6.1 shape: queue->device is a struct kfd_dev (no struct kfd_node yet), the
 * wptr/rptr fields are uint32_t pointers, is_active at +70.
 */
#include "vmlinux.h"

enum kfd_queue_type {
	KFD_QUEUE_TYPE_COMPUTE,
	KFD_QUEUE_TYPE_SDMA,
	KFD_QUEUE_TYPE_HIQ,
	KFD_QUEUE_TYPE_DIQ,
	KFD_QUEUE_TYPE_SDMA_XGMI,
	KFD_QUEUE_TYPE_MAX,
};
enum kfd_queue_format { KFD_QUEUE_FORMAT_PM4, KFD_QUEUE_FORMAT_AQL };

struct queue_properties {
	enum kfd_queue_type type;
	enum kfd_queue_format format;
	unsigned int queue_id;
	__u64 queue_address;
	__u64 queue_size;
	__u32 priority;
	__u32 queue_percent;
	__u32 *read_ptr;
	__u32 *write_ptr;
	void *doorbell_ptr;
	__u32 doorbell_off;
	bool is_interop;
	bool is_evicted;
	bool is_active;
	bool is_gws;
	char rest[64];
};

struct kgd2kfd_shared_resources {
	char head[16];
	unsigned long cp_queue_bitmap[2];
	char rest[56];
};

struct kfd_dev {
	char head[96];
	unsigned int id;
	char mid[28];
	struct kgd2kfd_shared_resources shared_resources; /* +128 */
	char mid2[368];
	unsigned int max_proc_per_quantum; /* +584 */
};

struct kfd_process {
	char head[96];
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
	char mid[928 - 104 - sizeof(struct mmu_notifier)];
	bool xnack_enabled; /* +928 */
};

/* amdgpu_gmc has no xnack_flags before 6.16: gpuq reads xnack_enabled then */
struct amdgpu_gmc {
	char opaque[8]; /* nothing in it is read here, nor after it */
};

struct amdgpu_device {
	char head[2952];
	struct amdgpu_gmc gmc; /* +2952 */
};

struct queue {
	char head[40];
	struct queue_properties properties;
	char mid[24];
	struct kfd_process *process;
	struct kfd_dev *device;
};

struct packet_manager {
	struct device_queue_manager *dqm;
	char mid[60];
	bool is_over_subscription; /* +68 */
	char rest[11];
};

struct device_queue_manager {
	char head[224];
	struct packet_manager packet_mgr; /* +224 */
	struct kfd_dev *dev;		  /* +304 */
	char mid[32];
	struct list_head queues; /* +344: the processes (device_process_node) */
	char mid2[4];
	unsigned int processes_count;	    /* +364 */
	unsigned int active_queue_count;    /* +368 */
	unsigned int active_cp_queue_count; /* +372 */
	unsigned int gws_queue_count;	    /* +376 */
};

struct device_process_node {
	struct qcm_process_device *qpd;
	struct list_head list;
};

struct process_queue_manager {
	struct kfd_process *process;
};

struct qcm_process_device {
	struct device_queue_manager *dqm;
	struct process_queue_manager *pqm;
	char lists[32];
	unsigned int queue_count;
	unsigned int vmid;
	bool is_debug;
	unsigned int evicted;
};

struct mes_remove_queue_input {
	__u32 doorbell_offset;
	__u64 gang_context_addr;
};

_Static_assert(__builtin_offsetof(struct queue_properties, write_ptr) == 48, "6.1 layout");
_Static_assert(__builtin_offsetof(struct queue_properties, is_active) == 70, "6.1 layout");
_Static_assert(__builtin_offsetof(struct queue, properties) == 40, "6.1 layout");
_Static_assert(__builtin_offsetof(struct queue, process) == 200, "6.1 layout");
_Static_assert(__builtin_offsetof(struct queue, device) == 208, "6.1 layout");
_Static_assert(__builtin_offsetof(struct kfd_dev, id) == 96, "6.1 layout");
_Static_assert(__builtin_offsetof(struct kfd_process, mmu_notifier) == 104, "6.1 layout");

_Static_assert(__builtin_offsetof(struct queue_properties, doorbell_off) == 64, "6.1 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, dev) == 304, "6.1 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, active_queue_count) == 368,
	       "6.1 layout");
_Static_assert(__builtin_offsetof(struct qcm_process_device, pqm) == 8, "6.1 layout");
_Static_assert(__builtin_offsetof(struct qcm_process_device, queue_count) == 48, "6.1 layout");
_Static_assert(__builtin_offsetof(struct qcm_process_device, evicted) == 60, "6.1 layout");
_Static_assert(__builtin_offsetof(struct process_queue_manager, process) == 0, "6.1 layout");
_Static_assert(__builtin_offsetof(struct mes_remove_queue_input, doorbell_offset) == 0,
	       "6.1 layout");
/* the runlist a map leaves (bpf/runlist.bpf.h handle_map_exit), by the real BTF */
_Static_assert(__builtin_offsetof(struct device_queue_manager, packet_mgr) == 224, "6.1 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, processes_count) == 364,
	       "6.1 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, active_cp_queue_count) == 372,
	       "6.1 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, gws_queue_count) == 376,
	       "6.1 layout");
_Static_assert(__builtin_offsetof(struct packet_manager, is_over_subscription) == 68, "6.1 layout");
_Static_assert(__builtin_offsetof(struct kfd_dev, shared_resources) == 128, "6.1 layout");
_Static_assert(__builtin_offsetof(struct kfd_dev, max_proc_per_quantum) == 584, "6.1 layout");
_Static_assert(__builtin_offsetof(struct kgd2kfd_shared_resources, cp_queue_bitmap) == 16,
	       "6.1 layout");
_Static_assert(sizeof(struct kgd2kfd_shared_resources) == 88, "6.1 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, queues) == 344, "6.1 layout");
_Static_assert(__builtin_offsetof(struct kfd_process, xnack_enabled) == 928, "6.1 layout");
_Static_assert(__builtin_offsetof(struct amdgpu_device, gmc) == 2952, "6.1 layout");
/* Globals make clang emit BTF for these types and all they reference. */
struct queue gpuq_layout_queue;
struct kfd_process gpuq_layout_process;
struct kfd_dev gpuq_layout_dev;
struct device_queue_manager gpuq_layout_dqm;
struct process_queue_manager gpuq_layout_pqm;
struct device_process_node gpuq_layout_process_node;
struct amdgpu_device gpuq_layout_amdgpu;
struct qcm_process_device gpuq_layout_qpd;
struct mes_remove_queue_input gpuq_layout_mes_remove;
struct css_set gpuq_layout_css_set;
struct kernfs_node gpuq_layout_kernfs_node;
/* vmlinux types the hooks walk, emitted in full (a pointee alone is a FWD) */
struct pt_regs gpuq_layout_pt_regs;
struct task_struct gpuq_layout_task;
/* the exit read checks signal->live (bpf/exit_read.bpf.h) */
struct signal_struct gpuq_layout_signal;
struct cgroup gpuq_layout_cgroup;
/* the args tier reads filep->private_data at kfd_ioctl */
struct file gpuq_layout_file;

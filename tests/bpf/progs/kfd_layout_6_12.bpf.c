// SPDX-License-Identifier: GPL-2.0
/*
 * amdkfd as Debian's 6.12.117 amdgpu.ko describes it in BTF (see
 * kfd_layout_6_1.bpf.c for why this exists). 6.12 shape: queue->device is a
 * struct kfd_node (6.5, multi-partition), struct kfd_dev still exists with
 * an unrelated layout, wptr/rptr are void pointers, is_suspended and
 * is_being_destroyed push is_active to +72, SDMA_BY_ENG_ID exists.
 *
 * Built a second time with -DGPUQ_LAYOUT_BADTYPE as a NEGATIVE CONTROL:
 * queue_properties.type declared as __u32 instead of the kernel's enum.
 * libbpf must refuse to relocate that read, so loading against it must fail:
 * proof that the layout tests relocate and verify the amdkfd reads rather
 * than a dead branch. A third time with -DGPUQ_LAYOUT_BADSCHED, the same for
 * the eviction hooks: qcm_process_device.evicted as a struct.
 */
#include "vmlinux.h"

enum kfd_queue_type {
	KFD_QUEUE_TYPE_COMPUTE,
	KFD_QUEUE_TYPE_SDMA,
	KFD_QUEUE_TYPE_HIQ,
	KFD_QUEUE_TYPE_DIQ,
	KFD_QUEUE_TYPE_SDMA_XGMI,
	KFD_QUEUE_TYPE_SDMA_BY_ENG_ID,
	KFD_QUEUE_TYPE_MAX,
};
enum kfd_queue_format { KFD_QUEUE_FORMAT_PM4, KFD_QUEUE_FORMAT_AQL };

struct queue_properties {
#ifdef GPUQ_LAYOUT_BADTYPE
	__u32 type;
#else
	enum kfd_queue_type type;
#endif
	enum kfd_queue_format format;
	unsigned int queue_id;
	__u64 queue_address;
	__u64 queue_size;
	__u32 priority;
	__u32 queue_percent;
	void *read_ptr;
	void *write_ptr;
	void *doorbell_ptr;
	__u32 doorbell_off;
	bool is_interop;
	bool is_evicted;
	bool is_suspended;
	bool is_being_destroyed;
	bool is_active;
	bool is_gws;
	char rest[126];
};

struct kgd2kfd_shared_resources {
	char head[16];
	unsigned long cp_queue_bitmap[2];
	char rest[56];
};

struct kfd_dev {
	char head[36];
	unsigned int num_nodes; /* not the gpu_id: kfd_node has it now */
	char mid[56];
	struct kgd2kfd_shared_resources shared_resources; /* +96 */
};

struct kfd_node {
	char head[8];
	struct amdgpu_device *adev; /* +8 */
	char head2[20];
	unsigned int id;
	char mid[144];
	unsigned int max_proc_per_quantum; /* +184 */
	char mid2[28];
	struct kfd_dev *kfd; /* +216 */
};

struct kfd_process {
	char head[96];
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
	char mid[1920 - 104 - sizeof(struct mmu_notifier)];
	bool xnack_enabled; /* +1920 */
};

/* amdgpu_gmc has no xnack_flags before 6.16: gpuq reads xnack_enabled then */
struct amdgpu_gmc {
	char opaque[8]; /* nothing in it is read here, nor after it */
};

struct amdgpu_device {
	char head[3032];
	struct amdgpu_gmc gmc; /* +3032 */
};

struct queue {
	char head[40];
	struct queue_properties properties;
	char mid[24];
	struct kfd_process *process;
	struct kfd_node *device;
};

struct packet_manager {
	struct device_queue_manager *dqm;
	char mid[60];
	bool is_over_subscription; /* +68 */
	char rest[11];
};

struct device_queue_manager {
	char head[232];
	struct packet_manager packet_mgr; /* +232 */
	struct kfd_node *dev;		  /* +312 */
	char mid[32];
	struct list_head queues; /* +352: the processes (device_process_node) */
	char mid2[4];
	unsigned int processes_count;	    /* +372 */
	unsigned int active_queue_count;    /* +376 */
	unsigned int active_cp_queue_count; /* +380 */
	unsigned int gws_queue_count;	    /* +384 */
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
#ifdef GPUQ_LAYOUT_BADSCHED
	struct gpuq_layout_bad {
		unsigned int n;
	} evicted; /* not the kernel's count */
#else
	unsigned int evicted;
#endif
};

struct mes_remove_queue_input {
	__u32 doorbell_offset;
	__u64 gang_context_addr;
};

_Static_assert(__builtin_offsetof(struct queue_properties, write_ptr) == 48, "6.12 layout");
_Static_assert(__builtin_offsetof(struct queue_properties, is_active) == 72, "6.12 layout");
_Static_assert(__builtin_offsetof(struct queue, properties) == 40, "6.12 layout");
_Static_assert(__builtin_offsetof(struct queue, process) == 264, "6.12 layout");
_Static_assert(__builtin_offsetof(struct queue, device) == 272, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_node, id) == 36, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_node, adev) == 8, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_node, kfd) == 216, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_process, mmu_notifier) == 104, "6.12 layout");

_Static_assert(__builtin_offsetof(struct queue_properties, doorbell_off) == 64, "6.12 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, dev) == 312, "6.12 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, active_queue_count) == 376,
	       "6.12 layout");
_Static_assert(__builtin_offsetof(struct qcm_process_device, pqm) == 8, "6.12 layout");
_Static_assert(__builtin_offsetof(struct qcm_process_device, queue_count) == 48, "6.12 layout");
_Static_assert(__builtin_offsetof(struct qcm_process_device, evicted) == 60, "6.12 layout");
_Static_assert(__builtin_offsetof(struct process_queue_manager, process) == 0, "6.12 layout");
_Static_assert(__builtin_offsetof(struct mes_remove_queue_input, doorbell_offset) == 0,
	       "6.12 layout");
/* the runlist a map leaves (bpf/runlist.bpf.h handle_map_exit), by the real BTF */
_Static_assert(__builtin_offsetof(struct device_queue_manager, packet_mgr) == 232, "6.12 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, processes_count) == 372,
	       "6.12 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, active_cp_queue_count) == 380,
	       "6.12 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, gws_queue_count) == 384,
	       "6.12 layout");
_Static_assert(__builtin_offsetof(struct packet_manager, is_over_subscription) == 68,
	       "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_dev, shared_resources) == 96, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_node, max_proc_per_quantum) == 184, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_node, kfd) == 216, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kgd2kfd_shared_resources, cp_queue_bitmap) == 16,
	       "6.12 layout");
_Static_assert(sizeof(struct kgd2kfd_shared_resources) == 88, "6.12 layout");
_Static_assert(__builtin_offsetof(struct device_queue_manager, queues) == 352, "6.12 layout");
_Static_assert(__builtin_offsetof(struct kfd_process, xnack_enabled) == 1920, "6.12 layout");
_Static_assert(__builtin_offsetof(struct amdgpu_device, gmc) == 3032, "6.12 layout");
struct queue gpuq_layout_queue;
struct kfd_process gpuq_layout_process;
struct kfd_node gpuq_layout_node;
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

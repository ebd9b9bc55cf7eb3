// SPDX-License-Identifier: GPL-2.0
/*
 * NEGATIVE CONTROL: the 6.12 layout (kfd_layout_6_12.bpf.c) with
 * queue_properties.type declared as __u32 instead of enum kfd_queue_type.
 * libbpf must refuse to relocate that read, so loading against this layout
 * must fail: proof that the layout tests really relocate and verify the
 * amdkfd reads rather than a dead branch.
 */
#include "vmlinux.h"

enum kfd_queue_type {
	KFD_QUEUE_TYPE_COMPUTE,
	KFD_QUEUE_TYPE_SDMA,
	KFD_QUEUE_TYPE_HIQ,
	KFD_QUEUE_TYPE_DIQ,
	KFD_QUEUE_TYPE_SDMA_XGMI,
	KFD_QUEUE_TYPE_SDMA_BY_ENG_ID,
};
enum kfd_queue_format { KFD_QUEUE_FORMAT_PM4, KFD_QUEUE_FORMAT_AQL };

struct queue_properties {
	__u32 type; /* wrong on purpose: the kernel declares an enum */
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

struct kfd_dev {
	char head[36];
	unsigned int num_nodes; /* not the gpu_id: kfd_node has it now */
};

struct kfd_node {
	char head[36];
	unsigned int id;
	char mid[176];
	struct kfd_dev *kfd;
};

struct kfd_process {
	char head[96];
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
};

struct queue {
	char head[40];
	struct queue_properties properties;
	char mid[24];
	struct kfd_process *process;
	struct kfd_node *device;
};

_Static_assert(__builtin_offsetof(struct queue_properties, write_ptr) == 48, "badtype layout");
_Static_assert(__builtin_offsetof(struct queue_properties, is_active) == 72, "badtype layout");
_Static_assert(__builtin_offsetof(struct queue, properties) == 40, "badtype layout");
_Static_assert(__builtin_offsetof(struct queue, process) == 264, "badtype layout");
_Static_assert(__builtin_offsetof(struct queue, device) == 272, "badtype layout");
_Static_assert(__builtin_offsetof(struct kfd_node, id) == 36, "badtype layout");
_Static_assert(__builtin_offsetof(struct kfd_node, kfd) == 216, "badtype layout");
_Static_assert(__builtin_offsetof(struct kfd_process, mmu_notifier) == 104, "badtype layout");

struct queue gpuq_layout_queue;
struct kfd_process gpuq_layout_process;
struct kfd_node gpuq_layout_node;
struct kfd_dev gpuq_layout_dev;
struct css_set gpuq_layout_css_set;
struct kernfs_node gpuq_layout_kernfs_node;
/* vmlinux types the hooks walk, emitted in full (a pointee alone is a FWD) */
struct pt_regs gpuq_layout_pt_regs;
struct task_struct gpuq_layout_task;
struct cgroup gpuq_layout_cgroup;

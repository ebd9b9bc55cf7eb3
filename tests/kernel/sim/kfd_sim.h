/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KFD simulator: amdkfd's types, as far as gpuq reads them.
 *
 * The enums and the fields that come and go between kernels are the real
 * amdgpu.ko's of the kernel the simulator is built for: kfd_sim_btf.h is
 * generated from its BTF (kfd_btf.cc, run_sim_tier.sh). The structs are
 * declared here, with names, field names, field types and field order
 * copied from the real BTF; fields gpuq never reads are left out, so
 * offsets differ from the real driver and only CO-RE relocation by name
 * makes the agent's reads right (which is what the tier tests). After each
 * build, run_sim_tier.sh compares every amdkfd field and enum value gpuq's
 * BPF object reads, as this module's BTF presents them, with the real
 * module's (kfd_btf describe): a difference fails the tier. Enum-typed
 * fields stay enums: libbpf refuses to relocate an enum field read as an
 * integer.
 *
 * Flavor: SIM_KFD_NODE (kernels >= 6.5 unless Kbuild's SIM_FLAVOR says) gives the 6.5+
 * shape, queue->device and dqm->dev a struct kfd_node * with the gpu_id in
 * kfd_node.id and the MES switch in node->kfd->shared_resources; without it
 * the 6.1 shape, a struct kfd_dev * with id and shared_resources in kfd_dev.
 */
#ifndef KFD_SIM_H
#define KFD_SIM_H

#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/version.h>
#include <linux/workqueue.h>

/* The kernel's own shape unless SIM_FLAVOR asks for the other one. */
#if defined(SIM_FLAVOR_KFD_NODE) ||                                                                \
    (!defined(SIM_FLAVOR_KFD_DEV) && LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0))
#define SIM_KFD_NODE
#endif

/*
 * Every simulated GPU's topology node says simd_count 416 and simd_per_cu 4
 * (kfd_sim_sysfs.c): 104 active CUs (8 arrays of 13), those a CU mask is
 * judged against.
 */
#define KFD_SIM_SIMD_COUNT 416
#define KFD_SIM_SIMD_PER_CU 4
#define KFD_SIM_ACTIVE_CUS (KFD_SIM_SIMD_COUNT / KFD_SIM_SIMD_PER_CU)

/*
 * the 3-5 GPUs of sim_specs plus up to 64 extra_hws_gpus (the programs
 * guest: 9, 6 for the users' 8-GPU run and one for each of its three pairs;
 * the partitions group: 64, 8 MI300X in CPX mode). amdkfd's own limit of
 * GPU nodes a process can use is MAX_GPU_INSTANCE, 64.
 */
#define KFD_SIM_MAX_EXTRA_GPUS 64
#define KFD_SIM_MAX_GPUS (5 + KFD_SIM_MAX_EXTRA_GPUS)
#define KFD_SIM_MAX_QUEUES_PER_PROCESS 1024 /* KFD_MAX_NUM_OF_QUEUES_PER_PROCESS */
#define KFD_SIM_MAX_VICTIMS 32		    /* containers off one GPU at once */

/*
 * enum kfd_queue_type, kfd_queue_format, kfd_unmap_queues_filter and
 * kfd_sched_policy with the real values, a KFD_SIM_HAS_<enumerator> each,
 * KFD_SIM_QUEUE_TYPE_LABELS, KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID where
 * amdkfd has secondary contexts (7.2+) and KFD_SIM_HAS_AMDGPU_GMC_XNACK_FLAGS
 * where it chains runlists of mixed XNACK modes (6.16+).
 */
#include "kfd_sim_btf.h"

/* kfd_priv.h (7.2+): the context_id of the kfd_process open() creates */
#define KFD_CONTEXT_ID_PRIMARY 0xFFFF

struct queue_properties {
	enum kfd_queue_type type;
	enum kfd_queue_format format;
	unsigned int queue_id;
	uint64_t queue_address;
	uint64_t queue_size;
	uint32_t priority;
	uint32_t queue_percent;
#ifdef SIM_KFD_NODE
	void __user *read_ptr;
	void __user *write_ptr;
#else
	uint32_t __user *read_ptr;
	uint32_t __user *write_ptr;
#endif
	void __iomem *doorbell_ptr;
	uint32_t doorbell_off;
	bool is_interop;
	bool is_evicted;
#ifdef SIM_KFD_NODE
	bool is_suspended;
	bool is_being_destroyed;
#endif
	bool is_active;
	bool is_gws;
	unsigned int vmid;
};

/* QUEUE_IS_ACTIVE() of kfd_priv.h (6.12 adds !is_suspended) */
#define SIM_QUEUE_IS_ACTIVE(q)                                                                     \
	((q).queue_size > 0 && (q).queue_address != 0 && (q).queue_percent > 0 && !(q).is_evicted)

struct kgd2kfd_shared_resources {
	unsigned int compute_vmid_bitmap;
	/* the CP queues KFD owns (KGD_MAX_QUEUES bits): get_cp_queues_num() */
	DECLARE_BITMAP(cp_queue_bitmap, 128);
	int drm_render_minor;
	bool enable_mes;
};

struct device_queue_manager;
struct kfd_process;
struct qcm_process_device;
struct queue;

/*
 * amdgpu_gmc.h: the GPU asks KFD to chain a runlist that mixes XNACK modes
 * (AMDGPU_GMC_XNACK_FLAG_CHAIN, 6.16+; kfd_sim_dqm.c's xnack_chain)
 */
#define AMDGPU_GMC_XNACK_FLAG_CHAIN (1u << 0)
struct amdgpu_gmc {
	int noretry;
#ifdef KFD_SIM_HAS_AMDGPU_GMC_XNACK_FLAGS
	uint32_t xnack_flags;
#endif
};

/* amdgpu.h: of the device, what KFD reads */
struct amdgpu_device {
	struct amdgpu_gmc gmc;
};

#ifdef SIM_KFD_NODE
struct kfd_dev {
	void *adev;
	struct kgd2kfd_shared_resources shared_resources;
	struct kfd_node *nodes[1];
	unsigned int num_nodes;
};

struct kfd_node {
	unsigned int node_id;
	struct amdgpu_device *adev;
	unsigned int id;
	uint32_t xcc_mask;
	unsigned int max_proc_per_quantum; /* hws_max_conc_proc, bounded by VMIDs */
	struct device_queue_manager *dqm;
	struct kfd_dev *kfd;
};
#define SIM_DEV struct kfd_node
#define SIM_ENABLE_MES(dev) ((dev)->kfd->shared_resources.enable_mes)
#else
struct kfd_dev {
	void *adev;
	unsigned int id;
	unsigned int max_proc_per_quantum; /* hws_max_conc_proc, bounded by VMIDs */
	struct kgd2kfd_shared_resources shared_resources;
	struct device_queue_manager *dqm;
	bool init_complete;
};
#define SIM_DEV struct kfd_dev
#define SIM_ENABLE_MES(dev) ((dev)->shared_resources.enable_mes)
#endif

/*
 * kfd_priv.h: what the set-CU-mask ioctl hands update_queue (count bits,
 * a multiple of 32, of the words at ptr); amdkfd's update_flag is left out
 */
struct mqd_update_info {
	union {
		struct {
			uint32_t count;
			uint32_t *ptr;
		} cu_mask;
	};
};
struct kfd_criu_queue_priv_data;
struct mes_add_queue_input;
struct mes_remove_queue_input;

/* The dqm ops the simulator calls through, as amdkfd does (never inlined). */
struct device_queue_manager_ops {
	int (*create_queue)(struct device_queue_manager *dqm, struct queue *q,
			    struct qcm_process_device *qpd,
			    const struct kfd_criu_queue_priv_data *qd, const void *restore_mqd,
			    const void *restore_ctl_stack);
	int (*destroy_queue)(struct device_queue_manager *dqm, struct qcm_process_device *qpd,
			     struct queue *q);
	int (*update_queue)(struct device_queue_manager *dqm, struct queue *q,
			    struct mqd_update_info *minfo);
	int (*register_process)(struct device_queue_manager *dqm, struct qcm_process_device *qpd);
	int (*unregister_process)(struct device_queue_manager *dqm, struct qcm_process_device *qpd);
	int (*process_termination)(struct device_queue_manager *dqm,
				   struct qcm_process_device *qpd);
	int (*evict_process_queues)(struct device_queue_manager *dqm,
				    struct qcm_process_device *qpd);
	int (*restore_process_queues)(struct device_queue_manager *dqm,
				      struct qcm_process_device *qpd);
};

struct packet_manager {
	struct device_queue_manager *dqm;
	void *priv_queue;
	bool allocated;
	bool is_over_subscription;
};

struct device_queue_manager {
	struct device_queue_manager_ops ops;
	struct packet_manager packet_mgr;
	SIM_DEV *dev;
	struct mutex lock_hidden;
	struct list_head queues;
	unsigned int processes_count;
	unsigned int active_queue_count;
	unsigned int active_cp_queue_count;
	unsigned int gws_queue_count;
	unsigned int total_queue_count;
	bool active_runlist;
	int sched_policy;
	bool is_hws_hang;
	bool sched_running;
};

struct process_queue_manager {
	struct kfd_process *process;
	struct list_head queues;
	unsigned long *queue_slot_bitmap;
};

struct process_queue_node {
	struct queue *q;
	void *kq;
	struct list_head process_queue_list;
};

struct qcm_process_device {
	struct device_queue_manager *dqm;
	struct process_queue_manager *pqm;
	struct list_head queues_list;
	struct list_head priv_queue_list;
	unsigned int queue_count;
	unsigned int vmid;
	bool is_debug;
	unsigned int evicted;
};

/* kfd_priv.h: a registered process on dqm->queues (register_process) */
struct device_process_node {
	struct qcm_process_device *qpd;
	struct list_head list;
};

struct kfd_process_device {
	SIM_DEV *dev;
	struct kfd_process *process;
	struct qcm_process_device qpd;
	bool already_dequeued;
	uint64_t last_evict_timestamp;
	uint32_t user_gpu_id;
	/* simulator only: registered with the dqm (first queue created) */
	bool sim_registered;
	unsigned int sim_queues;  /* queues of this process on this GPU */
	unsigned int sim_num_gws; /* amdkfd's qpd.num_gws: a queue holds the GWS */
};

struct kfd_process {
	struct hlist_node kfd_processes;
	void *mm;
	struct kref ref;
	struct work_struct release_work;
	struct mutex mutex;
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
	u32 pasid;
	struct kfd_process_device *pdds[KFD_SIM_MAX_GPUS];
	uint32_t n_pdds;
	struct process_queue_manager pqm;
	struct kobject *kobj;
	struct kobject *kobj_queues;
	struct attribute attr_pasid;
#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
	u16 context_id;
#endif
	bool xnack_enabled; /* AMDKFD_IOC_SET_XNACK_MODE */
	/* simulator only: the eviction a control ioctl runs in a kworker */
	struct work_struct sim_evict_work;
	u32 sim_evict_trigger;
	bool sim_restore;
	int sim_evict_ret;
};

struct queue {
	struct list_head list;
	void *mqd;
	void *mqd_mem_obj;
	uint64_t gart_mqd_addr;
	struct queue_properties properties;
	uint32_t mec;
	uint32_t pipe;
	uint32_t queue;
	unsigned int sdma_id;
	unsigned int doorbell_id;
	struct kfd_process *process;
	SIM_DEV *device;
	void *gws;
	struct kobject kobj;
	void *gang_ctx_bo;
	uint64_t gang_ctx_gpu_addr;
	void *gang_ctx_cpu_ptr;
	/* simulator only: the runlist generation that mapped it (victims.c) */
	u64 sim_map_gen;
	/* simulator only: given a CU mask (AMDKFD_IOC_SET_CU_MASK), and its
	 * class by gpuq's rule (truth "cumask", kfd_sim_process.c) */
	bool sim_cu_masked;
	bool sim_cu_restricted;
};

/* amdgpu_mes.h */
struct amdgpu_mes {
	void *adev;
	uint32_t sched_version;
	/* simulator only: when the last remove_hw_queue began, add_queue_mes
	 * ended (inside them), and when remove_queue_mes called remove_hw_queue
	 * (outside it) */
	u64 sim_removed_ns;
	u64 sim_added_ns;
	u64 sim_remove_called_ns;
	/* simulator only: the remove_hw_queue of this MES generation */
	int (*sim_remove_hw_queue)(struct amdgpu_mes *mes, struct mes_remove_queue_input *input);
	int (*sim_add_hw_queue)(struct amdgpu_mes *mes, struct mes_add_queue_input *input);
};

struct mes_add_queue_input {
	uint32_t process_id;
	uint64_t page_table_base_addr;
	uint64_t gang_context_addr;
	uint32_t doorbell_offset;
	uint64_t mqd_addr;
	uint64_t wptr_addr;
	uint32_t queue_type;
	uint32_t is_kfd_process;
	uint32_t is_aql_queue;
	uint32_t queue_size;
};

struct mes_remove_queue_input {
	uint32_t doorbell_offset;
	uint64_t gang_context_addr;
};

/* ---- the simulated GPUs (kfd_sim_dqm.c) ---- */

/* How a simulated GPU schedules (amdkfd's three paths, probe-points 2a). */
enum sim_sched {
	SIM_SCHED_HWS,	  /* cpsch + PM4 runlist (gfx9/gfx10) */
	SIM_SCHED_MES,	  /* cpsch + MES (gfx11/gfx12) */
	SIM_SCHED_NO_HWS, /* nocpsch (Hawaii, Tonga, sched_policy=2) */
};

struct sim_gpu {
	SIM_DEV dev;
	struct amdgpu_device adev; /* dev.adev */
#ifdef SIM_KFD_NODE
	struct kfd_dev kfd;
#endif
	struct device_queue_manager dqm;
	struct amdgpu_mes mes;
	enum sim_sched sched;
	const char *name;
	uint32_t gfx_target_version;
	uint32_t device_id;
	uint32_t location_id;
	uint64_t unique_id;
	unsigned int node; /* topology node index */
	/* runlist knobs (KFD_SIM_IOC_RUNLIST) */
	unsigned int unmap_delay_us;
	unsigned int map_delay_us;
	unsigned int fail_unmaps;
	/* the dqm op in progress (GPUQ_CAUSE_* numbering) and its owner's cgroup */
	uint32_t sim_cause;
	u64 sim_cause_cgroup;
	/* doorbell slots handed out (64-bit doorbells, 2 dwords each) */
	unsigned long doorbell_bitmap[KFD_SIM_MAX_QUEUES_PER_PROCESS / BITS_PER_LONG];
	/* victims (kfd_sim_victims.c), under the dqm lock */
	u64 map_gen; /* bumped by every unmap that preempts */
	/* when the last unmap_queues_cpsch was called, by its caller (sim_unmap) */
	u64 unmap_called_ns;
	/* oversubscription truth (kfd_sim_dqm.c, sim_calc_rlib): the open
	 * window's start inside the map that opened it, when that map had
	 * returned to its caller (sim_map), and the gauges last reported */
	u64 oversub_since_ns;
	u64 oversub_returned_ns;
	unsigned int truth_oversub;
	unsigned int truth_entries[3];
	unsigned int truth_limits[3];
	unsigned int n_off;
	bool off_closed; /* a map closed them; sim_map's return takes them out */
	struct sim_off_window {
		u64 cgroup;
		uint32_t cause;
		uint32_t self;
		u64 start_ns;  /* inside the unmap */
		u64 called_ns; /* before the unmap was called */
	} off[KFD_SIM_MAX_VICTIMS];
};

extern struct sim_gpu sim_gpus[KFD_SIM_MAX_GPUS];
extern unsigned int sim_num_gpus;

struct sim_gpu *sim_gpu_by_id(uint32_t gpu_id);
/* kfd_sim_victims.c: preemption as the victims see it (truth "victim",
 * "victim_ns", "victim_ns_out"; a = cause, b = 1 if the victim's own
 * cgroup caused it, +2 MES) */
void sim_victims_unmapped(struct sim_gpu *g, u64 start_ns);
void sim_victims_mapped(struct sim_gpu *g);
void sim_victims_map_returned(struct sim_gpu *g, u64 returned_ns);
void sim_victims_mes_removed(struct sim_gpu *g, struct queue *q);
void sim_victims_mes_readded(struct sim_gpu *g, struct queue *q, u64 start_ns, u64 end_ns,
			     u64 called_ns, u64 returned_ns);
void sim_gpus_init(void);
void sim_set_current_trigger(uint32_t trigger);
/* kfd_sim_main.c: a kworker running hooked paths at the guest's FIFO priority */
void sim_worker_enter(void);
void sim_worker_leave(void);
/* Adds n to the ground-truth series (what, gpu_id, a, b, cgroup); kfd_sim_truth.c */
void sim_truth_count(const char *what, uint32_t gpu_id, uint32_t a, uint32_t b, u64 cgroup, s64 n);

/* ---- the hooks gpuq attaches to: amdkfd's names and prototypes ---- */

/* A hooked function stays a real symbol of that name: not inlined, no clone. */
#define SIM_HOOK noinline __attribute__((__noipa__))

int kfd_procfs_add_queue(struct queue *q);
void kfd_procfs_del_queue(struct queue *q);
void uninit_queue(struct queue *q);
int kfd_ioctl_create_queue(struct file *filep, struct kfd_process *p, void *data);
int kfd_ioctl_destroy_queue(struct file *filp, struct kfd_process *p, void *data);
int kfd_ioctl_update_queue(struct file *filp, struct kfd_process *p, void *data);
int kfd_ioctl_set_xnack_mode(struct file *filp, struct kfd_process *p, void *data);
int kfd_ioctl_set_cu_mask(struct file *filp, struct kfd_process *p, void *data);
int kfd_ioctl_alloc_queue_gws(struct file *filp, struct kfd_process *p, void *data);
int pqm_destroy_queue(struct process_queue_manager *pqm, unsigned int qid);
void pqm_uninit(struct process_queue_manager *pqm);
int kfd_process_evict_queues(struct kfd_process *p, uint32_t trigger);
int kfd_process_restore_queues(struct kfd_process *p);
void kfd_smi_event_queue_eviction(SIM_DEV *dev, pid_t pid, uint32_t trigger);
void kfd_smi_event_queue_restore(SIM_DEV *dev, pid_t pid);
void kfd_process_dequeue_from_all_devices(struct kfd_process *p);
#ifdef SIM_KFD_NODE
int unmap_queues_cpsch(struct device_queue_manager *dqm, enum kfd_unmap_queues_filter filter,
		       uint32_t filter_param, uint32_t grace_period, bool reset);
#else
int unmap_queues_cpsch(struct device_queue_manager *dqm, enum kfd_unmap_queues_filter filter,
		       uint32_t filter_param, bool reset);
#endif
int map_queues_cpsch(struct device_queue_manager *dqm);
int add_queue_mes(struct device_queue_manager *dqm, struct queue *q,
		  struct qcm_process_device *qpd);
int mes_v11_0_add_hw_queue(struct amdgpu_mes *mes, struct mes_add_queue_input *input);
int mes_v11_0_remove_hw_queue(struct amdgpu_mes *mes, struct mes_remove_queue_input *input);
#ifdef SIM_KFD_NODE
int mes_v12_0_add_hw_queue(struct amdgpu_mes *mes, struct mes_add_queue_input *input);
int mes_v12_0_remove_hw_queue(struct amdgpu_mes *mes, struct mes_remove_queue_input *input);
#endif
#ifdef KFD_SIM_HAS_FUNC_MES_V12_1_REMOVE_HW_QUEUE
int mes_v12_1_add_hw_queue(struct amdgpu_mes *mes, struct mes_add_queue_input *input);
int mes_v12_1_remove_hw_queue(struct amdgpu_mes *mes, struct mes_remove_queue_input *input);
#endif

/* ---- kfd_sim_process.c ---- */
struct kfd_process *kfd_create_process(struct task_struct *thread);
#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
int kfd_ioctl_create_process(struct file *filep, struct kfd_process *p, void *data);
void kfd_process_notifier_release_internal(struct kfd_process *p);
/* true for a secondary context (AMDKFD_IOC_CREATE_PROCESS) */
#define SIM_IS_CONTEXT(p) ((p)->context_id != KFD_CONTEXT_ID_PRIMARY)
#endif
void kfd_unref_process(struct kfd_process *p);
struct kfd_process *sim_find_process_by_pid(pid_t pid); /* takes a reference */
int sim_process_init(void);
void sim_process_exit(void);
u64 sim_process_cgroup(struct kfd_process *p);

/* ---- kfd_sim_sysfs.c ---- */
int kfd_procfs_init(struct kobject *parent);
void kfd_procfs_shutdown(void);
int kfd_topology_init(struct kobject *parent);
void kfd_topology_shutdown(void);
/* primary: NULL, or the primary of a secondary context (proc/<pid>/context_<id>) */
int kfd_process_create_sysfs(struct kfd_process *p, struct kfd_process *primary);
void kfd_process_remove_sysfs(struct kfd_process *p);

/* ---- kfd_sim_truth.c ---- */
int sim_truth_init(void);
void sim_truth_exit(void);

/* a pqm queue lookup, shared by destroy and update */
struct process_queue_node *sim_get_queue_by_qid(struct process_queue_manager *pqm,
						unsigned int qid);
struct kfd_process_device *sim_pdd_by_gpu(struct kfd_process *p, uint32_t gpu_id);

#endif /* KFD_SIM_H */

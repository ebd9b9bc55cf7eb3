// SPDX-License-Identifier: GPL-2.0
/*
 * KFD simulator: processes, their queues, exit teardown and eviction.
 *
 * Mirrors kfd_process.c and kfd_process_queue_manager.c:
 *  - opening /dev/kfd creates (or finds, by mm) the kfd_process, with one
 *    kfd_process_device per GPU, and registers an mmu notifier on the mm;
 *  - the create/destroy ioctls go kfd_ioctl_create_queue -> pqm_create_queue
 *    -> dqm->ops.create_queue -> kfd_procfs_add_queue, and
 *    kfd_ioctl_destroy_queue -> pqm_destroy_queue -> kfd_procfs_del_queue
 *    (6.1: before the dqm destroy; 6.12: after) -> uninit_queue;
 *  - exit: exit_mmap -> kfd_process_notifier_release (the task's context)
 *    -> mmu_notifier_put; the SRCU free callback and the fd's release drop
 *    the last references, and kfd_process_wq_release (a kworker) runs
 *    process_termination per GPU, then pqm_uninit -> uninit_queue;
 *  - kfd_ioctl_set_cu_mask -> pqm_update_mqd -> dqm->ops.update_queue, the
 *    mask's class (gpuq's rule) kept on the queue for the truth;
 *  - kfd_ioctl_alloc_queue_gws -> pqm_set_gws -> dqm->ops.update_queue;
 *  - kfd_process_evict_queues(p, trigger) / kfd_process_restore_queues(p);
 *  - 7.2+ (KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID): AMDKFD_IOC_CREATE_PROCESS
 *    makes a secondary context of the same mm, without an mmu notifier,
 *    which replaces the fd's kfd_process; the fd's release tears it down at
 *    once in the closing task (kfd_process_notifier_release_internal). Its
 *    sysfs directory is proc/<pid>/context_<id>. Simplified: a context
 *    holds a reference on its primary (so the primary's directory outlives
 *    the context's), and ids are not reused.
 */
#include <linux/bitmap.h>
#include <linux/cgroup.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/kfd_ioctl.h>

#include "kfd_sim.h"

/* kfd_priv.h: mmap offsets of the doorbell page returned by create_queue */
#define KFD_MMAP_TYPE_SHIFT 62
#define KFD_MMAP_TYPE_DOORBELL (0x3ULL << KFD_MMAP_TYPE_SHIFT)
#define KFD_MMAP_GPU_ID_SHIFT 46
#define KFD_MMAP_GPU_ID(gpu_id)                                                                    \
	((((uint64_t)gpu_id) << KFD_MMAP_GPU_ID_SHIFT) &                                           \
	 (((1ULL << 16) - 1) << KFD_MMAP_GPU_ID_SHIFT))

static DEFINE_MUTEX(kfd_processes_mutex);
static LIST_HEAD(kfd_processes); /* amdkfd: a hash table by mm */
static struct workqueue_struct *kfd_process_wq;
static u32 next_pasid = 0x8001;

/* What the simulator keeps about a process beside amdkfd's struct. */
struct sim_process {
	struct kfd_process p;
	struct list_head node;
	u64 cgroup;		     /* owner's cgroup v2 id, at creation */
	struct kfd_process *primary; /* a secondary context's, with a reference */
};

static struct sim_process *sim_of(struct kfd_process *p)
{
	return container_of(p, struct sim_process, p);
}

u64 sim_process_cgroup(struct kfd_process *p)
{
	return sim_of(p)->cgroup;
}

static u64 current_cgroup_id(void)
{
	u64 id;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();
	return id;
}

struct kfd_process_device *sim_pdd_by_gpu(struct kfd_process *p, uint32_t gpu_id)
{
	uint32_t i;

	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->dev->id == gpu_id)
			return p->pdds[i];
	return NULL;
}

/*
 * The live gauges: queues by (gpu, type, cgroup) and processes holding at
 * least one queue on a GPU by (gpu, cgroup).
 */
/* amdkfd's pipe_priority_map (kfd_mqd_manager.c): 0-6 low, 7-10 medium, 11-15 high */
static uint32_t sim_priority_class(uint32_t priority)
{
	return priority <= 6 ? 0 : priority <= 10 ? 1 : 2;
}

static void sim_count_live(struct kfd_process_device *pdd, struct queue *q, int delta)
{
	u64 cg = sim_process_cgroup(q->process);

	sim_truth_count("queues", q->device->id, q->properties.type, 0, cg, delta);
	sim_truth_count("prio", q->device->id, sim_priority_class(q->properties.priority), 0, cg,
			delta);
	sim_truth_count("rprio", q->device->id, q->properties.priority, 0, cg, delta);
	/* a new queue has no CU mask: only a destroy or teardown moves this */
	if (q->sim_cu_masked)
		sim_truth_count("cumask", q->device->id, q->sim_cu_restricted, 0, cg, delta);
	if (delta > 0 && pdd->sim_queues++ == 0)
		sim_truth_count("processes", q->device->id, 0, 0, cg, 1);
	else if (delta < 0 && --pdd->sim_queues == 0)
		sim_truth_count("processes", q->device->id, 0, 0, cg, -1);
}

/* ---- queues -------------------------------------------------------------------- */

SIM_HOOK void uninit_queue(struct queue *q)
{
	kfree(q);
}

struct process_queue_node *sim_get_queue_by_qid(struct process_queue_manager *pqm, unsigned int qid)
{
	struct process_queue_node *pqn;

	list_for_each_entry(pqn, &pqm->queues,
			    process_queue_list) if (pqn->q &&
						    pqn->q->properties.queue_id == qid) return pqn;
	return NULL;
}

static int pqm_create_queue(struct process_queue_manager *pqm, struct kfd_process_device *pdd,
			    struct queue_properties *properties, unsigned int *qid)
{
	struct device_queue_manager *dqm = pdd->dev->dqm;
	struct process_queue_node *pqn;
	struct queue *q;
	unsigned int slot;
	int retval;

	slot = find_first_zero_bit(pqm->queue_slot_bitmap, KFD_SIM_MAX_QUEUES_PER_PROCESS);
	if (slot >= KFD_SIM_MAX_QUEUES_PER_PROCESS)
		return -ENOMEM; /* "Cannot open more queues for process" */
	pqn = kzalloc(sizeof(*pqn), GFP_KERNEL);
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!pqn || !q) {
		kfree(pqn);
		kfree(q);
		return -ENOMEM;
	}
	if (!pdd->sim_registered) {
		int err = dqm->ops.register_process(dqm, &pdd->qpd);

		if (err) {
			kfree(pqn);
			kfree(q);
			return err;
		}
		pdd->sim_registered = true;
	}
	set_bit(slot, pqm->queue_slot_bitmap);
	/* init_queue() */
	q->properties = *properties;
	q->properties.queue_id = slot;
	q->device = pdd->dev;
	q->process = pqm->process;
	pqn->q = q;
	retval = dqm->ops.create_queue(dqm, q, &pdd->qpd, NULL, NULL, NULL);
	if (retval) {
		/* the failed create frees its queue in the creating thread */
		uninit_queue(q);
		kfree(pqn);
		clear_bit(slot, pqm->queue_slot_bitmap);
		return retval;
	}
	list_add(&pqn->process_queue_list, &pqm->queues);
	kfd_procfs_add_queue(q);
	sim_count_live(pdd, q, 1);
	*qid = slot;
	return 0;
}

static int set_queue_properties_from_user(struct queue_properties *qp,
					  struct kfd_ioctl_create_queue_args *args)
{
	if ((args->queue_percentage & 0xFF) > KFD_MAX_QUEUE_PERCENTAGE)
		return -EINVAL;
	if (args->queue_priority > KFD_MAX_QUEUE_PRIORITY)
		return -EINVAL;
	if (args->ring_base_address &&
	    !access_ok((const void __user *)args->ring_base_address, sizeof(uint64_t)))
		return -EFAULT;
	if (args->ring_size && !is_power_of_2(args->ring_size))
		return -EINVAL;
	if (!access_ok((const void __user *)args->read_pointer_address, sizeof(uint32_t)) ||
	    !access_ok((const void __user *)args->write_pointer_address, sizeof(uint32_t)))
		return -EFAULT;
	qp->is_interop = false;
	qp->queue_percent = args->queue_percentage & 0xFF;
	qp->priority = args->queue_priority;
	qp->queue_address = args->ring_base_address;
	qp->queue_size = args->ring_size;
	qp->read_ptr = (void __user *)args->read_pointer_address;
	qp->write_ptr = (void __user *)args->write_pointer_address;
	switch (args->queue_type) {
	case KFD_IOC_QUEUE_TYPE_COMPUTE:
		qp->type = KFD_QUEUE_TYPE_COMPUTE;
		qp->format = KFD_QUEUE_FORMAT_PM4;
		break;
	case KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
		qp->type = KFD_QUEUE_TYPE_COMPUTE;
		qp->format = KFD_QUEUE_FORMAT_AQL;
		break;
	case KFD_IOC_QUEUE_TYPE_SDMA:
		qp->type = KFD_QUEUE_TYPE_SDMA;
		break;
	case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		qp->type = KFD_QUEUE_TYPE_SDMA_XGMI;
		break;
	default:
		return -ENOTSUPP;
	}
	return 0;
}

/* Only the requested gpu_id and uapi type are known to a failed create. */
static void count_create_failure(struct kfd_process *p, struct kfd_ioctl_create_queue_args *a,
				 int err)
{
	sim_truth_count("create_fail", a->gpu_id, a->queue_type, -err, sim_process_cgroup(p), 1);
}

SIM_HOOK int kfd_ioctl_create_queue(struct file *filep, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_create_queue_args *args = data;
	struct kfd_process_device *pdd;
	struct queue_properties q_properties = {};
	unsigned int queue_id;
	int err;

	err = set_queue_properties_from_user(&q_properties, args);
	if (err)
		goto out;
	mutex_lock(&p->mutex);
	pdd = sim_pdd_by_gpu(p, args->gpu_id);
	if (!pdd) {
		err = -EINVAL; /* "Could not find gpu id" */
		goto err_unlock;
	}
	err = pqm_create_queue(&p->pqm, pdd, &q_properties, &queue_id);
	if (err)
		goto err_unlock;
	args->queue_id = queue_id;
	args->doorbell_offset = KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(args->gpu_id);
	sim_truth_count("create", args->gpu_id, q_properties.type, 0, sim_process_cgroup(p), 1);
	mutex_unlock(&p->mutex);
	return 0;
err_unlock:
	mutex_unlock(&p->mutex);
out:
	count_create_failure(p, args, err);
	return err;
}

SIM_HOOK int pqm_destroy_queue(struct process_queue_manager *pqm, unsigned int qid)
{
	struct process_queue_node *pqn = sim_get_queue_by_qid(pqm, qid);
	struct kfd_process_device *pdd;
	struct device_queue_manager *dqm;
	struct queue *q;
	int retval;

	if (!pqn)
		return -EINVAL; /* "Queue id does not match any known queue" */
	q = pqn->q;
	pdd = sim_pdd_by_gpu(pqm->process, q->device->id);
	dqm = q->device->dqm;
#ifndef SIM_KFD_NODE
	kfd_procfs_del_queue(q); /* 6.1: before the dqm destroy, which can fail */
#endif
	retval = dqm->ops.destroy_queue(dqm, &pdd->qpd, q);
	if (retval)
		return retval;
	if (q->gws)
		pdd->sim_num_gws = 0;
#ifdef SIM_KFD_NODE
	kfd_procfs_del_queue(q);
#endif
	sim_truth_count("destroy", q->device->id, q->properties.type, 1,
			sim_process_cgroup(pqm->process), 1);
	sim_count_live(pdd, q, -1);
	uninit_queue(q);
	list_del(&pqn->process_queue_list);
	kfree(pqn);
	clear_bit(qid, pqm->queue_slot_bitmap);
	if (list_empty(&pdd->qpd.queues_list) && pdd->sim_registered) {
		dqm->ops.unregister_process(dqm, &pdd->qpd);
		pdd->sim_registered = false;
	}
	return 0;
}

SIM_HOOK int kfd_ioctl_destroy_queue(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_destroy_queue_args *args = data;
	int retval;

	mutex_lock(&p->mutex);
	retval = pqm_destroy_queue(&p->pqm, args->queue_id);
	mutex_unlock(&p->mutex);
	return retval;
}

SIM_HOOK int kfd_ioctl_update_queue(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_update_queue_args *args = data;
	struct process_queue_node *pqn;
	struct queue *q;
	int retval;

	if ((args->queue_percentage & 0xFF) > KFD_MAX_QUEUE_PERCENTAGE ||
	    args->queue_priority > KFD_MAX_QUEUE_PRIORITY)
		return -EINVAL;
	if (args->ring_size && !is_power_of_2(args->ring_size))
		return -EINVAL;
	mutex_lock(&p->mutex);
	pqn = sim_get_queue_by_qid(&p->pqm, args->queue_id);
	if (!pqn) {
		retval = -EINVAL;
		goto out;
	}
	/* pqm_update_queue_properties() */
	q = pqn->q;
	q->properties.queue_address = args->ring_base_address;
	q->properties.queue_size = args->ring_size;
	q->properties.queue_percent = args->queue_percentage & 0xFF;
	if (sim_priority_class(args->queue_priority) !=
	    sim_priority_class(q->properties.priority)) {
		u64 cg = sim_process_cgroup(p);

		sim_truth_count("prio", q->device->id, sim_priority_class(q->properties.priority),
				0, cg, -1);
		sim_truth_count("prio", q->device->id, sim_priority_class(args->queue_priority), 0,
				cg, 1);
	}
	if (args->queue_priority != q->properties.priority) {
		u64 cg = sim_process_cgroup(p);

		sim_truth_count("rprio", q->device->id, q->properties.priority, 0, cg, -1);
		sim_truth_count("rprio", q->device->id, args->queue_priority, 0, cg, 1);
	}
	q->properties.priority = args->queue_priority;
	retval = q->device->dqm->ops.update_queue(q->device->dqm, q, NULL);
out:
	mutex_unlock(&p->mutex);
	return retval;
}

/* ---- CU masks ---------------------------------------------------------------------- */

/* kfd_chardev.c's max_num_cus: the bits of a CU mask beyond it are dropped */
#define KFD_MAX_NUM_CUS 1024

/*
 * A mask's class as gpuq judges it, counted independently here (truth
 * "cumask"): restricted when it leaves out one of the GPU's active CUs
 * (KFD_SIM_ACTIVE_CUS, simd_count / simd_per_cu of its topology node), CU i
 * being bit i % 32 of word i / 32 of the count bits amdkfd took; else it
 * enables them all.
 */
static bool sim_cu_mask_restricted(const uint32_t *mask, uint32_t count)
{
	uint32_t cu;

	for (cu = 0; cu < KFD_SIM_ACTIVE_CUS; cu++)
		if (cu >= count || !(mask[cu / 32] & (1U << (cu % 32))))
			return true;
	return false;
}

/*
 * KFD_GC_VERSION >= 10.0 (gfx_target_version 100000 on) has WGPs, two CUs
 * each, so a mask must enable CUs in pairs; 7.x exempts GC 12.1 and later
 * (the simulator's GC 12.1 MES GPU: gfx1250, gfx_target_version 120500).
 */
static bool sim_has_wgps(SIM_DEV *dev)
{
	struct sim_gpu *g = sim_gpu_by_id(dev->id);

	return g && g->gfx_target_version >= 100000 && g->gfx_target_version < 120500;
}

/*
 * kfd_process_queue_manager.c: the queue's MQD gets the mask through
 * update_queue, which unmaps and maps the runlist (HWS) or removes and adds
 * the queue (MES) as for an update ioctl, and under the same dqm cause
 * (CAUSE_UPDATE, kfd_sim_dqm.c): the victims of its preemption count as
 * cause update. The simulator keeps the mask's class, not the mask.
 */
static int pqm_update_mqd(struct process_queue_manager *pqm, unsigned int qid,
			  struct mqd_update_info *minfo)
{
	struct process_queue_node *pqn = sim_get_queue_by_qid(pqm, qid);
	struct queue *q;
	bool restricted;
	uint32_t i;
	int retval;

	if (!pqn)
		return -EFAULT; /* "No queue %d exists for update operation" */
	q = pqn->q;
	/* ASICs that have WGPs must enforce pairwise enabled mask checks. */
	if (sim_has_wgps(q->device)) {
		for (i = 0; i < minfo->cu_mask.count; i += 2) {
			uint32_t cu_pair = (minfo->cu_mask.ptr[i / 32] >> (i % 32)) & 0x3;

			if (cu_pair && cu_pair != 0x3)
				return -EINVAL; /* "CUs must be adjacent pairwise enabled." */
		}
	}
	retval = q->device->dqm->ops.update_queue(q->device->dqm, q, minfo);
	if (retval)
		return retval;
	/* properties.is_user_cu_masked = true; a later set replaces the mask */
	restricted = sim_cu_mask_restricted(minfo->cu_mask.ptr, minfo->cu_mask.count);
	if (q->sim_cu_masked)
		sim_truth_count("cumask", q->device->id, q->sim_cu_restricted, 0,
				sim_process_cgroup(pqm->process), -1);
	sim_truth_count("cumask", q->device->id, restricted, 0, sim_process_cgroup(pqm->process),
			1);
	q->sim_cu_masked = true;
	q->sim_cu_restricted = restricted;
	return 0;
}

/* kfd_chardev.c, the same from 6.1 to 7.3 */
SIM_HOOK int kfd_ioctl_set_cu_mask(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_cu_mask_args *args = data;
	struct mqd_update_info minfo = {};
	uint32_t __user *cu_mask_ptr = (uint32_t __user *)args->cu_mask_ptr;
	size_t cu_mask_size = sizeof(uint32_t) * (args->num_cu_mask / 32);
	int retval;

	if ((args->num_cu_mask % 32) != 0)
		return -EINVAL; /* "num_cu_mask 0x%x must be a multiple of 32" */
	minfo.cu_mask.count = args->num_cu_mask;
	if (minfo.cu_mask.count == 0)
		return -EINVAL; /* "CU mask cannot be 0" */
	/* more than max_num_cus bits: only the first max_num_cus are used */
	if (minfo.cu_mask.count > KFD_MAX_NUM_CUS) {
		minfo.cu_mask.count = KFD_MAX_NUM_CUS;
		cu_mask_size = sizeof(uint32_t) * (KFD_MAX_NUM_CUS / 32);
	}
	minfo.cu_mask.ptr = memdup_user(cu_mask_ptr, cu_mask_size);
	if (IS_ERR(minfo.cu_mask.ptr))
		return PTR_ERR(minfo.cu_mask.ptr); /* "Could not copy CU mask from userspace" */
	mutex_lock(&p->mutex);
	retval = pqm_update_mqd(&p->pqm, args->queue_id, &minfo);
	mutex_unlock(&p->mutex);
	kfree(minfo.cu_mask.ptr);
	return retval;
}

/*
 * kfd_chardev.c's kfd_ioctl_alloc_queue_gws and kfd_process_queue_manager.c's
 * pqm_set_gws (the same from 6.1 to 7.3; ROCr's hsaKmtAllocQueueGWS, for
 * cooperative launches): one queue per process may hold the GWS; the dqm's
 * update_queue counts it in gws_queue_count while active and unmaps and maps
 * the runlist (HWS) or removes and adds the queue (MES) under cause update,
 * as a CU mask does. The token amdkfd keeps on MES and GC 9.4.3 GPUs
 * (ERR_PTR(-ENOMEM)) stands for the GWS here on every GPU; the simulator
 * skips amdgpu_amdkfd_add_gws_to_process and the debugger's check.
 */
SIM_HOOK int kfd_ioctl_alloc_queue_gws(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_alloc_queue_gws_args *args = data;
	struct process_queue_node *pqn;
	struct kfd_process_device *pdd;
	struct queue *q;
	int retval;

	mutex_lock(&p->mutex);
	pqn = sim_get_queue_by_qid(&p->pqm, args->queue_id);
	q = pqn ? pqn->q : NULL;
	if (!q) {
		retval = -EINVAL;
		goto out_unlock;
	}
	if (q->device->dqm->sched_policy == KFD_SCHED_POLICY_NO_HWS) {
		retval = -ENODEV;
		goto out_unlock;
	}
	pdd = sim_pdd_by_gpu(p, q->device->id);
	if (args->num_gws && pdd->sim_num_gws) {
		retval = -EBUSY; /* "Only allow one queue per process can have GWS" */
		goto out_unlock;
	}
	if (!args->num_gws && pdd->sim_num_gws == 0) {
		retval = -EINVAL;
		goto out_unlock;
	}
	q->gws = args->num_gws ? ERR_PTR(-ENOMEM) : NULL;
	pdd->sim_num_gws = args->num_gws ? 64 : 0; /* gds.gws_size; num_gws in sysfs */
	retval = q->device->dqm->ops.update_queue(q->device->dqm, q, NULL);
	mutex_unlock(&p->mutex);
	args->first_gws = 0;
	return retval;

out_unlock:
	mutex_unlock(&p->mutex);
	return retval;
}

/*
 * kfd_chardev.c (5.13+): a process's XNACK mode, which amdkfd lets change
 * only while it has no queues; a negative value asks for the mode. The
 * simulator skips amdkfd's checks of the GPUs' support and its SVM
 * reservations.
 */
int kfd_ioctl_set_xnack_mode(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_xnack_mode_args *args = data;
	int r = 0;

	mutex_lock(&p->mutex);
	if (args->xnack_enabled >= 0) {
		if (!list_empty(&p->pqm.queues))
			r = -EBUSY; /* "Process has user queues running" */
		else
			p->xnack_enabled = args->xnack_enabled;
	} else {
		args->xnack_enabled = p->xnack_enabled;
	}
	mutex_unlock(&p->mutex);
	return r;
}

/* ---- exit teardown ------------------------------------------------------------------ */

SIM_HOOK void pqm_uninit(struct process_queue_manager *pqm)
{
	struct process_queue_node *pqn, *next;

	list_for_each_entry_safe(pqn, next, &pqm->queues, process_queue_list)
	{
		if (pqn->q) {
			struct queue *q = pqn->q;

			sim_truth_count("destroy", q->device->id, q->properties.type, 2,
					sim_process_cgroup(pqm->process), 1);
			sim_count_live(sim_pdd_by_gpu(pqm->process, q->device->id), q, -1);
		}
		kfd_procfs_del_queue(pqn->q);
		uninit_queue(pqn->q);
		list_del(&pqn->process_queue_list);
		kfree(pqn);
	}
	bitmap_free(pqm->queue_slot_bitmap);
	pqm->queue_slot_bitmap = NULL;
}

SIM_HOOK void kfd_process_dequeue_from_all_devices(struct kfd_process *p)
{
	uint32_t i;

	for (i = 0; i < p->n_pdds; i++) {
		struct kfd_process_device *pdd = p->pdds[i];
		struct device_queue_manager *dqm = pdd->dev->dqm;

		if (pdd->already_dequeued)
			continue;
		dqm->ops.process_termination(dqm, &pdd->qpd);
		pdd->already_dequeued = true;
	}
}

/* The last reference is gone: the kfd_process_wq kworker tears it down. */
static void kfd_process_wq_release(struct work_struct *work)
{
	struct kfd_process *p = container_of(work, struct kfd_process, release_work);
	uint32_t i;

	sim_worker_enter();
	kfd_process_dequeue_from_all_devices(p);
	pqm_uninit(&p->pqm);
	sim_worker_leave();
	kfd_process_remove_sysfs(p);
	for (i = 0; i < p->n_pdds; i++)
		kfree(p->pdds[i]);
	mutex_destroy(&p->mutex);
	put_task_struct(p->lead_thread);
	if (sim_of(p)->primary)
		kfd_unref_process(sim_of(p)->primary);
	kfree(sim_of(p));
	module_put(THIS_MODULE);
}

static void kfd_process_ref_release(struct kref *ref)
{
	struct kfd_process *p = container_of(ref, struct kfd_process, ref);

	INIT_WORK(&p->release_work, kfd_process_wq_release);
	queue_work(kfd_process_wq, &p->release_work);
}

void kfd_unref_process(struct kfd_process *p)
{
	kref_put(&p->ref, kfd_process_ref_release);
}

/* exit_mmap (or the last mmput) in whatever task drops the mm */
static void kfd_process_notifier_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct kfd_process *p = container_of(mn, struct kfd_process, mmu_notifier);

	if (WARN_ON(p->mm != mm))
		return;
	mutex_lock(&kfd_processes_mutex);
	list_del_init(&sim_of(p)->node);
	mutex_unlock(&kfd_processes_mutex);
	sim_truth_count("exit", 0, 0, 0, sim_process_cgroup(p), 1);
	p->mm = NULL;
	mmu_notifier_put(&p->mmu_notifier);
}

/* SRCU callback after mmu_notifier_put: drops the notifier's reference */
static void kfd_process_free_notifier(struct mmu_notifier *mn)
{
	kfd_unref_process(container_of(mn, struct kfd_process, mmu_notifier));
}

static const struct mmu_notifier_ops kfd_process_mmu_notifier_ops = {
	.release = kfd_process_notifier_release,
	.free_notifier = kfd_process_free_notifier,
};

/* ---- creation ---------------------------------------------------------------------- */

static struct kfd_process *find_process_by_mm(struct mm_struct *mm)
{
	struct sim_process *sp;

	list_for_each_entry(sp, &kfd_processes, node) if (sp->p.mm == mm) return &sp->p;
	return NULL;
}

/* A primary kfd_process (primary NULL), or a secondary context of primary. */
static struct kfd_process *create_process(struct task_struct *thread, struct kfd_process *primary)
{
	struct sim_process *sp;
	struct kfd_process *p;
	unsigned int i;
	int err = -ENOMEM;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return ERR_PTR(-ENOMEM);
	p = &sp->p;
	INIT_LIST_HEAD(&sp->node);
	sp->cgroup = current_cgroup_id();
	sp->primary = primary;
#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
	{
		static atomic_t next_context_id = ATOMIC_INIT(0);

		p->context_id =
		    primary ? atomic_inc_return(&next_context_id) & 0x7FFF : KFD_CONTEXT_ID_PRIMARY;
	}
#endif
	kref_init(&p->ref); /* the fd's reference */
	mutex_init(&p->mutex);
	p->mm = thread->mm;
	p->lead_thread = thread->group_leader;
	get_task_struct(p->lead_thread);
	p->pasid = next_pasid++;
	p->pqm.process = p;
	INIT_LIST_HEAD(&p->pqm.queues);
	p->pqm.queue_slot_bitmap = bitmap_zalloc(KFD_SIM_MAX_QUEUES_PER_PROCESS, GFP_KERNEL);
	if (!p->pqm.queue_slot_bitmap)
		goto err;
	/* kfd_init_apertures(): one pdd per GPU */
	for (i = 0; i < sim_num_gpus; i++) {
		struct kfd_process_device *pdd = kzalloc(sizeof(*pdd), GFP_KERNEL);

		if (!pdd)
			goto err;
		pdd->dev = &sim_gpus[i].dev;
		pdd->process = p;
		pdd->user_gpu_id = sim_gpus[i].dev.id;
		pdd->qpd.dqm = sim_gpus[i].dev.dqm;
		pdd->qpd.pqm = &p->pqm;
		pdd->qpd.vmid = 8 + i;
		INIT_LIST_HEAD(&pdd->qpd.queues_list);
		INIT_LIST_HEAD(&pdd->qpd.priv_queue_list);
		p->pdds[p->n_pdds++] = pdd;
	}
	err = kfd_process_create_sysfs(p, primary);
	if (err)
		goto err;
	if (primary)
		return p; /* a context: torn down at its fd's release, no notifier */
	/* the notifier's reference, dropped by kfd_process_free_notifier */
	kref_get(&p->ref);
	p->mmu_notifier.ops = &kfd_process_mmu_notifier_ops;
	err = mmu_notifier_register(&p->mmu_notifier, thread->mm);
	if (err) {
		kfd_process_remove_sysfs(p);
		goto err; /* nobody else holds p yet */
	}
	return p;
err:
	for (i = 0; i < p->n_pdds; i++)
		kfree(p->pdds[i]);
	bitmap_free(p->pqm.queue_slot_bitmap);
	put_task_struct(p->lead_thread);
	kfree(sp);
	return ERR_PTR(err);
}

/* kfd_open(): the caller's kfd_process, created on first open of its mm */
struct kfd_process *kfd_create_process(struct task_struct *thread)
{
	struct kfd_process *p;

	if (!thread->mm)
		return ERR_PTR(-EINVAL);
	mutex_lock(&kfd_processes_mutex);
	p = find_process_by_mm(thread->mm);
	if (p) {
		kref_get(&p->ref);
	} else if (!try_module_get(THIS_MODULE)) {
		p = ERR_PTR(-ENODEV);
	} else {
		p = create_process(thread, NULL);
		if (IS_ERR(p))
			module_put(THIS_MODULE);
		else
			list_add(&sim_of(p)->node, &kfd_processes);
	}
	mutex_unlock(&kfd_processes_mutex);
	return p;
}

#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
/*
 * AMDKFD_IOC_CREATE_PROCESS (7.2+): the fd's kfd_process becomes a new
 * secondary context of the caller's mm, and the fd's reference on the
 * primary is dropped (the context keeps one, see above).
 */
SIM_HOOK int kfd_ioctl_create_process(struct file *filep, struct kfd_process *p, void *data)
{
	struct kfd_process *ctx;

	if (!p || SIM_IS_CONTEXT(p) || filep->private_data != p)
		return -EINVAL; /* "Each FD owns only one kfd_process" */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&kfd_processes_mutex);
	kref_get(&p->ref); /* the context's reference on its primary */
	ctx = create_process(current, p);
	if (IS_ERR(ctx)) {
		mutex_unlock(&kfd_processes_mutex);
		kfd_unref_process(p);
		module_put(THIS_MODULE);
		return PTR_ERR(ctx);
	}
	filep->private_data = ctx;
	mutex_unlock(&kfd_processes_mutex);
	kfd_unref_process(p); /* the fd's */
	return 0;
}

/*
 * A secondary context's fd is released (kfd_release): its queues go now, in
 * the closing task, as exit teardown. The kworker release still runs when
 * the last reference goes, with nothing left to dequeue.
 */
SIM_HOOK void kfd_process_notifier_release_internal(struct kfd_process *p)
{
	sim_truth_count("exit", 0, 0, 0, sim_process_cgroup(p), 1);
	kfd_process_dequeue_from_all_devices(p);
	pqm_uninit(&p->pqm);
}
#endif

/* A live process by tgid, with a reference (control ioctls). */
struct kfd_process *sim_find_process_by_pid(pid_t pid)
{
	struct sim_process *sp;
	struct kfd_process *p = NULL;

	mutex_lock(&kfd_processes_mutex);
	list_for_each_entry(sp, &kfd_processes, node)
	{
		if (sp->p.lead_thread->tgid == pid) {
			p = &sp->p;
			kref_get(&p->ref);
			break;
		}
	}
	mutex_unlock(&kfd_processes_mutex);
	return p;
}

/* ---- eviction ---------------------------------------------------------------------- */

SIM_HOOK void kfd_smi_event_queue_eviction(SIM_DEV *dev, pid_t pid, uint32_t trigger)
{
	barrier();
}

SIM_HOOK void kfd_smi_event_queue_restore(SIM_DEV *dev, pid_t pid)
{
	barrier();
}

/*
 * Evicts every queue of p on every GPU. A failure rolls back the GPUs
 * already evicted, as amdkfd does.
 */
SIM_HOOK int kfd_process_evict_queues(struct kfd_process *p, uint32_t trigger)
{
	unsigned int n_evicted = 0;
	uint32_t i;
	int r = 0;

	sim_set_current_trigger(trigger);
	for (i = 0; i < p->n_pdds; i++) {
		struct kfd_process_device *pdd = p->pdds[i];

		kfd_smi_event_queue_eviction(pdd->dev, p->lead_thread->pid, trigger);
		r = pdd->dev->dqm->ops.evict_process_queues(pdd->dev->dqm, &pdd->qpd);
		if (r) {
			pr_err("Failed to evict process queues\n");
			goto fail;
		}
		n_evicted++;
	}
	sim_set_current_trigger(255);
	return r;
fail:
	for (i = 0; i < p->n_pdds && n_evicted; i++, n_evicted--) {
		struct kfd_process_device *pdd = p->pdds[i];

		kfd_smi_event_queue_restore(pdd->dev, p->lead_thread->pid);
		pdd->dev->dqm->ops.restore_process_queues(pdd->dev->dqm, &pdd->qpd);
	}
	sim_set_current_trigger(255);
	return r;
}

SIM_HOOK int kfd_process_restore_queues(struct kfd_process *p)
{
	int ret = 0;
	uint32_t i;

	for (i = 0; i < p->n_pdds; i++) {
		struct kfd_process_device *pdd = p->pdds[i];
		int r;

		kfd_smi_event_queue_restore(pdd->dev, p->lead_thread->pid);
		r = pdd->dev->dqm->ops.restore_process_queues(pdd->dev->dqm, &pdd->qpd);
		if (r) {
			pr_err("Failed to restore process queues\n");
			if (!ret)
				ret = r;
		}
	}
	return ret;
}

/* ---- module lifetime -------------------------------------------------------------- */

int sim_process_init(void)
{
	/*
	 * WQ_UNBOUND, as amdkfd's own kfd_process_wq: 7.x warns about a
	 * workqueue that is neither WQ_PERCPU nor WQ_UNBOUND.
	 */
	kfd_process_wq = alloc_workqueue("kfd_process_wq", WQ_UNBOUND, 0);
	return kfd_process_wq ? 0 : -ENOMEM;
}

/*
 * Only reached with no open fd and no live process (each holds a module
 * reference); waits for the last teardown and the SRCU notifier callbacks.
 */
void sim_process_exit(void)
{
	destroy_workqueue(kfd_process_wq);
	mmu_notifier_synchronize();
}

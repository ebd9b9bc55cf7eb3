// SPDX-License-Identifier: GPL-2.0
/*
 * KFD simulator: the simulated GPUs and their device queue managers.
 *
 * Mirrors kfd_device_queue_manager.c: the cpsch ops (HWS runlist through
 * unmap_queues_cpsch + map_queues_cpsch, or MES through add_queue_mes /
 * remove_queue_mes) and the nocpsch ops, with amdkfd's bookkeeping of
 * active_queue_count, qpd->queue_count and qpd->evicted. No hardware: an
 * unmap "waits for its fence" for unmap_delay_us and can be told to time out
 * (-ETIME), the HWS hang that amdkfd answers with a GPU reset.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stringify.h>

#include "kfd_sim.h"

/* Never inlined, cloned or re-signatured: gpuq attaches by name and BTF. */

#ifdef SIM_KFD_NODE
#define USE_DEFAULT_GRACE_PERIOD 0xffffffff
#define UNMAP_CALL(dqm, f, p) unmap_queues_cpsch(dqm, f, p, USE_DEFAULT_GRACE_PERIOD, false)
#else
#define UNMAP_CALL(dqm, f, p) unmap_queues_cpsch(dqm, f, p, false)
#endif

struct sim_gpu sim_gpus[KFD_SIM_MAX_GPUS];
unsigned int sim_num_gpus;

static struct sim_gpu *gpu_of(struct device_queue_manager *dqm)
{
	return container_of(dqm, struct sim_gpu, dqm);
}

struct sim_gpu *sim_gpu_by_id(uint32_t gpu_id)
{
	unsigned int i;

	for (i = 0; i < sim_num_gpus; i++)
		if (sim_gpus[i].dev.id == gpu_id)
			return &sim_gpus[i];
	return NULL;
}

static void dqm_lock(struct device_queue_manager *dqm)
{
	mutex_lock(&dqm->lock_hidden);
}

static void dqm_unlock(struct device_queue_manager *dqm)
{
	mutex_unlock(&dqm->lock_hidden);
}

static void sim_wait_us(unsigned int us)
{
	if (us >= 20000)
		msleep(us / 1000);
	else if (us)
		usleep_range(us, us + us / 8 + 1);
}

static u64 qpd_cgroup(struct qcm_process_device *qpd)
{
	return sim_process_cgroup(qpd->pqm->process);
}

static void increment_queue_count(struct device_queue_manager *dqm, struct queue *q)
{
	dqm->active_queue_count++;
	if (q->properties.type == KFD_QUEUE_TYPE_COMPUTE)
		dqm->active_cp_queue_count++;
	if (q->properties.is_gws)
		dqm->gws_queue_count++;
}

static void decrement_queue_count(struct device_queue_manager *dqm, struct queue *q)
{
	dqm->active_queue_count--;
	if (q->properties.type == KFD_QUEUE_TYPE_COMPUTE)
		dqm->active_cp_queue_count--;
	if (q->properties.is_gws)
		dqm->gws_queue_count--;
}

/*
 * The process-level operation a runlist operation runs inside, and whose
 * process it is (what gpuq attributes runlist operations to). Set and read
 * under the dqm lock.
 */
enum sim_cause {
	CAUSE_NONE,
	CAUSE_CREATE,
	CAUSE_DESTROY,
	CAUSE_EVICT,
	CAUSE_RESTORE,
	CAUSE_TERMINATE,
	CAUSE_UPDATE
};

static void cause_begin(struct device_queue_manager *dqm, enum sim_cause cause,
			struct qcm_process_device *qpd)
{
	gpu_of(dqm)->sim_cause = cause;
	gpu_of(dqm)->sim_cause_cgroup = qpd_cgroup(qpd);
}

static void cause_end(struct device_queue_manager *dqm)
{
	gpu_of(dqm)->sim_cause = CAUSE_NONE;
}

/* op: 0 unmap, 1 map; + 2 on MES (remove, add) */
static void count_op(struct device_queue_manager *dqm, const char *what, uint32_t a, int ret,
		     uint32_t op)
{
	struct sim_gpu *g = gpu_of(dqm);

	sim_truth_count(what, dqm->dev->id, a, -ret, 0, 1);
	if (g->sim_cause != CAUSE_NONE)
		sim_truth_count("rl_cause", dqm->dev->id, op, g->sim_cause, g->sim_cause_cgroup, 1);
}

/* ---- HWS: the runlist ---------------------------------------------------- */

/*
 * The limits a runlist is held to. amdkfd sets them once per device
 * (kgd2kfd_device_init: max_proc_per_quantum from hws_max_conc_proc, bounded
 * by the VMIDs KFD owns; cp_queue_bitmap from the KGD); the simulator takes
 * them from its writable parameters at each map, so a guest can lower them
 * without a reload.
 */
static unsigned int hws_max_conc_proc = 8;
module_param(hws_max_conc_proc, uint, 0644);
MODULE_PARM_DESC(hws_max_conc_proc, "processes an HWS runlist maps at once (max_proc_per_quantum)");
#define SIM_CP_QUEUE_SLOTS 24 /* an MI210's cp_queue_bitmap: 24 queues KFD owns */
static unsigned int cp_queue_slots = SIM_CP_QUEUE_SLOTS;
module_param(cp_queue_slots, uint, 0644);
MODULE_PARM_DESC(cp_queue_slots,
		 "CP queues KFD owns per GPU (bits of cp_queue_bitmap, at most 128)");
/*
 * The users' experiment runs twice at once: the pair on a GPU held to
 * cp_queue_slots (oversubscribed) and a second pair on this one, which keeps
 * the default slots (they fit).
 */
static unsigned int fits_gpu_id;
module_param(fits_gpu_id, uint, 0644);
MODULE_PARM_DESC(fits_gpu_id,
		 "a GPU (gpu_id) keeping 24 CP queue slots whatever cp_queue_slots says (0: none)");

/*
 * 6.16+: the GPUs ask KFD to chain a runlist whose processes mix XNACK modes
 * (adev->gmc.xnack_flags, AMDGPU_GMC_XNACK_FLAG_CHAIN: GC 9.4.3 and 9.5.0
 * with recent MEC firmware), read at each map like the limits; only where
 * the real amdgpu has xnack_flags.
 */
static bool xnack_chain;
module_param(xnack_chain, bool, 0644);
MODULE_PARM_DESC(
    xnack_chain,
    "every GPU chains a runlist of mixed XNACK modes (6.16+ kernels: gmc.xnack_flags)");

#ifdef SIM_KFD_NODE
#define SIM_SHARED(dev) (&(dev)->kfd->shared_resources)
#else
#define SIM_SHARED(dev) (&(dev)->shared_resources)
#endif

static void sim_apply_limits(SIM_DEV *dev)
{
	unsigned long *bm = SIM_SHARED(dev)->cp_queue_bitmap;
	unsigned int slots = cp_queue_slots;

	if (fits_gpu_id && dev->id == fits_gpu_id)
		slots = SIM_CP_QUEUE_SLOTS;
	dev->max_proc_per_quantum = hws_max_conc_proc;
	bitmap_zero(bm, 128);
	bitmap_set(bm, 0, min_t(unsigned int, slots, 128));
#ifdef KFD_SIM_HAS_AMDGPU_GMC_XNACK_FLAGS
	((struct amdgpu_device *)dev->adev)->gmc.xnack_flags =
	    xnack_chain ? AMDGPU_GMC_XNACK_FLAG_CHAIN : 0;
#endif
}

#ifdef KFD_SIM_HAS_AMDGPU_GMC_XNACK_FLAGS
/*
 * pm_create_runlist_ib (6.16+): the registered processes (dqm->queues) do not
 * all have the first one's XNACK mode.
 */
static bool sim_xnack_conflict(struct device_queue_manager *dqm)
{
	struct device_process_node *n;
	int first = -1;

	list_for_each_entry(n, &dqm->queues, list)
	{
		bool x = n->qpd->pqm->process->xnack_enabled;

		if (first < 0)
			first = x;
		else if (x != first)
			return true;
	}
	return false;
}
#endif

/* A truth gauge moved to `now` from what it last said. */
static void truth_gauge(const char *what, uint32_t gpu_id, uint32_t a, unsigned int *last,
			unsigned int now)
{
	if (now != *last)
		sim_truth_count(what, gpu_id, a, 0, 0, (s64)now - (s64)*last);
	*last = now;
}

/*
 * pm_calc_rlib_size (kfd_packet_manager.c, 6.1 to 7.3) for the runlist a
 * map builds, and pm_create_runlist_ib's pm->is_over_subscription. Truth:
 * "oversub" per reason (a = 0 processes, 1 compute queues, 2 GWS queues,
 * 3 an XNACK conflict on a GPU that chains on it, 6.16+), "oversub_maps", the
 * gauges, and the window to the unmap that ends it.
 */
static void sim_calc_rlib(struct device_queue_manager *dqm, struct sim_gpu *g)
{
	SIM_DEV *dev = dqm->dev;
	unsigned int max_proc = dev->max_proc_per_quantum > 1 ? dev->max_proc_per_quantum : 1;
	unsigned int cp = bitmap_weight(SIM_SHARED(dev)->cp_queue_bitmap, 128);
	unsigned int over = 0, r;

	if (dqm->processes_count > max_proc)
		over |= 1;
	if (dqm->active_cp_queue_count > cp)
		over |= 2;
	if (dqm->gws_queue_count > 1)
		over |= 4;
#ifdef KFD_SIM_HAS_AMDGPU_GMC_XNACK_FLAGS
	if ((((struct amdgpu_device *)dev->adev)->gmc.xnack_flags & AMDGPU_GMC_XNACK_FLAG_CHAIN) &&
	    sim_xnack_conflict(dqm))
		over |= 8;
#endif
	dqm->packet_mgr.is_over_subscription = over != 0;
	for (r = 0; r < 4; r++)
		if (over & (1u << r))
			sim_truth_count("oversub", dev->id, r, 0, 0, 1);
	if (over) {
		sim_truth_count("oversub_maps", dev->id, 0, 0, 0, 1);
		g->oversub_since_ns = ktime_get_ns();
	}
}

/*
 * The gauges at every map's return, a runlist built or not: what the map
 * leaves in the dqm against the limits, and the last build's verdict while
 * a runlist with queues and processes is up.
 */
static void sim_runlist_gauges(struct device_queue_manager *dqm, struct sim_gpu *g)
{
	SIM_DEV *dev = dqm->dev;
	unsigned int max_proc = dev->max_proc_per_quantum > 1 ? dev->max_proc_per_quantum : 1;
	bool over =
	    dqm->packet_mgr.is_over_subscription && dqm->processes_count && dqm->active_queue_count;

	truth_gauge("oversubscribed", dev->id, 0, &g->truth_oversub, over);
	truth_gauge("rl_entries", dev->id, 0, &g->truth_entries[0], dqm->processes_count);
	truth_gauge("rl_entries", dev->id, 1, &g->truth_entries[1], dqm->active_cp_queue_count);
	truth_gauge("rl_entries", dev->id, 2, &g->truth_entries[2], dqm->gws_queue_count);
	truth_gauge("rl_limit", dev->id, 0, &g->truth_limits[0], max_proc);
	truth_gauge("rl_limit", dev->id, 1, &g->truth_limits[1],
		    bitmap_weight(SIM_SHARED(dev)->cp_queue_bitmap, 128));
	truth_gauge("rl_limit", dev->id, 2, &g->truth_limits[2], 1);
}

/*
 * The oversubscribed runlist is off the GPU from `start_ns` (an unmap's).
 * gpuq's window runs from the map's return to the unmap's entry, so it holds
 * the callers' ("oversub_ns_in": from sim_map's return to sim_unmap's
 * call) and lies within the functions' ("oversub_ns": from inside the map
 * to inside the unmap).
 */
static void sim_oversub_end(struct sim_gpu *g, u64 start_ns)
{
	if (!g->oversub_since_ns)
		return;
	sim_truth_count("oversub_ns", g->dqm.dev->id, 0, 0, 0, start_ns - g->oversub_since_ns);
	sim_truth_count("oversub_ns_in", g->dqm.dev->id, 0, 0, 0,
			g->unmap_called_ns - g->oversub_returned_ns);
	g->oversub_since_ns = 0;
	g->oversub_returned_ns = 0;
}

/*
 * Preempts every queue of the runlist (PM4 UNMAP_QUEUES, then a fence wait of
 * up to queue_preemption_timeout_ms). Called for every call site, early
 * returns included; the ground truth counts calls, by return value.
 */
#ifdef SIM_KFD_NODE
SIM_HOOK int unmap_queues_cpsch(struct device_queue_manager *dqm,
				enum kfd_unmap_queues_filter filter, uint32_t filter_param,
				uint32_t grace_period, bool reset)
#else
SIM_HOOK int unmap_queues_cpsch(struct device_queue_manager *dqm,
				enum kfd_unmap_queues_filter filter, uint32_t filter_param,
				bool reset)
#endif
{
	struct sim_gpu *g = gpu_of(dqm);
	u64 start_ns = ktime_get_ns();
	int retval = 0;

	if (!dqm->sched_running)
		goto out;
	if (!dqm->active_runlist)
		goto out;
	sim_oversub_end(g, start_ns);
	sim_wait_us(g->unmap_delay_us);
	if (g->unmap_delay_us)
		sim_truth_count("unmap_wait_us", dqm->dev->id, 0, 0, 0, g->unmap_delay_us);
	if (g->fail_unmaps) {
		/*
		 * amdkfd: "The cp might be in an unrecoverable state due to an
		 * unsuccessful queues preemption", kfd_hws_hang() and a GPU
		 * reset. The simulator's reset is instant: the runlist is gone
		 * and the next map uploads it again.
		 */
		g->fail_unmaps--;
		retval = -ETIME;
	}
	/* a hang takes the queues off too: the reset drops the runlist */
	sim_victims_unmapped(g, start_ns);
	dqm->active_runlist = false;
out:
	count_op(dqm, "unmap", filter, retval, 0);
	return retval;
}

/* Uploads the runlist of every active queue (pm_send_runlist). */
SIM_HOOK int map_queues_cpsch(struct device_queue_manager *dqm)
{
	struct sim_gpu *g = gpu_of(dqm);
	int retval = 0;

	if (!dqm->sched_running || dqm->active_queue_count <= 0 || dqm->processes_count <= 0 ||
	    dqm->active_runlist)
		goto out;
	sim_wait_us(g->map_delay_us);
	if (g->map_delay_us)
		sim_truth_count("map_wait_us", dqm->dev->id, 0, 0, 0, g->map_delay_us);
	sim_apply_limits(dqm->dev);
	sim_calc_rlib(dqm, g);
	dqm->active_runlist = true;
out:
	if (!retval)
		sim_victims_mapped(g);
	sim_runlist_gauges(dqm, g);
	count_op(dqm, "map", 0, retval, 1);
	return retval;
}

/*
 * Every call of the two hooked runlist functions goes through these: the
 * time before the call and after the return, which bracket gpuq's from
 * outside (kfd_sim_victims.c, sim_oversub_end).
 */
static int sim_unmap(struct device_queue_manager *dqm, enum kfd_unmap_queues_filter filter,
		     uint32_t filter_param)
{
	gpu_of(dqm)->unmap_called_ns = ktime_get_ns();
	return UNMAP_CALL(dqm, filter, filter_param);
}

static int sim_map(struct device_queue_manager *dqm)
{
	struct sim_gpu *g = gpu_of(dqm);
	int retval = map_queues_cpsch(dqm);
	u64 now = ktime_get_ns();

	sim_victims_map_returned(g, now);
	if (g->oversub_since_ns && !g->oversub_returned_ns)
		g->oversub_returned_ns = now;
	return retval;
}

/* Inlined into its callers on Debian 6.1, a .constprop clone on 6.12. */
static int execute_queues_cpsch(struct device_queue_manager *dqm,
				enum kfd_unmap_queues_filter filter, uint32_t filter_param)
{
	int retval;

	if (dqm->is_hws_hang)
		return -EIO;
	retval = sim_unmap(dqm, filter, filter_param);
	if (retval)
		return retval;
	return sim_map(dqm);
}

/* ---- MES ------------------------------------------------------------------ */

SIM_HOOK int mes_v11_0_add_hw_queue(struct amdgpu_mes *mes, struct mes_add_queue_input *input)
{
	barrier();
	return 0;
}

SIM_HOOK int mes_v11_0_remove_hw_queue(struct amdgpu_mes *mes, struct mes_remove_queue_input *input)
{
	mes->sim_removed_ns = ktime_get_ns(); /* inside: gpuq's entry is before */
	barrier();
	return 0;
}

#ifdef SIM_KFD_NODE
SIM_HOOK int mes_v12_0_add_hw_queue(struct amdgpu_mes *mes, struct mes_add_queue_input *input)
{
	barrier();
	return 0;
}

SIM_HOOK int mes_v12_0_remove_hw_queue(struct amdgpu_mes *mes, struct mes_remove_queue_input *input)
{
	mes->sim_removed_ns = ktime_get_ns(); /* inside: gpuq's entry is before */
	barrier();
	return 0;
}
#endif

#ifdef KFD_SIM_HAS_FUNC_MES_V12_1_REMOVE_HW_QUEUE
SIM_HOOK int mes_v12_1_add_hw_queue(struct amdgpu_mes *mes, struct mes_add_queue_input *input)
{
	barrier();
	return 0;
}

SIM_HOOK int mes_v12_1_remove_hw_queue(struct amdgpu_mes *mes, struct mes_remove_queue_input *input)
{
	mes->sim_removed_ns = ktime_get_ns(); /* inside: gpuq's entry is before */
	barrier();
	return 0;
}
#endif

SIM_HOOK int add_queue_mes(struct device_queue_manager *dqm, struct queue *q,
			   struct qcm_process_device *qpd)
{
	struct sim_gpu *g = gpu_of(dqm);
	struct mes_add_queue_input in = {
		.process_id = q->process->pasid,
		.doorbell_offset = q->properties.doorbell_off,
		.wptr_addr = (uint64_t)q->properties.write_ptr,
		.queue_type = q->properties.type,
		.is_kfd_process = 1,
		.is_aql_queue = q->properties.format == KFD_QUEUE_FORMAT_AQL,
		.queue_size = q->properties.queue_size >> 2,
	};
	int r = g->mes.sim_add_hw_queue(&g->mes, &in);

	g->mes.sim_added_ns = ktime_get_ns(); /* inside: gpuq's return is after */
	count_op(dqm, "mes_add", 0, r, 3);
	return r;
}

/* remove_queue_mes is only remove_queue_mes.constprop.0 in both Debian builds */
static __always_inline int remove_queue_mes(struct device_queue_manager *dqm, struct queue *q,
					    struct qcm_process_device *qpd)
{
	struct sim_gpu *g = gpu_of(dqm);
	struct mes_remove_queue_input in = {
		.doorbell_offset = q->properties.doorbell_off,
		.gang_context_addr = q->gang_ctx_gpu_addr,
	};
	int r;

	g->mes.sim_remove_called_ns = ktime_get_ns(); /* outside: gpuq's entry is after */
	r = g->mes.sim_remove_hw_queue(&g->mes, &in);
	count_op(dqm, "mes_remove", 0, r, 2);
	return r;
}

/* ---- cpsch ops -------------------------------------------------------------- */

static int allocate_doorbell(struct sim_gpu *g, struct queue *q)
{
	unsigned int id = find_first_zero_bit(g->doorbell_bitmap, KFD_SIM_MAX_QUEUES_PER_PROCESS);

	if (id >= KFD_SIM_MAX_QUEUES_PER_PROCESS)
		return -EBUSY;
	set_bit(id, g->doorbell_bitmap);
	q->doorbell_id = id;
	/* 64-bit doorbells: the offset counts dwords */
	q->properties.doorbell_off = 0x1000 + id * 2;
	return 0;
}

static void deallocate_doorbell(struct sim_gpu *g, struct queue *q)
{
	clear_bit(q->doorbell_id, g->doorbell_bitmap);
}

/*
 * Live queues amdkfd marks is_evicted (gpuq_queues_evicted): called with
 * +1 after a queue becomes evicted or an evicted one is added, -1 before it
 * stops being evicted or leaves the process's list.
 */
static void count_evicted_queue(struct device_queue_manager *dqm, struct qcm_process_device *qpd,
				struct queue *q, int delta)
{
	if (q->properties.is_evicted)
		sim_truth_count("evicted_queues", dqm->dev->id, 0, 0, qpd_cgroup(qpd), delta);
}

static SIM_HOOK int create_queue_cpsch(struct device_queue_manager *dqm, struct queue *q,
				       struct qcm_process_device *qpd,
				       const struct kfd_criu_queue_priv_data *qd,
				       const void *restore_mqd, const void *restore_ctl_stack)
{
	struct sim_gpu *g = gpu_of(dqm);
	int retval;

	dqm_lock(dqm);
	cause_begin(dqm, CAUSE_CREATE, qpd);
	retval = allocate_doorbell(g, q);
	if (retval)
		goto out;
	q->gang_ctx_gpu_addr = 0x800000000ull + (u64)q->doorbell_id * 4096;
	q->properties.is_evicted = !!qpd->evicted;
	q->properties.is_active = SIM_QUEUE_IS_ACTIVE(q->properties);
	list_add(&q->list, &qpd->queues_list);
	count_evicted_queue(dqm, qpd, q, 1);
	qpd->queue_count++;
	if (q->properties.is_active) {
		increment_queue_count(dqm, q);
		if (!SIM_ENABLE_MES(dqm->dev))
			retval =
			    execute_queues_cpsch(dqm, KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES, 0);
		else
			retval = add_queue_mes(dqm, q, qpd);
		if (retval)
			goto cleanup_queue;
	}
	dqm->total_queue_count++;
	cause_end(dqm);
	dqm_unlock(dqm);
	return 0;

cleanup_queue:
	qpd->queue_count--;
	count_evicted_queue(dqm, qpd, q, -1);
	list_del(&q->list);
	if (q->properties.is_active)
		decrement_queue_count(dqm, q);
	deallocate_doorbell(g, q);
out:
	cause_end(dqm);
	dqm_unlock(dqm);
	return retval;
}

static SIM_HOOK int destroy_queue_cpsch(struct device_queue_manager *dqm,
					struct qcm_process_device *qpd, struct queue *q)
{
	int retval = 0;

	dqm_lock(dqm);
	cause_begin(dqm, CAUSE_DESTROY, qpd);
	deallocate_doorbell(gpu_of(dqm), q);
	count_evicted_queue(dqm, qpd, q, -1);
	list_del(&q->list);
	qpd->queue_count--;
	if (q->properties.is_active) {
		decrement_queue_count(dqm, q);
		if (!SIM_ENABLE_MES(dqm->dev))
			retval =
			    execute_queues_cpsch(dqm, KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES, 0);
		else
			retval = remove_queue_mes(dqm, q, qpd);
	}
	dqm->total_queue_count--;
	cause_end(dqm);
	dqm_unlock(dqm);
	/* amdkfd returns an unmap failure here, but the queue is gone anyway */
	return retval == -ETIME ? 0 : retval;
}

/* mqd_manager->update_mqd: recompute is_active (the name clashes with ipc/sem.c) */
static int update_queue(struct device_queue_manager *dqm, struct queue *q,
			struct mqd_update_info *minfo)
{
	struct kfd_process_device *pdd = sim_pdd_by_gpu(q->process, dqm->dev->id);
	u64 removed_ns = 0, remove_called_ns = 0;
	bool prev_active;
	int retval = 0;

	dqm_lock(dqm);
	cause_begin(dqm, CAUSE_UPDATE, &pdd->qpd);
	prev_active = q->properties.is_active;
	if (dqm->sched_policy != KFD_SCHED_POLICY_NO_HWS) {
		if (!SIM_ENABLE_MES(dqm->dev))
			retval = sim_unmap(dqm, KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES, 0);
		else if (prev_active) {
			retval = remove_queue_mes(dqm, q, &pdd->qpd);
			if (!retval) {
				removed_ns = gpu_of(dqm)->mes.sim_removed_ns;
				remove_called_ns = gpu_of(dqm)->mes.sim_remove_called_ns;
				sim_victims_mes_removed(gpu_of(dqm), q);
			}
		}
		if (retval)
			goto out_unlock; /* "unmap queue failed" */
	}
	q->properties.is_active = SIM_QUEUE_IS_ACTIVE(q->properties);
	/* amdkfd's order: a GWS change is only seen when the activity did not change */
	if (q->properties.is_active && !prev_active) {
		increment_queue_count(dqm, q);
	} else if (!q->properties.is_active && prev_active) {
		decrement_queue_count(dqm, q);
	} else if (q->gws && !q->properties.is_gws) {
		if (q->properties.is_active)
			dqm->gws_queue_count++;
		q->properties.is_gws = true;
	} else if (!q->gws && q->properties.is_gws) {
		if (q->properties.is_active)
			dqm->gws_queue_count--;
		q->properties.is_gws = false;
	}
	if (dqm->sched_policy != KFD_SCHED_POLICY_NO_HWS) {
		if (!SIM_ENABLE_MES(dqm->dev))
			retval = sim_map(dqm);
		else if (q->properties.is_active) {
			retval = add_queue_mes(dqm, q, &pdd->qpd);
			if (!retval && removed_ns)
				sim_victims_mes_readded(gpu_of(dqm), q, removed_ns,
							gpu_of(dqm)->mes.sim_added_ns,
							remove_called_ns, ktime_get_ns());
		}
	}
out_unlock:
	cause_end(dqm);
	dqm_unlock(dqm);
	return retval;
}

/*
 * A process's qpd off dqm->queues, its device_process_node freed, as
 * amdkfd's unregister_process and process_termination_cpsch; under the
 * dqm lock.
 */
static void remove_process_node(struct device_queue_manager *dqm, struct qcm_process_device *qpd)
{
	struct device_process_node *n, *next;

	list_for_each_entry_safe(n, next, &dqm->queues, list) if (n->qpd == qpd)
	{
		list_del(&n->list);
		kfree(n);
		break;
	}
}

static int register_process(struct device_queue_manager *dqm, struct qcm_process_device *qpd)
{
	struct device_process_node *n = kzalloc(sizeof(*n), GFP_KERNEL);

	if (!n)
		return -ENOMEM;
	n->qpd = qpd;
	dqm_lock(dqm);
	list_add(&n->list, &dqm->queues);
	dqm->processes_count++;
	dqm_unlock(dqm);
	return 0;
}

static int unregister_process(struct device_queue_manager *dqm, struct qcm_process_device *qpd)
{
	dqm_lock(dqm);
	dqm->processes_count--;
	remove_process_node(dqm, qpd);
	dqm_unlock(dqm);
	return 0;
}

static void count_transition(struct device_queue_manager *dqm, struct qcm_process_device *qpd,
			     const char *what, uint32_t trigger)
{
	sim_truth_count(what, dqm->dev->id, trigger, 0, qpd_cgroup(qpd), 1);
}

/* Processes evicted on a GPU and not restored (yet) */
static void count_transition_gauge(struct device_queue_manager *dqm, struct qcm_process_device *qpd,
				   int delta)
{
	sim_truth_count("evicted", dqm->dev->id, 0, 0, qpd_cgroup(qpd), delta);
}

/* The trigger of the eviction in progress (kfd_process_evict_queues) */
static uint32_t sim_current_trigger = 255;

static SIM_HOOK int evict_process_queues_cpsch(struct device_queue_manager *dqm,
					       struct qcm_process_device *qpd)
{
	struct kfd_process_device *pdd = container_of(qpd, struct kfd_process_device, qpd);
	struct queue *q;
	int retval = 0;

	dqm_lock(dqm);
	cause_begin(dqm, CAUSE_EVICT, qpd);
	if (qpd->evicted++ > 0) /* already evicted, do nothing */
		goto out;
	count_transition(dqm, qpd, "evict", sim_current_trigger);
	count_transition_gauge(dqm, qpd, 1);
	pdd->last_evict_timestamp = get_jiffies_64();
	list_for_each_entry(q, &qpd->queues_list, list)
	{
		q->properties.is_evicted = true;
		count_evicted_queue(dqm, qpd, q, 1);
		if (!q->properties.is_active)
			continue;
		q->properties.is_active = false;
		decrement_queue_count(dqm, q);
		if (SIM_ENABLE_MES(dqm->dev)) {
			retval = remove_queue_mes(dqm, q, qpd);
			if (retval)
				goto out;
		}
	}
	if (!SIM_ENABLE_MES(dqm->dev))
		retval =
		    execute_queues_cpsch(dqm,
					 qpd->is_debug ? KFD_UNMAP_QUEUES_FILTER_ALL_QUEUES
						       : KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES,
					 0);
out:
	cause_end(dqm);
	dqm_unlock(dqm);
	return retval;
}

static SIM_HOOK int restore_process_queues_cpsch(struct device_queue_manager *dqm,
						 struct qcm_process_device *qpd)
{
	struct queue *q;
	int retval = 0;

	dqm_lock(dqm);
	cause_begin(dqm, CAUSE_RESTORE, qpd);
	if (!qpd->evicted) /* amdkfd WARNs here; the simulator is never asked to */
		goto out;
	if (qpd->evicted > 1) { /* ref count still > 0 */
		qpd->evicted--;
		goto out;
	}
	count_transition(dqm, qpd, "restore", 255);
	count_transition_gauge(dqm, qpd, -1);
	list_for_each_entry(q, &qpd->queues_list, list)
	{
		count_evicted_queue(dqm, qpd, q, -1);
		q->properties.is_evicted = false;
		if (!SIM_QUEUE_IS_ACTIVE(q->properties))
			continue;
		q->properties.is_active = true;
		increment_queue_count(dqm, q);
		if (SIM_ENABLE_MES(dqm->dev)) {
			retval = add_queue_mes(dqm, q, qpd);
			if (retval)
				goto out;
		}
	}
	if (!SIM_ENABLE_MES(dqm->dev))
		retval = execute_queues_cpsch(dqm, KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES, 0);
	qpd->evicted = 0;
out:
	cause_end(dqm);
	dqm_unlock(dqm);
	return retval;
}

/*
 * Exit teardown of one process on one GPU, in the kfd_process_wq kworker:
 * the queues leave the hardware here; pqm_uninit() frees them afterwards.
 */
static SIM_HOOK int process_termination_cpsch(struct device_queue_manager *dqm,
					      struct qcm_process_device *qpd)
{
	struct kfd_process_device *pdd = container_of(qpd, struct kfd_process_device, qpd);
	struct queue *q, *next;
	int retval = 0;

	dqm_lock(dqm);
	cause_begin(dqm, CAUSE_TERMINATE, qpd);
	list_for_each_entry_safe(q, next, &qpd->queues_list, list)
	{
		if (q->properties.is_active) {
			decrement_queue_count(dqm, q);
			if (SIM_ENABLE_MES(dqm->dev))
				remove_queue_mes(dqm, q, qpd);
		}
		deallocate_doorbell(gpu_of(dqm), q);
		dqm->total_queue_count--;
		count_evicted_queue(dqm, qpd, q, -1);
		list_del(&q->list);
		qpd->queue_count--;
	}
	if (qpd->evicted)
		count_transition_gauge(dqm, qpd, -1);
	if (pdd->sim_registered) {
		dqm->processes_count--;
		remove_process_node(dqm, qpd); /* as amdkfd */
		pdd->sim_registered = false;
	}
	if (!SIM_ENABLE_MES(dqm->dev))
		retval = execute_queues_cpsch(dqm, KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES, 0);
	cause_end(dqm);
	dqm_unlock(dqm);
	return retval == -ETIME ? 0 : retval;
}

/* ---- nocpsch ops: queues loaded straight into HQDs, no runlist ---------------- */

static SIM_HOOK int create_queue_nocpsch(struct device_queue_manager *dqm, struct queue *q,
					 struct qcm_process_device *qpd,
					 const struct kfd_criu_queue_priv_data *qd,
					 const void *restore_mqd, const void *restore_ctl_stack)
{
	int retval;

	dqm_lock(dqm);
	retval = allocate_doorbell(gpu_of(dqm), q);
	if (!retval) {
		q->properties.is_evicted = !!qpd->evicted;
		q->properties.is_active = SIM_QUEUE_IS_ACTIVE(q->properties);
		list_add(&q->list, &qpd->queues_list);
		count_evicted_queue(dqm, qpd, q, 1);
		qpd->queue_count++;
		if (q->properties.is_active)
			increment_queue_count(dqm, q);
		dqm->total_queue_count++;
	}
	dqm_unlock(dqm);
	return retval;
}

static SIM_HOOK int destroy_queue_nocpsch(struct device_queue_manager *dqm,
					  struct qcm_process_device *qpd, struct queue *q)
{
	dqm_lock(dqm);
	deallocate_doorbell(gpu_of(dqm), q);
	count_evicted_queue(dqm, qpd, q, -1);
	list_del(&q->list);
	qpd->queue_count--;
	if (q->properties.is_active)
		decrement_queue_count(dqm, q);
	dqm->total_queue_count--;
	dqm_unlock(dqm);
	return 0;
}

static SIM_HOOK int evict_process_queues_nocpsch(struct device_queue_manager *dqm,
						 struct qcm_process_device *qpd)
{
	struct queue *q;

	dqm_lock(dqm);
	if (qpd->evicted++ > 0)
		goto out;
	count_transition(dqm, qpd, "evict", sim_current_trigger);
	count_transition_gauge(dqm, qpd, 1);
	list_for_each_entry(q, &qpd->queues_list, list)
	{
		q->properties.is_evicted = true;
		count_evicted_queue(dqm, qpd, q, 1);
		if (!q->properties.is_active)
			continue;
		q->properties.is_active = false; /* destroy_mqd(WAVEFRONT_SAVE) */
		decrement_queue_count(dqm, q);
	}
out:
	dqm_unlock(dqm);
	return 0;
}

static SIM_HOOK int restore_process_queues_nocpsch(struct device_queue_manager *dqm,
						   struct qcm_process_device *qpd)
{
	struct queue *q;

	dqm_lock(dqm);
	if (!qpd->evicted)
		goto out;
	if (qpd->evicted > 1) {
		qpd->evicted--;
		goto out;
	}
	count_transition(dqm, qpd, "restore", 255);
	count_transition_gauge(dqm, qpd, -1);
	list_for_each_entry(q, &qpd->queues_list, list)
	{
		count_evicted_queue(dqm, qpd, q, -1);
		q->properties.is_evicted = false;
		if (!SIM_QUEUE_IS_ACTIVE(q->properties))
			continue;
		q->properties.is_active = true; /* load_mqd */
		increment_queue_count(dqm, q);
	}
	qpd->evicted = 0;
out:
	dqm_unlock(dqm);
	return 0;
}

static SIM_HOOK int process_termination_nocpsch(struct device_queue_manager *dqm,
						struct qcm_process_device *qpd)
{
	struct kfd_process_device *pdd = container_of(qpd, struct kfd_process_device, qpd);
	struct queue *q, *next;

	dqm_lock(dqm);
	list_for_each_entry_safe(q, next, &qpd->queues_list, list)
	{
		if (q->properties.is_active)
			decrement_queue_count(dqm, q);
		deallocate_doorbell(gpu_of(dqm), q);
		dqm->total_queue_count--;
		count_evicted_queue(dqm, qpd, q, -1);
		list_del(&q->list);
		qpd->queue_count--;
	}
	if (qpd->evicted)
		count_transition_gauge(dqm, qpd, -1);
	if (pdd->sim_registered) {
		dqm->processes_count--;
		remove_process_node(dqm, qpd); /* as amdkfd */
		pdd->sim_registered = false;
	}
	dqm_unlock(dqm);
	return 0;
}

/* The trigger is an argument of kfd_process_evict_queues only; pass it down. */
void sim_set_current_trigger(uint32_t trigger)
{
	sim_current_trigger = trigger;
}

/* ---- the GPUs ----------------------------------------------------------------- */

struct sim_gpu_spec {
	uint32_t gpu_id;
	enum sim_sched sched;
	const char *name;
	uint32_t gfx_target_version;
	uint32_t device_id;
	unsigned int mes; /* MES generation: 110, 120 or 121 (GC 12.1, 7.2+) */
};

/*
 * gpu_ids are amdkfd-style hashes (kfd_generate_gpu_id). One GPU per
 * scheduling path: MI210-like HWS, RDNA3 MES v11, a NO_HWS one, from 6.5 an
 * RDNA4 MES v12, and where the kernel has GC 12.1's MES (7.2+) one of those.
 */
static const struct sim_gpu_spec sim_specs[] = {
	{ 0xa9c3, SIM_SCHED_HWS, "ip discovery", 90010, 0x740f, 0 },
	{ 0x5c1e, SIM_SCHED_MES, "ip discovery", 110000, 0x744c, 110 },
	{ 0x3d07, SIM_SCHED_NO_HWS, "vega10", 90000, 0x6860, 0 },
#ifdef SIM_KFD_NODE
	{ 0x7e52, SIM_SCHED_MES, "ip discovery", 120001, 0x7550, 120 },
#endif
#ifdef KFD_SIM_HAS_FUNC_MES_V12_1_REMOVE_HW_QUEUE
	{ 0x8f63, SIM_SCHED_MES, "ip discovery", 120500, 0x75a0, 121 },
#endif
};

/*
 * extra_hws_gpus=N appends N more MI210-like HWS GPUs after those above
 * (nodes 4.., 5.. or 6..), for the programs guest's 8-GPU inference run and pairs;
 * their gpu_ids are 0xb100, 0xb201, ... (distinct from the fixed ones).
 */
static unsigned int extra_hws_gpus;
module_param(extra_hws_gpus, uint, 0444);
MODULE_PARM_DESC(extra_hws_gpus,
		 "more HWS (MI210-like) GPUs after the fixed ones, at most " __stringify(
		     KFD_SIM_MAX_EXTRA_GPUS));

/*
 * extra_partitions=P makes the extra GPUs partitions of physical GPUs, P
 * each (an MI300X in CPX mode: 8; DPX: 2), as kfd_topology_add_device()
 * shows a partitioned GPU's KFD nodes: the GPU's PCI address with the
 * partition ORed into location_id (kfd->num_nodes > 1: location_id |=
 * node_id, the function bits), the GPU's unique_id on each, gfx942. Each
 * partition keeps a kfd_dev/kfd_node of its own here: gpuq reads what a
 * partition is from the topology alone.
 */
static unsigned int extra_partitions;
module_param(extra_partitions, uint, 0444);
MODULE_PARM_DESC(extra_partitions,
		 "the extra GPUs as partitions of physical GPUs, this many each (0, 1: none)");

static struct sim_gpu_spec sim_extra_specs[KFD_SIM_MAX_EXTRA_GPUS];

static const struct sim_gpu_spec *sim_spec(unsigned int i)
{
	if (i < ARRAY_SIZE(sim_specs))
		return &sim_specs[i];
	return &sim_extra_specs[i - ARRAY_SIZE(sim_specs)];
}

void sim_gpus_init(void)
{
	unsigned int i, extra = min_t(unsigned int, extra_hws_gpus, KFD_SIM_MAX_EXTRA_GPUS);
	unsigned int per_gpu = max_t(unsigned int, extra_partitions, 1);
	/* partitions of MI300X (gfx942), else MI210-like GPUs */
	bool mi300x = per_gpu > 1;

	for (i = 0; i < extra; i++)
		sim_extra_specs[i] = (struct sim_gpu_spec){
			.gpu_id = 0xb100 + i * 0x101,
			.sched = SIM_SCHED_HWS,
			.name = "ip discovery",
			.gfx_target_version = mi300x ? 90402 : 90010,
			.device_id = mi300x ? 0x74a1 : 0x740f,
		};
	sim_num_gpus = ARRAY_SIZE(sim_specs) + extra;
	for (i = 0; i < sim_num_gpus; i++) {
		const struct sim_gpu_spec *s = sim_spec(i);
		struct sim_gpu *g = &sim_gpus[i];
		struct device_queue_manager *dqm = &g->dqm;
		/* the physical GPU (its bus) and the partition on it */
		unsigned int bus = i, partition = 0;

		if (i >= ARRAY_SIZE(sim_specs)) {
			bus = ARRAY_SIZE(sim_specs) + (i - ARRAY_SIZE(sim_specs)) / per_gpu;
			partition = (i - ARRAY_SIZE(sim_specs)) % per_gpu;
		}
		g->sched = s->sched;
		g->name = s->name;
		g->gfx_target_version = s->gfx_target_version;
		g->device_id = s->device_id;
		g->location_id = (0x03 + bus) << 8 | partition; /* bus 3+, device 0 */
		/* a partition's: its physical GPU's, that of partition 0 */
		g->unique_id = 0x1a2b3c4d00000000ull | sim_spec(i - partition)->gpu_id;
		g->node = i + 1; /* node 0 is the CPU */
		g->dev.id = s->gpu_id;
		g->dev.dqm = dqm;
#ifdef SIM_KFD_NODE
		g->dev.node_id = 0;
		g->dev.kfd = &g->kfd;
		g->kfd.nodes[0] = &g->dev;
		g->kfd.num_nodes = 1;
		g->kfd.shared_resources.enable_mes = s->sched == SIM_SCHED_MES;
		g->kfd.shared_resources.drm_render_minor = 128 + i;
#else
		g->dev.shared_resources.enable_mes = s->sched == SIM_SCHED_MES;
		g->dev.shared_resources.drm_render_minor = 128 + i;
		g->dev.init_complete = true;
#endif
		g->dev.adev = &g->adev;
		dqm->dev = &g->dev;
		sim_apply_limits(&g->dev);
		dqm->packet_mgr.dqm = dqm;
		mutex_init(&dqm->lock_hidden);
		INIT_LIST_HEAD(&dqm->queues);
		g->map_gen = 1; /* a new queue's 0 is never mapped */
		dqm->sched_running = true;
		g->mes.sim_add_hw_queue = mes_v11_0_add_hw_queue;
		g->mes.sim_remove_hw_queue = mes_v11_0_remove_hw_queue;
#ifdef SIM_KFD_NODE
		if (s->mes == 120) {
			g->mes.sim_add_hw_queue = mes_v12_0_add_hw_queue;
			g->mes.sim_remove_hw_queue = mes_v12_0_remove_hw_queue;
		}
#endif
#ifdef KFD_SIM_HAS_FUNC_MES_V12_1_REMOVE_HW_QUEUE
		if (s->mes == 121) {
			g->mes.sim_add_hw_queue = mes_v12_1_add_hw_queue;
			g->mes.sim_remove_hw_queue = mes_v12_1_remove_hw_queue;
		}
#endif
		dqm->ops.update_queue = update_queue;
		dqm->ops.register_process = register_process;
		dqm->ops.unregister_process = unregister_process;
		if (s->sched == SIM_SCHED_NO_HWS) {
			dqm->sched_policy = KFD_SCHED_POLICY_NO_HWS;
			dqm->ops.create_queue = create_queue_nocpsch;
			dqm->ops.destroy_queue = destroy_queue_nocpsch;
			dqm->ops.process_termination = process_termination_nocpsch;
			dqm->ops.evict_process_queues = evict_process_queues_nocpsch;
			dqm->ops.restore_process_queues = restore_process_queues_nocpsch;
		} else {
			dqm->sched_policy = KFD_SCHED_POLICY_HWS;
			dqm->ops.create_queue = create_queue_cpsch;
			dqm->ops.destroy_queue = destroy_queue_cpsch;
			dqm->ops.process_termination = process_termination_cpsch;
			dqm->ops.evict_process_queues = evict_process_queues_cpsch;
			dqm->ops.restore_process_queues = restore_process_queues_cpsch;
		}
	}
}

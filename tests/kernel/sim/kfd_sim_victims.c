// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's truth of preemption as the victims see it: which cgroups'
 * queues a runlist operation took off the GPU, by the cause of the operation
 * and whether the victim's own cgroup caused it, and for how long.
 *
 * Taken from the simulator's own state, not from gpuq's rules: a queue is
 * on the GPU when the last map_queues_cpsch found it active (its
 * sim_map_gen is the GPU's generation); an unmap of a mapped runlist takes
 * off every such queue still on its process's list and active, and bumps
 * the generation. The window of a victim cgroup runs from the unmap's entry
 * to the return of the next map. MES: an update removes one queue and adds
 * it again, from mes_v1x_y_remove_hw_queue to add_queue_mes.
 *
 * Each window is timed twice, to bracket gpuq's, which is taken by its
 * programs at the hooked functions' entry and return: from inside the
 * functions ("victim_ns": after the entry, before the return) and from
 * their callers ("victim_ns_out": before the call, after the return,
 * sim_unmap and sim_map in kfd_sim_dqm.c). gpuq's must lie between them.
 *
 * Truth lines: "victim" (count), "victim_ns" and "victim_ns_out"
 * (nanoseconds), a = cause (GPUQ_CAUSE_* numbering), b = 1 if the victim's
 * cgroup caused it, + 2 on MES. All under the dqm lock.
 */
#include <linux/ktime.h>
#include <linux/list.h>

#include "kfd_sim.h"

static uint32_t victim_b(struct sim_gpu *g, u64 cgroup, bool mes)
{
	return (g->sim_cause && g->sim_cause_cgroup == cgroup ? 1 : 0) + (mes ? 2 : 0);
}

void sim_victims_unmapped(struct sim_gpu *g, u64 start_ns)
{
	struct device_process_node *n;
	unsigned int i;

	list_for_each_entry(n, &g->dqm.queues, list)
	{
		struct qcm_process_device *qpd = n->qpd;
		u64 cg = sim_process_cgroup(qpd->pqm->process);
		bool on_gpu = false;
		struct queue *q;

		list_for_each_entry(q, &qpd->queues_list, list) if (q->properties.is_active &&
								    q->sim_map_gen == g->map_gen)
		    on_gpu = true;
		if (!on_gpu)
			continue;
		for (i = 0; i < g->n_off; i++)
			if (g->off[i].cgroup == cg)
				break;
		if (i < g->n_off)
			continue; /* a second process of the cgroup */
		if (WARN_ON_ONCE(g->n_off == KFD_SIM_MAX_VICTIMS))
			break;
		g->off[g->n_off++] = (struct sim_off_window){
			.cgroup = cg,
			.cause = g->sim_cause,
			.self = victim_b(g, cg, false),
			.start_ns = start_ns,
			.called_ns = g->unmap_called_ns,
		};
		sim_truth_count("victim", g->dev.id, g->sim_cause, victim_b(g, cg, false), cg, 1);
	}
	g->map_gen++;
}

void sim_victims_mapped(struct sim_gpu *g)
{
	u64 now = ktime_get_ns();
	struct device_process_node *n;
	unsigned int i;

	for (i = 0; i < g->n_off; i++)
		sim_truth_count("victim_ns", g->dev.id, g->off[i].cause, g->off[i].self,
				g->off[i].cgroup, now - g->off[i].start_ns);
	g->off_closed = true;
	list_for_each_entry(n, &g->dqm.queues, list)
	{
		struct queue *q;

		list_for_each_entry(q, &n->qpd->queues_list, list) if (q->properties.is_active)
		    q->sim_map_gen = g->map_gen;
	}
}

/* The map that closed the windows has returned to its caller (sim_map). */
void sim_victims_map_returned(struct sim_gpu *g, u64 returned_ns)
{
	unsigned int i;

	if (!g->off_closed)
		return;
	for (i = 0; i < g->n_off; i++)
		sim_truth_count("victim_ns_out", g->dev.id, g->off[i].cause, g->off[i].self,
				g->off[i].cgroup, returned_ns - g->off[i].called_ns);
	g->n_off = 0;
	g->off_closed = false;
}

void sim_victims_mes_removed(struct sim_gpu *g, struct queue *q)
{
	u64 cg = sim_process_cgroup(q->process);

	sim_truth_count("victim", g->dev.id, g->sim_cause, victim_b(g, cg, true), cg, 1);
}

void sim_victims_mes_readded(struct sim_gpu *g, struct queue *q, u64 start_ns, u64 end_ns,
			     u64 called_ns, u64 returned_ns)
{
	u64 cg = sim_process_cgroup(q->process);

	sim_truth_count("victim_ns", g->dev.id, g->sim_cause, victim_b(g, cg, true), cg,
			end_ns - start_ns);
	sim_truth_count("victim_ns_out", g->dev.id, g->sim_cause, victim_b(g, cg, true), cg,
			returned_ns - called_ns);
}

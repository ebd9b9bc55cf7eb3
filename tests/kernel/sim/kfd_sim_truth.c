// SPDX-License-Identifier: GPL-2.0
/*
 * KFD simulator: the ground truth, what the simulated driver did, counted
 * where it did it (not where gpuq hooks), read by the guest test from
 * /sys/kernel/debug/kfd_sim/truth as one line per series:
 *
 *   <what> <gpu_id> <a> <b> <cgroup id> <value>
 *
 * what        a                  b            value
 * create      kfd_queue_type     0            queues created (ioctl succeeded)
 * create_fail uapi queue_type    errno        failed create ioctls (gpu_id as requested)
 * destroy     kfd_queue_type     1 ioctl, 2 exit teardown
 * exit        0                  0            mm released (gpu_id 0)
 * queues      kfd_queue_type     0            live queues (gauge)
 * processes   0                  0            processes with a queue on the GPU (gauge)
 * prio        0 low, 1 medium, 2 high  0      live queues by pipe priority class (gauge)
 * cumask      0 all_cus, 1 restricted  0      live queues given a CU mask by a successful
 *                                             AMDKFD_IOC_SET_CU_MASK, by its class (gauge;
 *                                             restricted: it leaves out one of the GPU's
 *                                             104 active CUs; the last set counts)
 * unmap       filter             errno        unmap_queues_cpsch calls (cgroup 0)
 * map         0                  errno        map_queues_cpsch calls (cgroup 0)
 * unmap_wait_us, map_wait_us  0  0            microseconds those calls waited (fence wait)
 * mes_add     0                  errno        add_queue_mes calls
 * mes_remove  0                  errno        remove_queue_mes calls
 * evict       trigger            0            qpd->evicted 0 -> 1 transitions
 * restore     255                0            qpd->evicted 1 -> 0 transitions
 * evicted     0                  0            processes evicted on the GPU (gauge)
 * evicted_queues  0              0            live queues marked is_evicted (gauge)
 * victim      cause              1 own cgroup caused it, +2 MES
 *                                             times the cgroup's queues were taken off
 * victim_ns   cause              as victim    nanoseconds off, unmap entry to the map
 *                                             that put them back (kfd_sim_victims.c),
 *                                             timed inside the two functions
 * victim_ns_out  cause           as victim    the same, timed by their callers
 * oversub_ns  0                  0            nanoseconds oversubscribed, inside the
 *                                             map that built it to inside the unmap
 * oversub_ns_in  0               0            the same, from the map's return to the
 *                                             unmap's call (kfd_sim_dqm.c)
 *
 * and /sys/kernel/debug/kfd_sim/queue_types, "<kfd_queue_type> <label>" per
 * line: the label gpuq must export for each value of the real module's enum
 * (kfd_sim_btf.h), which names the truth's queue types for the comparison.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "kfd_sim.h"

#define SIM_TRUTH_MAX 1024

struct sim_truth {
	char what[16];
	uint32_t gpu_id, a, b;
	u64 cgroup;
	s64 value;
};

static DEFINE_SPINLOCK(truth_lock);
static struct sim_truth truth[SIM_TRUTH_MAX];
static unsigned int truth_n;
static bool truth_overflow;
static struct dentry *truth_dir;

void sim_truth_count(const char *what, uint32_t gpu_id, uint32_t a, uint32_t b, u64 cgroup, s64 n)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&truth_lock, flags);
	for (i = 0; i < truth_n; i++) {
		struct sim_truth *t = &truth[i];

		if (t->gpu_id == gpu_id && t->a == a && t->b == b && t->cgroup == cgroup &&
		    strcmp(t->what, what) == 0) {
			t->value += n;
			goto out;
		}
	}
	if (truth_n == SIM_TRUTH_MAX) {
		truth_overflow = true;
		goto out;
	}
	strscpy(truth[truth_n].what, what, sizeof(truth[truth_n].what));
	truth[truth_n].gpu_id = gpu_id;
	truth[truth_n].a = a;
	truth[truth_n].b = b;
	truth[truth_n].cgroup = cgroup;
	truth[truth_n].value = n;
	truth_n++;
out:
	spin_unlock_irqrestore(&truth_lock, flags);
}

static int truth_show(struct seq_file *m, void *v)
{
	unsigned int i;

	spin_lock_irq(&truth_lock);
	for (i = 0; i < truth_n; i++)
		seq_printf(m, "%s %u %u %u %llu %lld\n", truth[i].what, truth[i].gpu_id, truth[i].a,
			   truth[i].b, truth[i].cgroup, truth[i].value);
	if (truth_overflow)
		seq_puts(m, "overflow 0 0 0 0 1\n");
	spin_unlock_irq(&truth_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(truth);

static const char *const queue_type_labels[] = { KFD_SIM_QUEUE_TYPE_LABELS };

static int queue_types_show(struct seq_file *m, void *v)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(queue_type_labels); i++)
		if (queue_type_labels[i])
			seq_printf(m, "%u %s\n", i, queue_type_labels[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(queue_types);

int sim_truth_init(void)
{
	truth_dir = debugfs_create_dir("kfd_sim", NULL);
	debugfs_create_file("truth", 0444, truth_dir, NULL, &truth_fops);
	debugfs_create_file("queue_types", 0444, truth_dir, NULL, &queue_types_fops);
	return 0;
}

void sim_truth_exit(void)
{
	debugfs_remove_recursive(truth_dir);
}

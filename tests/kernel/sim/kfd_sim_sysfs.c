// SPDX-License-Identifier: GPL-2.0
/*
 * KFD simulator: the sysfs amdkfd publishes under /sys/class/kfd/kfd.
 *
 *  proc/<pid>/{pasid,queues/<qid>/{size,type,gpuid}}  (kfd_process.c: values
 *      printed without a newline, type as the internal enum kfd_queue_type)
 *  topology/{generation_id,system_properties,nodes/<N>/{gpu_id,name,properties}}
 *      (kfd_topology.c: node 0 is the CPU with gpu_id 0, then one per GPU)
 */
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "kfd_sim.h"

static struct kobject *procfs_kobj;

/* ---- proc/<pid>/queues/<qid> ------------------------------------------------------ */

static struct attribute attr_queue_size = { .name = "size", .mode = 0444 };
static struct attribute attr_queue_type = { .name = "type", .mode = 0444 };
static struct attribute attr_queue_gpuid = { .name = "gpuid", .mode = 0444 };

static struct attribute *procfs_queue_attrs[] = {
	&attr_queue_size,
	&attr_queue_type,
	&attr_queue_gpuid,
	NULL,
};
ATTRIBUTE_GROUPS(procfs_queue);

static ssize_t kfd_procfs_queue_show(struct kobject *kobj, struct attribute *attr, char *buffer)
{
	struct queue *q = container_of(kobj, struct queue, kobj);

	if (attr == &attr_queue_size)
		return snprintf(buffer, PAGE_SIZE, "%llu", q->properties.queue_size);
	if (attr == &attr_queue_type)
		return snprintf(buffer, PAGE_SIZE, "%d", q->properties.type);
	if (attr == &attr_queue_gpuid)
		return snprintf(buffer, PAGE_SIZE, "%u", q->device->id);
	return 0;
}

static const struct sysfs_ops procfs_queue_ops = {
	.show = kfd_procfs_queue_show,
};

/* The queue's memory is freed by uninit_queue(), right after the del. */
static void kfd_procfs_queue_release(struct kobject *kobj)
{
}

static const struct kobj_type procfs_queue_type = {
	.release = kfd_procfs_queue_release,
	.sysfs_ops = &procfs_queue_ops,
	.default_groups = procfs_queue_groups,
};

noinline __attribute__((__noipa__)) int kfd_procfs_add_queue(struct queue *q)
{
	struct kfd_process *proc;
	int ret;

	if (!q || !q->process)
		return -EINVAL;
	proc = q->process;
	if (!proc->kobj_queues)
		return -EFAULT;
	ret = kobject_init_and_add(&q->kobj, &procfs_queue_type, proc->kobj_queues, "%u",
				   q->properties.queue_id);
	if (ret < 0) {
		pr_warn("Creating proc/<pid>/queues/%u failed", q->properties.queue_id);
		kobject_put(&q->kobj);
		return ret;
	}
	return 0;
}

noinline __attribute__((__noipa__)) void kfd_procfs_del_queue(struct queue *q)
{
	if (!q)
		return;
	kobject_del(&q->kobj);
	kobject_put(&q->kobj);
}

/* ---- proc/<pid> ----------------------------------------------------------------- */

static ssize_t kfd_procfs_show(struct kobject *kobj, struct attribute *attr, char *buffer)
{
	struct kfd_process *p = NULL;

	if (strcmp(attr->name, "pasid") == 0) {
		p = container_of(attr, struct kfd_process, attr_pasid);
		return snprintf(buffer, PAGE_SIZE, "%d\n", p->pasid);
	}
	return 0;
}

static void kfd_procfs_kobj_release(struct kobject *kobj)
{
	kfree(kobj);
}

static const struct sysfs_ops kfd_procfs_ops = {
	.show = kfd_procfs_show,
};

static const struct kobj_type procfs_type = {
	.release = kfd_procfs_kobj_release,
	.sysfs_ops = &kfd_procfs_ops,
};

int kfd_process_create_sysfs(struct kfd_process *p, struct kfd_process *primary)
{
	int ret;

	p->kobj = kzalloc(sizeof(*p->kobj), GFP_KERNEL);
	if (!p->kobj)
		return -ENOMEM;
#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
	if (primary)
		ret = kobject_init_and_add(p->kobj, &procfs_type, primary->kobj, "context_%u",
					   p->context_id);
	else
#endif
		ret = kobject_init_and_add(p->kobj, &procfs_type, procfs_kobj, "%d",
					   (int)p->lead_thread->pid);
	if (ret) {
		kobject_put(p->kobj);
		p->kobj = NULL;
		return ret;
	}
	sysfs_attr_init(&p->attr_pasid);
	p->attr_pasid.name = "pasid";
	p->attr_pasid.mode = 0444;
	ret = sysfs_create_file(p->kobj, &p->attr_pasid);
	p->kobj_queues = kobject_create_and_add("queues", p->kobj);
	if (ret || !p->kobj_queues) {
		kfd_process_remove_sysfs(p);
		return -ENOMEM;
	}
	return 0;
}

void kfd_process_remove_sysfs(struct kfd_process *p)
{
	if (!p->kobj)
		return;
	sysfs_remove_file(p->kobj, &p->attr_pasid);
	if (p->kobj_queues) {
		kobject_del(p->kobj_queues);
		kobject_put(p->kobj_queues);
		p->kobj_queues = NULL;
	}
	kobject_del(p->kobj);
	kobject_put(p->kobj);
	p->kobj = NULL;
}

int kfd_procfs_init(struct kobject *parent)
{
	procfs_kobj = kobject_create_and_add("proc", parent);
	return procfs_kobj ? 0 : -ENOMEM;
}

void kfd_procfs_shutdown(void)
{
	kobject_del(procfs_kobj);
	kobject_put(procfs_kobj);
}

/* ---- topology ----------------------------------------------------------------- */

struct sim_topology_node {
	struct kobject kobj;
	struct sim_gpu *gpu; /* NULL: the CPU node */
};

static struct kobject *topology_kobj, *nodes_kobj;
static struct sim_topology_node *topology_nodes[KFD_SIM_MAX_GPUS + 1];

static struct attribute attr_gpu_id = { .name = "gpu_id", .mode = 0444 };
static struct attribute attr_name = { .name = "name", .mode = 0444 };
static struct attribute attr_props = { .name = "properties", .mode = 0444 };

static struct attribute *node_attrs[] = {
	&attr_gpu_id,
	&attr_name,
	&attr_props,
	NULL,
};
ATTRIBUTE_GROUPS(node);

#define PROP(k, v) (n += sysfs_emit_at(buf, n, "%s %llu\n", k, (unsigned long long)(v)))

static ssize_t node_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	struct sim_topology_node *node = container_of(kobj, struct sim_topology_node, kobj);
	struct sim_gpu *g = node->gpu;
	int n = 0;

	if (attr == &attr_gpu_id)
		return sysfs_emit(buf, "%u\n", g ? g->dev.id : 0);
	if (attr == &attr_name)
		return sysfs_emit(buf, "%s\n", g ? g->name : "");
	if (attr != &attr_props)
		return 0;
	PROP("cpu_cores_count", g ? 0 : 2);
	PROP("simd_count", g ? KFD_SIM_SIMD_COUNT : 0);
	PROP("mem_banks_count", 1);
	PROP("caches_count", 0);
	PROP("io_links_count", g ? 1 : 0);
	PROP("p2p_links_count", 0);
	PROP("cpu_core_id_base", 0);
	PROP("simd_id_base", g ? 2147487744u + g->node : 0);
	PROP("max_waves_per_simd", g ? 8 : 0);
	PROP("lds_size_in_kb", g ? 64 : 0);
	PROP("gds_size_in_kb", 0);
	PROP("num_gws", g ? 64 : 0);
	PROP("wave_front_size", g ? 64 : 0);
	PROP("array_count", g ? 8 : 0);
	PROP("simd_arrays_per_engine", g ? 1 : 0);
	PROP("cu_per_simd_array", g ? 13 : 0);
	PROP("simd_per_cu", g ? KFD_SIM_SIMD_PER_CU : 0);
	PROP("max_slots_scratch_cu", g ? 32 : 0);
	PROP("gfx_target_version", g ? g->gfx_target_version : 0);
	PROP("vendor_id", g ? 0x1002 : 0);
	PROP("device_id", g ? g->device_id : 0);
	PROP("location_id", g ? g->location_id : 0);
	PROP("domain", 0);
	PROP("drm_render_minor", g ? 128 + g->node - 1 : 0);
	PROP("hive_id", 0);
	PROP("num_sdma_engines", g ? 2 : 0);
	PROP("num_sdma_xgmi_engines", 0);
	PROP("num_sdma_queues_per_engine", g ? 8 : 0);
	PROP("num_cp_queues", g ? 24 : 0);
	PROP("max_engine_clk_fcompute", g ? 1700 : 0);
	PROP("local_mem_size", 0);
	PROP("fw_version", g ? 60 : 0);
	PROP("capability", 0);
	PROP("debug_prop", 0);
	PROP("sdma_fw_version", g ? 8 : 0);
	if (g) {
		PROP("unique_id", g->unique_id);
		PROP("num_xcc", 1);
	}
	PROP("max_engine_clk_ccompute", 2400);
	return n;
}

static const struct sysfs_ops node_ops = {
	.show = node_show,
};

static void node_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct sim_topology_node, kobj));
}

static const struct kobj_type node_type = {
	.release = node_release,
	.sysfs_ops = &node_ops,
	.default_groups = node_groups,
};

static ssize_t generation_id_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", 1);
}

static ssize_t system_properties_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
}

static struct kobj_attribute generation_id_attr = __ATTR_RO(generation_id);
static struct kobj_attribute system_properties_attr = __ATTR_RO(system_properties);

int kfd_topology_init(struct kobject *parent)
{
	unsigned int i;
	int ret;

	topology_kobj = kobject_create_and_add("topology", parent);
	if (!topology_kobj)
		return -ENOMEM;
	ret = sysfs_create_file(topology_kobj, &generation_id_attr.attr);
	if (!ret)
		ret = sysfs_create_file(topology_kobj, &system_properties_attr.attr);
	nodes_kobj = kobject_create_and_add("nodes", topology_kobj);
	if (ret || !nodes_kobj)
		return -ENOMEM;
	for (i = 0; i <= sim_num_gpus; i++) {
		struct sim_topology_node *node = kzalloc(sizeof(*node), GFP_KERNEL);

		if (!node)
			return -ENOMEM;
		node->gpu = i ? &sim_gpus[i - 1] : NULL;
		ret = kobject_init_and_add(&node->kobj, &node_type, nodes_kobj, "%d", i);
		if (ret) {
			kobject_put(&node->kobj);
			return ret;
		}
		topology_nodes[i] = node;
	}
	return 0;
}

void kfd_topology_shutdown(void)
{
	unsigned int i;

	for (i = 0; i <= KFD_SIM_MAX_GPUS; i++) {
		if (!topology_nodes[i])
			continue;
		kobject_del(&topology_nodes[i]->kobj);
		kobject_put(&topology_nodes[i]->kobj);
		topology_nodes[i] = NULL;
	}
	if (nodes_kobj) {
		kobject_del(nodes_kobj);
		kobject_put(nodes_kobj);
	}
	if (topology_kobj) {
		sysfs_remove_file(topology_kobj, &generation_id_attr.attr);
		sysfs_remove_file(topology_kobj, &system_properties_attr.attr);
		kobject_del(topology_kobj);
		kobject_put(topology_kobj);
	}
}

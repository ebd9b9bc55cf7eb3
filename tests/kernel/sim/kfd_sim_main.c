// SPDX-License-Identifier: GPL-2.0
/*
 * KFD simulator for gpuq's kernel tier: a module named amdgpu (so
 * /sys/kernel/btf/amdgpu and "[amdgpu]" in kallsyms look like the real
 * driver's) with amdkfd's functions and structs, driven from user space.
 * Never load it beside the real amdgpu (kfd-simulator-recipe.md section 6).
 *
 * Like kfd_chardev.c it registers the "kfd" char device and class, so
 * /dev/kfd and /sys/class/kfd/kfd exist, and dispatches ioctls through a
 * table of amdkfd_ioctl_t with the kernel copy of the args. The real uapi
 * ioctls it implements: GET_VERSION, CREATE_QUEUE, DESTROY_QUEUE,
 * UPDATE_QUEUE, SET_CU_MASK, SET_XNACK_MODE, and CREATE_PROCESS where the
 * kernel has it (7.2+); plus the simulator's controls of kfd_sim_uapi.h.
 */
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <uapi/linux/kfd_ioctl.h>

#include "kfd_sim.h"
#include "kfd_sim_uapi.h"

typedef int amdkfd_ioctl_t(struct file *filep, struct kfd_process *p, void *data);

static int kfd_char_dev_major = -1;
static struct class *kfd_class;
static struct device *kfd_device;
static DEFINE_MUTEX(sim_control_mutex);

static int kfd_ioctl_get_version(struct file *filep, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_version_args *args = data;

	args->major_version = KFD_IOCTL_MAJOR_VERSION;
	args->minor_version = KFD_IOCTL_MINOR_VERSION;
	return 0;
}

/* ---- simulator controls ---------------------------------------------------------- */

/*
 * From 7.3 (sched_dynamic_mode accepts only full and lazy under
 * ARCH_HAS_PREEMPT_LAZY) a BPF program's run is skipped when another task
 * sits preempted inside that program on the CPU (bpf_prog_get_recursion_context).
 * The simulator tier's guest keeps its checks exact by running every task
 * SCHED_FIFO at priority 1, which no equal-priority task preempts; kworkers
 * are not the guest's children, and the process teardown and eviction
 * workers run hooked paths (destroys, runlist unmaps) while FIFO drivers
 * run the same programs. With worker_fifo set, those workers join priority
 * 1 for the length of the work and give it back after.
 */
static bool worker_fifo;
module_param(worker_fifo, bool, 0644);
MODULE_PARM_DESC(
    worker_fifo,
    "teardown and eviction workers run SCHED_FIFO 1 while they work (preempting kernels)");

void sim_worker_enter(void)
{
	if (worker_fifo)
		sched_set_fifo_low(current);
}

void sim_worker_leave(void)
{
	if (worker_fifo)
		sched_set_normal(current, 0);
}

/* evict_process_worker / restore_process_worker: a kworker, not the owner */
static void sim_evict_worker(struct work_struct *work)
{
	struct kfd_process *p = container_of(work, struct kfd_process, sim_evict_work);

	sim_worker_enter();
	if (p->sim_restore)
		p->sim_evict_ret = kfd_process_restore_queues(p);
	else
		p->sim_evict_ret = kfd_process_evict_queues(p, p->sim_evict_trigger);
	sim_worker_leave();
}

static int sim_evict_restore(struct kfd_process *caller, struct kfd_sim_evict_args *args,
			     bool restore)
{
	struct kfd_process *p;

	if (args->pid) {
		p = sim_find_process_by_pid(args->pid);
		if (!p)
			return -ESRCH;
	} else {
		p = caller;
		kref_get(&p->ref);
	}
	mutex_lock(&sim_control_mutex);
	INIT_WORK(&p->sim_evict_work, sim_evict_worker);
	p->sim_restore = restore;
	p->sim_evict_trigger = args->trigger;
	schedule_work(&p->sim_evict_work);
	flush_work(&p->sim_evict_work);
	args->ret = p->sim_evict_ret;
	mutex_unlock(&sim_control_mutex);
	kfd_unref_process(p);
	return 0;
}

static int kfd_sim_ioctl_evict(struct file *filep, struct kfd_process *p, void *data)
{
	return sim_evict_restore(p, data, false);
}

static int kfd_sim_ioctl_restore(struct file *filep, struct kfd_process *p, void *data)
{
	return sim_evict_restore(p, data, true);
}

static int kfd_sim_ioctl_runlist(struct file *filep, struct kfd_process *p, void *data)
{
	struct kfd_sim_runlist_args *args = data;
	struct sim_gpu *g = sim_gpu_by_id(args->gpu_id);

	if (!g)
		return -EINVAL;
	mutex_lock(&g->dqm.lock_hidden);
	g->unmap_delay_us = args->unmap_delay_us;
	g->map_delay_us = args->map_delay_us;
	g->fail_unmaps = args->fail_unmaps;
	mutex_unlock(&g->dqm.lock_hidden);
	return 0;
}

/* ---- the ioctl table ------------------------------------------------------------- */

struct sim_ioctl_desc {
	unsigned int cmd;
	amdkfd_ioctl_t *func;
};

static const struct sim_ioctl_desc sim_ioctls[] = {
	{ AMDKFD_IOC_GET_VERSION, kfd_ioctl_get_version },
	{ AMDKFD_IOC_CREATE_QUEUE, kfd_ioctl_create_queue },
	{ AMDKFD_IOC_DESTROY_QUEUE, kfd_ioctl_destroy_queue },
	{ AMDKFD_IOC_UPDATE_QUEUE, kfd_ioctl_update_queue },
	{ AMDKFD_IOC_SET_CU_MASK, kfd_ioctl_set_cu_mask },
	{ AMDKFD_IOC_ALLOC_QUEUE_GWS, kfd_ioctl_alloc_queue_gws },
	{ AMDKFD_IOC_SET_XNACK_MODE, kfd_ioctl_set_xnack_mode },
#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
	{ AMDKFD_IOC_CREATE_PROCESS, kfd_ioctl_create_process },
#endif
	{ KFD_SIM_IOC_EVICT, kfd_sim_ioctl_evict },
	{ KFD_SIM_IOC_RESTORE, kfd_sim_ioctl_restore },
	{ KFD_SIM_IOC_RUNLIST, kfd_sim_ioctl_runlist },
};

static long kfd_ioctl(struct file *filep, unsigned int cmd, unsigned long arg)
{
	struct kfd_process *p = filep->private_data;
	unsigned int usize = _IOC_SIZE(cmd), i;
	const struct sim_ioctl_desc *d = NULL;
	char stack_kdata[128];
	unsigned int ksize;
	int retcode;

	for (i = 0; i < ARRAY_SIZE(sim_ioctls); i++)
		if (_IOC_NR(sim_ioctls[i].cmd) == _IOC_NR(cmd) &&
		    _IOC_TYPE(sim_ioctls[i].cmd) == _IOC_TYPE(cmd))
			d = &sim_ioctls[i];
	if (!d)
		return -EINVAL; /* amdkfd: "invalid ioctl" */
	/* user space may be built against an older or newer uapi header */
	ksize = _IOC_SIZE(d->cmd);
	if (ksize > sizeof(stack_kdata) || usize > sizeof(stack_kdata))
		return -EINVAL;
	memset(stack_kdata, 0, sizeof(stack_kdata));
	if ((cmd & IOC_IN) && copy_from_user(stack_kdata, (void __user *)arg, usize))
		return -EFAULT;
	retcode = d->func(filep, p, stack_kdata);
	if ((cmd & IOC_OUT) && copy_to_user((void __user *)arg, stack_kdata, usize))
		retcode = -EFAULT;
	return retcode;
}

static int kfd_open(struct inode *inode, struct file *filep)
{
	struct kfd_process *p = kfd_create_process(current);

	if (IS_ERR(p))
		return PTR_ERR(p);
	filep->private_data = p;
	return 0;
}

/* A static, as amdkfd's: gpuq hooks it for secondary contexts (7.2+). */
static SIM_HOOK int kfd_release(struct inode *inode, struct file *filep)
{
	struct kfd_process *p = filep->private_data;

#ifdef KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID
	if (SIM_IS_CONTEXT(p))
		kfd_process_notifier_release_internal(p);
#endif
	kfd_unref_process(p);
	return 0;
}

/*
 * One page of simulated GTT (KFD_SIM_MMAP_GTT): mapped as TTM maps a BO,
 * VM_IO | VM_PFNMAP by remap_pfn_range, read for ptrace and /proc/<pid>/mem
 * by an access hook that copies through the kernel mapping, as
 * ttm_bo_vm_access does (generic_access_phys would ioremap RAM, which x86
 * refuses). The page lives while a mapping of it does (fork, split).
 */
static void gtt_open(struct vm_area_struct *vma)
{
	get_page(vma->vm_private_data);
}

static void gtt_close(struct vm_area_struct *vma)
{
	put_page(vma->vm_private_data);
}

static int gtt_access(struct vm_area_struct *vma, unsigned long addr, void *buf, int len, int write)
{
	unsigned long off = addr - vma->vm_start;
	char *kaddr = page_address((struct page *)vma->vm_private_data);

	if (off >= PAGE_SIZE)
		return -EIO;
	len = min_t(int, len, PAGE_SIZE - off);
	if (write)
		memcpy(kaddr + off, buf, len);
	else
		memcpy(buf, kaddr + off, len);
	return len;
}

static const struct vm_operations_struct gtt_vm_ops = {
	.open = gtt_open,
	.close = gtt_close,
	.access = gtt_access,
};

static int kfd_mmap(struct file *filep, struct vm_area_struct *vma)
{
	struct page *page;
	int err;

	if (vma->vm_pgoff != KFD_SIM_MMAP_GTT >> PAGE_SHIFT ||
	    vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	/* sets VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP */
	err = remap_pfn_range(vma, vma->vm_start, page_to_pfn(page), PAGE_SIZE, vma->vm_page_prot);
	if (err) {
		__free_page(page);
		return err;
	}
	vma->vm_private_data = page;
	vma->vm_ops = &gtt_vm_ops;
	return 0;
}

static const struct file_operations kfd_fops = {
	.mmap = kfd_mmap,
	.owner = THIS_MODULE,
	.unlocked_ioctl = kfd_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.open = kfd_open,
	.release = kfd_release,
};

static int __init kfd_sim_init(void)
{
	int err;

	sim_gpus_init();
	err = sim_process_init();
	if (err)
		return err;
	kfd_char_dev_major = register_chrdev(0, "kfd", &kfd_fops);
	if (kfd_char_dev_major < 0) {
		err = kfd_char_dev_major;
		goto err_wq;
	}
	/* "driver core: class: remove module * from class_create()", v6.4 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	kfd_class = class_create("kfd");
#else
	kfd_class = class_create(THIS_MODULE, "kfd");
#endif
	if (IS_ERR(kfd_class)) {
		err = PTR_ERR(kfd_class);
		goto err_chrdev;
	}
	kfd_device = device_create(kfd_class, NULL, MKDEV(kfd_char_dev_major, 0), NULL, "kfd");
	if (IS_ERR(kfd_device)) {
		err = PTR_ERR(kfd_device);
		goto err_class;
	}
	err = kfd_procfs_init(&kfd_device->kobj);
	if (!err)
		err = kfd_topology_init(&kfd_device->kobj);
	if (err)
		goto err_sysfs;
	sim_truth_init();
	pr_info("kfd_sim: %u simulated GPUs, /dev/kfd major %d\n", sim_num_gpus,
		kfd_char_dev_major);
	return 0;

err_sysfs:
	kfd_topology_shutdown();
	kfd_procfs_shutdown();
	device_destroy(kfd_class, MKDEV(kfd_char_dev_major, 0));
err_class:
	class_destroy(kfd_class);
err_chrdev:
	unregister_chrdev(kfd_char_dev_major, "kfd");
err_wq:
	sim_process_exit();
	return err;
}

static void __exit kfd_sim_exit(void)
{
	sim_process_exit();
	sim_truth_exit();
	kfd_topology_shutdown();
	kfd_procfs_shutdown();
	device_destroy(kfd_class, MKDEV(kfd_char_dev_major, 0));
	class_destroy(kfd_class);
	unregister_chrdev(kfd_char_dev_major, "kfd");
}

module_init(kfd_sim_init);
module_exit(kfd_sim_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KFD simulator (gpuq kernel tier), NOT the AMD GPU driver");

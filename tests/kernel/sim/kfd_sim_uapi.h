/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * KFD simulator control ioctls, on the simulator's /dev/kfd next to the real
 * AMDKFD_IOC_{GET_VERSION,CREATE_QUEUE,DESTROY_QUEUE,UPDATE_QUEUE,SET_CU_MASK}
 * (which use linux/kfd_ioctl.h unchanged). They stand for what a real GPU,
 * TTM or the HWS firmware does on its own; numbers 0x80+ are far above
 * amdkfd's.
 */
#ifndef KFD_SIM_UAPI_H
#define KFD_SIM_UAPI_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#else
#include <linux/types.h>
#include <sys/ioctl.h>
#endif

/*
 * Evict (kfd_process_evict_queues(p, trigger)) or restore
 * (kfd_process_restore_queues(p)) the queues of process `pid` (0: the
 * caller), from a kworker as TTM / the restore worker do; returns when done.
 */
struct kfd_sim_evict_args {
	__u32 pid;     /* in */
	__u32 trigger; /* in: KFD_QUEUE_EVICTION_TRIGGER_* (evict only) */
	__s32 ret;     /* out: what the kernel function returned */
	__u32 pad;
};

/*
 * mmap offset of one page of "GTT" on the simulator's /dev/kfd. It stands
 * for what ROCr >= 6.2 puts a queue's amd_queue_t in on MES GPUs: a GTT
 * buffer mapped from the render node, which TTM maps VM_IO | VM_PFNMAP (no
 * struct pages to pin: process_vm_readv fails with EFAULT) and reads for
 * /proc/<pid>/mem through vm_ops->access (ttm_bo_vm_access). The page is
 * mapped the same way here (remap_pfn_range, an access hook).
 */
#define KFD_SIM_MMAP_GTT (1ULL << 61)

/* Runlist behaviour of one simulated HWS GPU from now on. */
struct kfd_sim_runlist_args {
	__u32 gpu_id;	      /* in */
	__u32 unmap_delay_us; /* in: time each unmap_queues_cpsch spends (fence wait) */
	__u32 map_delay_us;   /* in: time each map_queues_cpsch spends */
	__u32 fail_unmaps;    /* in: the next N unmaps time out with -ETIME */
};

/* linux/kfd_ioctl.h of 7.2+ (KFD ioctl 1.19); Debian 12's linux-libc-dev lacks it */
#ifndef AMDKFD_IOC_CREATE_PROCESS
#define AMDKFD_IOC_CREATE_PROCESS _IO('K', 0x27)
#endif

/*
 * In linux/kfd_ioctl.h long before KFD ioctl 1.3, so in every header the
 * tier builds with (bookworm's linux-libc-dev, the kernels' own); amdkfd's
 * definition for one that would lack it
 */
#ifndef AMDKFD_IOC_SET_CU_MASK
struct kfd_ioctl_set_cu_mask_args {
	__u32 queue_id;	   /* to KFD */
	__u32 num_cu_mask; /* to KFD */
	__u64 cu_mask_ptr; /* to KFD */
};
#define AMDKFD_IOC_SET_CU_MASK _IOW('K', 0x1A, struct kfd_ioctl_set_cu_mask_args)
#endif

#define KFD_SIM_IOC_EVICT _IOWR('K', 0x80, struct kfd_sim_evict_args)
#define KFD_SIM_IOC_RESTORE _IOWR('K', 0x81, struct kfd_sim_evict_args)
#define KFD_SIM_IOC_RUNLIST _IOW('K', 0x82, struct kfd_sim_runlist_args)

#endif /* KFD_SIM_UAPI_H */

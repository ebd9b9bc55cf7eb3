/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The parts of amdkfd's uapi (include/uapi/linux/kfd_ioctl.h) the kernel
 * side decodes: ioctl numbers, the queue-type values of the create args and
 * the leading, stable fields of the create, update and set-CU-mask args. Mirrored here
 * because the BPF side includes vmlinux.h, which cannot be mixed with uapi
 * headers; tests/lib/kfd_uapi_same.h holds every value and offset equal to
 * the real header's: bookworm's linux-libc-dev (Linux 6.1) in the unit tests,
 * each simulator-tier kernel's own in that tier (the values 6.1 lacks).
 */
#ifndef GPUQ_KFD_UAPI_H
#define GPUQ_KFD_UAPI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GPUQ_KFD_IOC_TYPE 'K'
#define GPUQ_KFD_IOC_CREATE_QUEUE 0x02
#define GPUQ_KFD_IOC_DESTROY_QUEUE 0x03
#define GPUQ_KFD_IOC_UPDATE_QUEUE 0x07
#define GPUQ_KFD_IOC_SET_CU_MASK 0x1A
/* AMDKFD_IOC_CREATE_PROCESS, Linux 7.2: not in bookworm's 6.1 header */
#define GPUQ_KFD_IOC_CREATE_PROCESS 0x27

/* KFD_IOC_QUEUE_TYPE_* (they differ from the kernel's enum kfd_queue_type) */
#define GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE 0x0
#define GPUQ_KFD_IOC_QUEUE_TYPE_SDMA 0x1
#define GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE_AQL 0x2
#define GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_XGMI 0x3
/* Linux 6.12: not in bookworm's 6.1 header */
#define GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID 0x4

/* struct kfd_ioctl_create_queue_args, its leading fields */
struct gpuq_kfd_create_queue_args {
	__u64 ring_base_address;
	__u64 write_pointer_address;
	__u64 read_pointer_address;
	__u64 doorbell_offset;
	__u32 ring_size;
	__u32 gpu_id;
	__u32 queue_type;
	__u32 queue_percentage;
	__u32 queue_priority;
	__u32 queue_id;
};

/* struct kfd_ioctl_update_queue_args, whole */
struct gpuq_kfd_update_queue_args {
	__u64 ring_base_address;
	__u32 queue_id;
	__u32 ring_size;
	__u32 queue_percentage;
	__u32 queue_priority;
};

/* struct kfd_ioctl_set_cu_mask_args, whole */
struct gpuq_kfd_set_cu_mask_args {
	__u32 queue_id;
	__u32 num_cu_mask; /* bits, a multiple of 32 */
	__u64 cu_mask_ptr; /* user address of num_cu_mask / 32 words */
};

/* struct kfd_ioctl_alloc_queue_gws_args, whole */
struct gpuq_kfd_alloc_queue_gws_args {
	__u32 queue_id;
	__u32 num_gws;	 /* 0: take the queue's GWS back */
	__u32 first_gws; /* written by amdkfd (0) */
	__u32 pad;
};

#endif /* GPUQ_KFD_UAPI_H */

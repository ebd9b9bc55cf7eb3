/*
 * include/gpuq/kfd_uapi.h held to the real <linux/kfd_ioctl.h>, at compile
 * time: ioctl numbers, queue-type values, and each mirrored field's offset
 * and size. Included by tests/unit/kfd_uapi_test.cc (C++, bookworm's
 * linux-libc-dev, Linux 6.1) and tests/kernel/sim/kfd_uapi_check.c (C, each
 * simulator-tier kernel's own header, which also names what 6.1 lacks).
 */
#ifndef GPUQ_TESTS_KFD_UAPI_SAME_H
#define GPUQ_TESTS_KFD_UAPI_SAME_H

#include <gpuq/kfd_uapi.h>
#include <linux/ioctl.h>
#include <linux/kfd_ioctl.h>
#include <stddef.h>
#ifndef __cplusplus
#include <assert.h>
#endif

#define GPUQ_SAME_FIELD(mirror, real, field)                                  \
  static_assert(                                                              \
      offsetof(struct mirror, field) == offsetof(struct real, field),         \
      #real "." #field " moved");                                             \
  static_assert(                                                              \
      sizeof(((struct mirror*)0)->field) == sizeof(((struct real*)0)->field), \
      #real "." #field " changed size")

GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                ring_base_address);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                write_pointer_address);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                read_pointer_address);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                doorbell_offset);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                ring_size);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                gpu_id);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                queue_type);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                queue_percentage);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                queue_priority);
GPUQ_SAME_FIELD(gpuq_kfd_create_queue_args, kfd_ioctl_create_queue_args,
                queue_id);
/* The leading fields only: the program reads no more than the kernel wrote. */
static_assert(sizeof(struct gpuq_kfd_create_queue_args) <=
                  sizeof(struct kfd_ioctl_create_queue_args),
              "kfd_ioctl_create_queue_args shrank");

GPUQ_SAME_FIELD(gpuq_kfd_update_queue_args, kfd_ioctl_update_queue_args,
                ring_base_address);
GPUQ_SAME_FIELD(gpuq_kfd_update_queue_args, kfd_ioctl_update_queue_args,
                queue_id);
GPUQ_SAME_FIELD(gpuq_kfd_update_queue_args, kfd_ioctl_update_queue_args,
                ring_size);
GPUQ_SAME_FIELD(gpuq_kfd_update_queue_args, kfd_ioctl_update_queue_args,
                queue_percentage);
GPUQ_SAME_FIELD(gpuq_kfd_update_queue_args, kfd_ioctl_update_queue_args,
                queue_priority);
static_assert(sizeof(struct gpuq_kfd_update_queue_args) ==
                  sizeof(struct kfd_ioctl_update_queue_args),
              "kfd_ioctl_update_queue_args changed size");

GPUQ_SAME_FIELD(gpuq_kfd_set_cu_mask_args, kfd_ioctl_set_cu_mask_args,
                queue_id);
GPUQ_SAME_FIELD(gpuq_kfd_set_cu_mask_args, kfd_ioctl_set_cu_mask_args,
                num_cu_mask);
GPUQ_SAME_FIELD(gpuq_kfd_set_cu_mask_args, kfd_ioctl_set_cu_mask_args,
                cu_mask_ptr);
static_assert(sizeof(struct gpuq_kfd_set_cu_mask_args) ==
                  sizeof(struct kfd_ioctl_set_cu_mask_args),
              "kfd_ioctl_set_cu_mask_args changed size");

GPUQ_SAME_FIELD(gpuq_kfd_alloc_queue_gws_args, kfd_ioctl_alloc_queue_gws_args,
                queue_id);
GPUQ_SAME_FIELD(gpuq_kfd_alloc_queue_gws_args, kfd_ioctl_alloc_queue_gws_args,
                num_gws);
GPUQ_SAME_FIELD(gpuq_kfd_alloc_queue_gws_args, kfd_ioctl_alloc_queue_gws_args,
                first_gws);
static_assert(sizeof(struct gpuq_kfd_alloc_queue_gws_args) ==
                  sizeof(struct kfd_ioctl_alloc_queue_gws_args),
              "kfd_ioctl_alloc_queue_gws_args changed size");

#define GPUQ_SAME_IOCTL(real, mirror)                                    \
  static_assert(                                                         \
      _IOC_TYPE(real) == GPUQ_KFD_IOC_TYPE && _IOC_NR(real) == (mirror), \
      #real "'s number differs")
GPUQ_SAME_IOCTL(AMDKFD_IOC_CREATE_QUEUE, GPUQ_KFD_IOC_CREATE_QUEUE);
GPUQ_SAME_IOCTL(AMDKFD_IOC_DESTROY_QUEUE, GPUQ_KFD_IOC_DESTROY_QUEUE);
GPUQ_SAME_IOCTL(AMDKFD_IOC_UPDATE_QUEUE, GPUQ_KFD_IOC_UPDATE_QUEUE);
GPUQ_SAME_IOCTL(AMDKFD_IOC_SET_CU_MASK, GPUQ_KFD_IOC_SET_CU_MASK);

static_assert(KFD_IOC_QUEUE_TYPE_COMPUTE == GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE,
              "KFD_IOC_QUEUE_TYPE_COMPUTE differs");
static_assert(KFD_IOC_QUEUE_TYPE_SDMA == GPUQ_KFD_IOC_QUEUE_TYPE_SDMA,
              "KFD_IOC_QUEUE_TYPE_SDMA differs");
static_assert(KFD_IOC_QUEUE_TYPE_COMPUTE_AQL ==
                  GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
              "KFD_IOC_QUEUE_TYPE_COMPUTE_AQL differs");
static_assert(KFD_IOC_QUEUE_TYPE_SDMA_XGMI == GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
              "KFD_IOC_QUEUE_TYPE_SDMA_XGMI differs");

#endif /* GPUQ_TESTS_KFD_UAPI_SAME_H */

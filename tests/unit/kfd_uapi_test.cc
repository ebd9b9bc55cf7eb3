// The kernel side's mirror of amdkfd's uapi (include/gpuq/kfd_uapi.h)
// against the real header, bookworm's linux-libc-dev (Linux 6.1): ioctl
// numbers, queue-type values, and each mirrored field's offset and size. The
// values 6.1 lacks (CREATE_PROCESS, 7.2; SDMA_BY_ENG_ID, 6.12) are named in
// the mirror; the QEMU simulator tier decodes them from the real 7.3 ioctls.
#include <gpuq/kfd_uapi.h>
#include <gtest/gtest.h>
#include <linux/ioctl.h>
#include <linux/kfd_ioctl.h>

#include <cstddef>

namespace gpuq {
namespace {

#define GPUQ_SAME_FIELD(mirror, real, field)                      \
  static_assert(offsetof(mirror, field) == offsetof(real, field), \
                #field " moved");                                 \
  static_assert(sizeof(mirror::field) == sizeof(real::field), #field " size")

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
// The leading fields only: the program reads no more than the kernel wrote.
static_assert(sizeof(gpuq_kfd_create_queue_args) <=
              sizeof(kfd_ioctl_create_queue_args));

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
static_assert(sizeof(gpuq_kfd_update_queue_args) ==
              sizeof(kfd_ioctl_update_queue_args));

GPUQ_SAME_FIELD(gpuq_kfd_set_cu_mask_args, kfd_ioctl_set_cu_mask_args,
                queue_id);
GPUQ_SAME_FIELD(gpuq_kfd_set_cu_mask_args, kfd_ioctl_set_cu_mask_args,
                num_cu_mask);
GPUQ_SAME_FIELD(gpuq_kfd_set_cu_mask_args, kfd_ioctl_set_cu_mask_args,
                cu_mask_ptr);
static_assert(sizeof(gpuq_kfd_set_cu_mask_args) ==
              sizeof(kfd_ioctl_set_cu_mask_args));

GPUQ_SAME_FIELD(gpuq_kfd_alloc_queue_gws_args, kfd_ioctl_alloc_queue_gws_args,
                queue_id);
GPUQ_SAME_FIELD(gpuq_kfd_alloc_queue_gws_args, kfd_ioctl_alloc_queue_gws_args,
                num_gws);
GPUQ_SAME_FIELD(gpuq_kfd_alloc_queue_gws_args, kfd_ioctl_alloc_queue_gws_args,
                first_gws);
static_assert(sizeof(gpuq_kfd_alloc_queue_gws_args) ==
              sizeof(kfd_ioctl_alloc_queue_gws_args));

TEST(KfdUapiTest, IoctlNumbersAreTheHeaders) {
  EXPECT_EQ(_IOC_TYPE(AMDKFD_IOC_CREATE_QUEUE),
            static_cast<unsigned>(GPUQ_KFD_IOC_TYPE));
  EXPECT_EQ(_IOC_NR(AMDKFD_IOC_CREATE_QUEUE), GPUQ_KFD_IOC_CREATE_QUEUE);
  EXPECT_EQ(_IOC_NR(AMDKFD_IOC_DESTROY_QUEUE), GPUQ_KFD_IOC_DESTROY_QUEUE);
  EXPECT_EQ(_IOC_NR(AMDKFD_IOC_UPDATE_QUEUE), GPUQ_KFD_IOC_UPDATE_QUEUE);
  EXPECT_EQ(_IOC_NR(AMDKFD_IOC_SET_CU_MASK), GPUQ_KFD_IOC_SET_CU_MASK);
}

TEST(KfdUapiTest, QueueTypesAreTheHeaders) {
  EXPECT_EQ(KFD_IOC_QUEUE_TYPE_COMPUTE, GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE);
  EXPECT_EQ(KFD_IOC_QUEUE_TYPE_SDMA, GPUQ_KFD_IOC_QUEUE_TYPE_SDMA);
  EXPECT_EQ(KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
            GPUQ_KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
  EXPECT_EQ(KFD_IOC_QUEUE_TYPE_SDMA_XGMI, GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_XGMI);
}

}  // namespace
}  // namespace gpuq

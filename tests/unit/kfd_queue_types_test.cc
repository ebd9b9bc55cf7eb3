// The sysfs queue-type numbering (loader/kfd_queue_types.h): read from
// amdgpu's enum kfd_queue_type by name, as the BPF side does with CO-RE, and
// by kernel release where no BTF describes amdkfd. The two BTF shapes are
// those of Debian's builds: 6.18.15 (DIQ 3, SDMA_XGMI 4) and 7.2.13 (no DIQ:
// SDMA_XGMI 3, SDMA_BY_ENG_ID 4).
#include "loader/kfd_queue_types.h"

#include <bpf/btf.h>
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gpuq {
namespace {

// A BTF holding only enum kfd_queue_type with these enumerators.
btf* EnumBtf(const std::vector<std::pair<std::string, int>>& values) {
  btf* b = btf__new_empty();
  btf__add_enum(b, "kfd_queue_type", 4);
  for (const auto& [name, value] : values) {
    btf__add_enum_value(b, name.c_str(), value);
  }
  return b;
}

const std::vector<std::pair<std::string, int>> kLinux618 = {
    {"KFD_QUEUE_TYPE_COMPUTE", 0},   {"KFD_QUEUE_TYPE_SDMA", 1},
    {"KFD_QUEUE_TYPE_HIQ", 2},       {"KFD_QUEUE_TYPE_DIQ", 3},
    {"KFD_QUEUE_TYPE_SDMA_XGMI", 4}, {"KFD_QUEUE_TYPE_SDMA_BY_ENG_ID", 5},
};
const std::vector<std::pair<std::string, int>> kLinux72 = {
    {"KFD_QUEUE_TYPE_COMPUTE", 0},
    {"KFD_QUEUE_TYPE_SDMA", 1},
    {"KFD_QUEUE_TYPE_HIQ", 2},
    {"KFD_QUEUE_TYPE_SDMA_XGMI", 3},
    {"KFD_QUEUE_TYPE_SDMA_BY_ENG_ID", 4},
    {"KFD_QUEUE_TYPE_MAX", 5},
};

TEST(KfdQueueTypesTest, ByNameFromTheKernelsEnum) {
  KfdQueueTypes old_types, new_types;
  btf* b618 = EnumBtf(kLinux618);
  btf* b72 = EnumBtf(kLinux72);
  ASSERT_TRUE(KfdQueueTypesFromBtf(b618, &old_types));
  ASSERT_TRUE(KfdQueueTypesFromBtf(b72, &new_types));
  btf__free(b618);
  btf__free(b72);
  EXPECT_EQ(old_types.ToGpuq(3), GPUQ_QUEUE_DIQ);
  EXPECT_EQ(old_types.ToGpuq(4), GPUQ_QUEUE_SDMA_XGMI);
  EXPECT_EQ(old_types.ToGpuq(5), GPUQ_QUEUE_SDMA_BY_ENG_ID);
  EXPECT_EQ(new_types.ToGpuq(0), GPUQ_QUEUE_COMPUTE);
  EXPECT_EQ(new_types.ToGpuq(3), GPUQ_QUEUE_SDMA_XGMI);
  EXPECT_EQ(new_types.ToGpuq(4), GPUQ_QUEUE_SDMA_BY_ENG_ID);
  // KFD_QUEUE_TYPE_MAX is no queue type; nor is a value the enum lacks.
  EXPECT_EQ(new_types.ToGpuq(5), GPUQ_QUEUE_UNKNOWN);
  EXPECT_EQ(new_types.ToGpuq(42), GPUQ_QUEUE_UNKNOWN);
}

TEST(KfdQueueTypesTest, NoEnumNoMap) {
  btf* b = btf__new_empty();
  btf__add_int(b, "int", 4, BTF_INT_SIGNED);
  KfdQueueTypes t;
  EXPECT_FALSE(KfdQueueTypesFromBtf(b, &t));
  btf__free(b);
}

TEST(KfdQueueTypesTest, ByReleaseWithoutBtf) {
  EXPECT_EQ(KfdQueueTypesOfRelease("6.1.0-56-amd64").ToGpuq(4),
            GPUQ_QUEUE_SDMA_XGMI);
  EXPECT_EQ(KfdQueueTypesOfRelease("6.18.15+deb13-amd64").ToGpuq(3),
            GPUQ_QUEUE_DIQ);
  EXPECT_EQ(KfdQueueTypesOfRelease("7.2.13+deb14-amd64").ToGpuq(3),
            GPUQ_QUEUE_SDMA_XGMI);
  EXPECT_EQ(KfdQueueTypesOfRelease("7.3.4+deb13-amd64").ToGpuq(4),
            GPUQ_QUEUE_SDMA_BY_ENG_ID);
  EXPECT_EQ(KfdQueueTypesOfRelease("8.0.1").ToGpuq(3), GPUQ_QUEUE_SDMA_XGMI);
  EXPECT_NE(KfdQueueTypesOfRelease("7.3.4").source.find("no amdgpu BTF"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuq

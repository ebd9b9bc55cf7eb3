/* ROCr's doorbell-path ABI as libhsa-runtime64 lays it out on x86-64
 * (HSA_LARGE_MODEL): hsa_signal_t, amd_signal_t, hsa_queue_t, amd_queue_t and
 * the AQL packet header, from hsa.h and amd_hsa_{signal,queue}.h. Only what
 * the stand-in runtime, its caller and the doorbell benchmark need; offsets
 * are checked below against kfd-probe-points.md section 3. */
#ifndef GPUQ_TEST_AMD_HSA_LAYOUT_H
#define GPUQ_TEST_AMD_HSA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define GPUQ_LAYOUT_ASSERT static_assert
extern "C" {
#else
#define GPUQ_LAYOUT_ASSERT _Static_assert
#endif

typedef struct hsa_signal_s {
  uint64_t handle;
} hsa_signal_t;
typedef int64_t hsa_signal_value_t;

enum {
  AMD_SIGNAL_KIND_INVALID = 0,
  AMD_SIGNAL_KIND_USER = 1,
  AMD_SIGNAL_KIND_DOORBELL = -1,
  AMD_SIGNAL_KIND_LEGACY_DOORBELL = -2,
};

typedef struct hsa_queue_s {
  uint32_t type;
  uint32_t features;
  void* base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size; /* in packets */
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

typedef struct __attribute__((aligned(64))) amd_queue_s {
  hsa_queue_t hsa_queue;
  uint32_t caps;
  uint32_t reserved1[3];
  volatile uint64_t write_dispatch_id;
  uint32_t group_segment_aperture_base_hi;
  uint32_t private_segment_aperture_base_hi;
  uint32_t max_cu_id;
  uint32_t max_wave_id;
  volatile uint64_t max_legacy_doorbell_dispatch_id_plus_1;
  volatile uint32_t legacy_doorbell_lock;
  uint32_t reserved2[9];
  volatile uint64_t read_dispatch_id;
  uint32_t read_dispatch_id_field_base_byte_offset;
  uint32_t compute_tmpring_size;
  uint32_t scratch_resource_descriptor[4];
  uint64_t scratch_backing_memory_location;
  uint64_t scratch_backing_memory_byte_size;
  uint32_t scratch_workitem_byte_size;
  uint32_t queue_properties;
  uint32_t reserved3[2];
  hsa_signal_t queue_inactive_signal;
  uint32_t reserved4[14];
} amd_queue_t;

typedef struct __attribute__((aligned(64))) amd_signal_s {
  int64_t kind;
  union {
    volatile int64_t value;
    volatile uint64_t* hardware_doorbell_ptr;
  };
  uint64_t event_mailbox_ptr;
  uint32_t event_id;
  uint32_t reserved1;
  uint64_t start_ts;
  uint64_t end_ts;
  union {
    amd_queue_t* queue_ptr;
    uint64_t reserved2;
  };
  uint32_t reserved3[2];
} amd_signal_t;

/* hsa_packet_type_t: bits 0-7 of the 16-bit header of a 64-byte AQL slot */
enum {
  HSA_PACKET_TYPE_VENDOR_SPECIFIC = 0,
  HSA_PACKET_TYPE_INVALID = 1,
  HSA_PACKET_TYPE_KERNEL_DISPATCH = 2,
  HSA_PACKET_TYPE_BARRIER_AND = 3,
  HSA_PACKET_TYPE_AGENT_DISPATCH = 4,
  HSA_PACKET_TYPE_BARRIER_OR = 5,
};
#define HSA_PACKET_HEADER_BARRIER 8
#define AQL_PACKET_BYTES 64

GPUQ_LAYOUT_ASSERT(sizeof(hsa_queue_t) == 40, "hsa_queue_t");
GPUQ_LAYOUT_ASSERT(offsetof(hsa_queue_t, base_address) == 8, "base_address");
GPUQ_LAYOUT_ASSERT(offsetof(hsa_queue_t, doorbell_signal) == 16, "doorbell");
GPUQ_LAYOUT_ASSERT(offsetof(hsa_queue_t, size) == 24, "size");
GPUQ_LAYOUT_ASSERT(sizeof(amd_queue_t) == 256, "amd_queue_t");
GPUQ_LAYOUT_ASSERT(offsetof(amd_queue_t, write_dispatch_id) == 56, "write id");
GPUQ_LAYOUT_ASSERT(offsetof(amd_queue_t,
                            max_legacy_doorbell_dispatch_id_plus_1) == 80,
                   "legacy id");
GPUQ_LAYOUT_ASSERT(offsetof(amd_queue_t, read_dispatch_id) == 128, "read id");
GPUQ_LAYOUT_ASSERT(offsetof(amd_queue_t, queue_inactive_signal) == 192,
                   "inactive");
GPUQ_LAYOUT_ASSERT(sizeof(amd_signal_t) == 64, "amd_signal_t");
GPUQ_LAYOUT_ASSERT(offsetof(amd_signal_t, value) == 8, "value");
GPUQ_LAYOUT_ASSERT(offsetof(amd_signal_t, queue_ptr) == 48, "queue_ptr");

/* hsa.h's status codes; the stand-in's calls return only success. */
typedef enum { HSA_STATUS_SUCCESS = 0 } hsa_status_t;

/* The stand-in libhsa-runtime64.so.1 exports these @ROCR_1. */
void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_store_release(hsa_signal_t signal, hsa_signal_value_t value);
hsa_status_t hsa_queue_destroy(hsa_queue_t* queue);
hsa_status_t hsa_shut_down(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUQ_TEST_AMD_HSA_LAYOUT_H */

// Build-time check of the ROCr layouts gpuq's BPF side reads from user
// memory, against Debian's libhsa-runtime-dev headers (ROCr 5.2.3): if one
// of these static_asserts fails, this file does not compile and the build
// fails. The mirrored structs are copies of the field lists in
// bpf/doorbell.bpf.c (amd_signal_head, amd_queue_ring) and
// bpf/rocr_queue.bpf.h (gpuq_hsa_queue_head, GPUQ_AMD_QUEUE_WRITE_INDEX_OFF);
// rocr_layout_test.sh checks those sources still carry the same literals.
// The null thunk's CP (nullgpu.c) uses the amd_signal_t and
// amd_kernel_code_t offsets checked here too.
#include <hsa/amd_hsa_kernel_code.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace {

// bpf/doorbell.bpf.c: the leading 56 bytes of amd_signal_t.
struct amd_signal_head {
  int64_t kind;
  uint64_t value;
  uint64_t event_mailbox_ptr;
  uint32_t event_id;
  uint32_t reserved1;
  uint64_t start_ts;
  uint64_t end_ts;
  uint64_t queue_ptr;
};

// bpf/doorbell.bpf.c: amd_queue_t (hsa_queue_t) from offset 8 to 40.
struct amd_queue_ring {
  uint64_t base_address;
  uint64_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
  uint64_t id;
};

// bpf/rocr_queue.bpf.h: hsa_queue_t, the leading 32 bytes of amd_queue_t.
struct gpuq_hsa_queue_head {
  uint32_t type;
  uint32_t features;
  uint64_t base_address;
  uint64_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
};

constexpr size_t kWriteIndexOff = 56;  // GPUQ_AMD_QUEUE_WRITE_INDEX_OFF
constexpr size_t kReadIndexOff = 128;  // abi.h: read_ptr = amd_queue_t+128
constexpr size_t kAqlPacketSize = 64;  // GPUQ_AQL_PACKET_SIZE

#define SAME(mirror, field, debian, dfield)                          \
  static_assert(offsetof(mirror, field) == offsetof(debian, dfield), \
                #mirror "." #field " != " #debian "." #dfield)

SAME(amd_signal_head, kind, amd_signal_t, kind);
SAME(amd_signal_head, value, amd_signal_t, value);
SAME(amd_signal_head, event_mailbox_ptr, amd_signal_t, event_mailbox_ptr);
SAME(amd_signal_head, event_id, amd_signal_t, event_id);
SAME(amd_signal_head, start_ts, amd_signal_t, start_ts);
SAME(amd_signal_head, end_ts, amd_signal_t, end_ts);
SAME(amd_signal_head, queue_ptr, amd_signal_t, queue_ptr);
static_assert(sizeof(amd_signal_t) == 64, "amd_signal_t is 64 bytes");
static_assert(AMD_SIGNAL_KIND_DOORBELL == -1 &&
                  AMD_SIGNAL_KIND_LEGACY_DOORBELL == -2 &&
                  AMD_SIGNAL_KIND_USER == 1,
              "doorbell kinds are negative, user signals 1");

SAME(gpuq_hsa_queue_head, type, hsa_queue_t, type);
SAME(gpuq_hsa_queue_head, features, hsa_queue_t, features);
SAME(gpuq_hsa_queue_head, base_address, hsa_queue_t, base_address);
SAME(gpuq_hsa_queue_head, doorbell_signal, hsa_queue_t, doorbell_signal);
SAME(gpuq_hsa_queue_head, size, hsa_queue_t, size);
static_assert(offsetof(amd_queue_t, hsa_queue) == 0, "hsa_queue_t leads");
static_assert(offsetof(hsa_queue_t, base_address) ==
                  8 + offsetof(amd_queue_ring, base_address),
              "amd_queue_ring is read from queue_ptr + 8");
static_assert(offsetof(hsa_queue_t, doorbell_signal) ==
                  8 + offsetof(amd_queue_ring, doorbell_signal),
              "amd_queue_ring.doorbell_signal");
static_assert(offsetof(hsa_queue_t, size) == 8 + offsetof(amd_queue_ring, size),
              "amd_queue_ring.size");
static_assert(offsetof(hsa_queue_t, id) == 8 + offsetof(amd_queue_ring, id),
              "amd_queue_ring.id: a new queue behind the same doorbell");
static_assert(offsetof(amd_queue_t, write_dispatch_id) == kWriteIndexOff,
              "write_ptr - 56 is amd_queue_t");
static_assert(offsetof(amd_queue_t, read_dispatch_id) == kReadIndexOff,
              "read_ptr is amd_queue_t + 128");

static_assert(sizeof(hsa_kernel_dispatch_packet_t) == kAqlPacketSize &&
                  sizeof(hsa_barrier_and_packet_t) == kAqlPacketSize,
              "AQL packets are 64 bytes");
static_assert(offsetof(hsa_kernel_dispatch_packet_t, kernel_object) == 32 &&
                  offsetof(hsa_kernel_dispatch_packet_t, kernarg_address) ==
                      40 &&
                  offsetof(hsa_kernel_dispatch_packet_t, completion_signal) ==
                      56,
              "the null CP's dispatch packet offsets");
static_assert(offsetof(hsa_barrier_and_packet_t, dep_signal) == 8 &&
                  offsetof(hsa_barrier_and_packet_t, completion_signal) == 56,
              "the null CP's barrier packet offsets");
static_assert(HSA_PACKET_TYPE_KERNEL_DISPATCH == 2 &&
                  HSA_PACKET_TYPE_BARRIER_AND == 3 &&
                  HSA_PACKET_TYPE_BARRIER_OR == 5 &&
                  HSA_PACKET_TYPE_INVALID == 1 &&
                  HSA_PACKET_TYPE_VENDOR_SPECIFIC == 0,
              "packet classes of doorbell.bpf.c");
static_assert(offsetof(amd_kernel_code_t, amd_machine_kind) == 8 &&
                  offsetof(amd_kernel_code_t, kernel_code_entry_byte_offset) ==
                      16 &&
                  offsetof(amd_kernel_code_t, compute_pgm_rsrc1) == 48 &&
                  sizeof(amd_kernel_code_t) == 256,
              "the null CP's blit-kernel recognition offsets");

}  // namespace

int main() {
  std::printf(
      "write_index_off=%zu read_index_off=%zu signal_queue_ptr=%zu "
      "signal_size=%zu packet=%zu\n",
      offsetof(amd_queue_t, write_dispatch_id),
      offsetof(amd_queue_t, read_dispatch_id),
      offsetof(amd_signal_t, queue_ptr), sizeof(amd_signal_t),
      sizeof(hsa_kernel_dispatch_packet_t));
  return 0;
}

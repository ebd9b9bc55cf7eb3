// The event ABI (include/gpuq/abi.h) and its decoder (sources/event.h).
// Layouts are checked against sizes worked out by hand from the field lists,
// so a field that moves or a padding hole the compiler adds fails here before
// bpf/ and agent/ silently disagree about a record.
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "sources/event.h"

namespace gpuq {
namespace {

// ---------------------------------------------------------------------------
// Layout. Sizes computed from the field lists in abi.h, not from sizeof:
//   header       2+2+4+8+8+8                        = 32
//   create       32 + 4*4 + 4*8 + 4*4 + 16 (comm)    = 112
//   destroy      32 + 6*4                            = 56
//   process exit 32 + 16 (comm)                      = 48
//   create fail  32 + 4*4 + 16 (comm)                = 64
//   gpu info     32 + 8*4 + 8 + 2*4 + 32 (name)      = 112
//   cgroup path  32 + 2*4                            = 40
//   capture hdr  8 (magic) + 2*4 + 2*8 + 2*4         = 40
// ---------------------------------------------------------------------------

constexpr size_t kHeaderSize = 32;
constexpr size_t kCreateSize = 128;
// Size of create records before doorbell_handle was appended (still valid).
constexpr size_t kCreateSizeV1Original = 112;
constexpr size_t kDestroySize = 56;
constexpr size_t kExitSize = 48;
constexpr size_t kCreateFailedSize = 64;
constexpr size_t kGpuInfoSize = 112;
constexpr size_t kCgroupPathSize = 40;
constexpr size_t kCaptureHeaderSize = 40;
constexpr size_t kRunlistSize = 72;
constexpr size_t kEvictionSize = 64;
constexpr size_t kQueueSampleSize = 64;
constexpr size_t kDoorbellCountSize = 88;

static_assert(sizeof(gpuq_event_header) == kHeaderSize);
static_assert(sizeof(gpuq_queue_create_event) == kCreateSize);
static_assert(sizeof(gpuq_queue_destroy_event) == kDestroySize);
static_assert(sizeof(gpuq_process_exit_event) == kExitSize);
static_assert(sizeof(gpuq_queue_create_failed_event) == kCreateFailedSize);
static_assert(sizeof(gpuq_gpu_info_record) == kGpuInfoSize);
static_assert(sizeof(gpuq_cgroup_path_record) == kCgroupPathSize);
static_assert(sizeof(gpuq_capture_header) == kCaptureHeaderSize);
static_assert(sizeof(gpuq_runlist_event) == kRunlistSize);
static_assert(sizeof(gpuq_eviction_event) == kEvictionSize);
static_assert(sizeof(gpuq_queue_sample_record) == kQueueSampleSize);
static_assert(sizeof(gpuq_doorbell_count_record) == kDoorbellCountSize);
static_assert(kRunlistSize % 8 == 0 && kEvictionSize % 8 == 0);
static_assert(kQueueSampleSize % 8 == 0 && kDoorbellCountSize % 8 == 0);

// Every record keeps the ring buffer and capture 8-byte aligned.
static_assert(kHeaderSize % 8 == 0);
static_assert(kCreateSize % 8 == 0);
static_assert(kDestroySize % 8 == 0);
static_assert(kExitSize % 8 == 0);
static_assert(kCreateFailedSize % 8 == 0);
static_assert(kGpuInfoSize % 8 == 0);
static_assert(kCgroupPathSize % 8 == 0);
static_assert(kCaptureHeaderSize % 8 == 0);

TEST(AbiTest, HeaderLayout) {
  EXPECT_EQ(offsetof(gpuq_event_header, type), 0u);
  EXPECT_EQ(offsetof(gpuq_event_header, size), 2u);
  EXPECT_EQ(offsetof(gpuq_event_header, tgid), 4u);
  EXPECT_EQ(offsetof(gpuq_event_header, ts_ns), 8u);
  EXPECT_EQ(offsetof(gpuq_event_header, cgroup_id), 16u);
  EXPECT_EQ(offsetof(gpuq_event_header, process_key), 24u);
  EXPECT_EQ(sizeof(gpuq_event_header), kHeaderSize);
}

TEST(AbiTest, QueueCreateLayout) {
  EXPECT_EQ(offsetof(gpuq_queue_create_event, hdr), 0u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, queue_id), 36u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, queue_type), 40u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, queue_format), 44u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, ring_address), 48u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, ring_size), 56u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, read_ptr), 64u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, write_ptr), 72u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, priority), 80u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, percentage), 84u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, flags), 88u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, pad), 92u);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, comm), 96u);
  // Appended without a version bump: everything before stays put.
  EXPECT_EQ(offsetof(gpuq_queue_create_event, doorbell_handle),
            kCreateSizeV1Original);
  EXPECT_EQ(offsetof(gpuq_queue_create_event, write_index_at_create), 120u);
  EXPECT_EQ(sizeof(gpuq_queue_create_event), kCreateSize);
}

TEST(AbiTest, RunlistLayout) {
  EXPECT_EQ(offsetof(gpuq_runlist_event, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, op), 36u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, cause), 40u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, filter), 44u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, ret), 48u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, queue_id), 52u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, duration_ns), 56u);
  EXPECT_EQ(offsetof(gpuq_runlist_event, active_queues), 64u);
}

TEST(AbiTest, EvictionLayout) {
  EXPECT_EQ(offsetof(gpuq_eviction_event, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_eviction_event, kind), 36u);
  EXPECT_EQ(offsetof(gpuq_eviction_event, trigger), 40u);
  EXPECT_EQ(offsetof(gpuq_eviction_event, ret), 44u);
  EXPECT_EQ(offsetof(gpuq_eviction_event, duration_ns), 48u);
  EXPECT_EQ(offsetof(gpuq_eviction_event, queues), 56u);
}

TEST(AbiTest, QueueSampleLayout) {
  EXPECT_EQ(offsetof(gpuq_queue_sample_record, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_queue_sample_record, queue_id), 36u);
  EXPECT_EQ(offsetof(gpuq_queue_sample_record, write_index), 40u);
  EXPECT_EQ(offsetof(gpuq_queue_sample_record, read_index), 48u);
  EXPECT_EQ(offsetof(gpuq_queue_sample_record, flags), 56u);
}

TEST(AbiTest, DoorbellCountLayout) {
  EXPECT_EQ(offsetof(gpuq_doorbell_count_record, doorbell_handle), 32u);
  EXPECT_EQ(offsetof(gpuq_doorbell_count_record, gpu_id), 40u);
  EXPECT_EQ(offsetof(gpuq_doorbell_count_record, queue_id), 44u);
  EXPECT_EQ(offsetof(gpuq_doorbell_count_record, doorbells), 48u);
  EXPECT_EQ(offsetof(gpuq_doorbell_count_record, by_packet), 56u);
}

// A create record written before the fields were appended decodes, with
// the appended fields zero ("unknown").
TEST(AbiTest, DecodeOriginalSizeCreateRecord) {
  gpuq_queue_create_event e{};
  e.hdr.type = GPUQ_EV_QUEUE_CREATE;
  e.hdr.size = kCreateSizeV1Original;
  e.queue_id = 7;
  e.doorbell_handle = 0xdead;  // beyond the old size: must not be read
  Event out;
  size_t consumed = 0;
  ASSERT_EQ(Decode(&e, kCreateSizeV1Original, &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, kCreateSizeV1Original);
  const auto& got = std::get<gpuq_queue_create_event>(out);
  EXPECT_EQ(got.queue_id, 7u);
  EXPECT_EQ(got.doorbell_handle, 0u);
  EXPECT_EQ(got.write_index_at_create, 0u);
}

TEST(AbiTest, QueueDestroyLayout) {
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, hdr), 0u);
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, queue_id), 36u);
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, queue_type), 40u);
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, reason), 44u);
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, flags), 48u);
  EXPECT_EQ(offsetof(gpuq_queue_destroy_event, pad), 52u);
  EXPECT_EQ(sizeof(gpuq_queue_destroy_event), kDestroySize);
}

TEST(AbiTest, ProcessExitLayout) {
  EXPECT_EQ(offsetof(gpuq_process_exit_event, hdr), 0u);
  EXPECT_EQ(offsetof(gpuq_process_exit_event, comm), 32u);
  EXPECT_EQ(sizeof(gpuq_process_exit_event), kExitSize);
}

TEST(AbiTest, QueueCreateFailedLayout) {
  EXPECT_EQ(offsetof(gpuq_queue_create_failed_event, hdr), 0u);
  EXPECT_EQ(offsetof(gpuq_queue_create_failed_event, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_queue_create_failed_event, queue_type), 36u);
  EXPECT_EQ(offsetof(gpuq_queue_create_failed_event, error), 40u);
  EXPECT_EQ(offsetof(gpuq_queue_create_failed_event, pad), 44u);
  EXPECT_EQ(offsetof(gpuq_queue_create_failed_event, comm), 48u);
  EXPECT_EQ(sizeof(gpuq_queue_create_failed_event), kCreateFailedSize);
}

TEST(AbiTest, GpuInfoLayout) {
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, hdr), 0u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, gpu_id), 32u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, node), 36u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, vendor_id), 40u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, device_id), 44u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, location_id), 48u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, domain), 52u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, drm_render_minor), 56u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, gfx_target_version), 60u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, unique_id), 64u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, simd_count), 72u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, num_xcc), 76u);
  EXPECT_EQ(offsetof(gpuq_gpu_info_record, name), 80u);
  EXPECT_EQ(sizeof(gpuq_gpu_info_record), kGpuInfoSize);
}

TEST(AbiTest, CgroupPathLayout) {
  EXPECT_EQ(offsetof(gpuq_cgroup_path_record, hdr), 0u);
  EXPECT_EQ(offsetof(gpuq_cgroup_path_record, path_len), 32u);
  EXPECT_EQ(offsetof(gpuq_cgroup_path_record, pad), 36u);
  EXPECT_EQ(sizeof(gpuq_cgroup_path_record), kCgroupPathSize);
}

TEST(AbiTest, CaptureHeaderLayout) {
  EXPECT_EQ(offsetof(gpuq_capture_header, magic), 0u);
  EXPECT_EQ(offsetof(gpuq_capture_header, abi_version), 8u);
  EXPECT_EQ(offsetof(gpuq_capture_header, header_size), 12u);
  EXPECT_EQ(offsetof(gpuq_capture_header, start_realtime_ns), 16u);
  EXPECT_EQ(offsetof(gpuq_capture_header, start_monotonic_ns), 24u);
  EXPECT_EQ(offsetof(gpuq_capture_header, flags), 32u);
  EXPECT_EQ(offsetof(gpuq_capture_header, reserved), 36u);
  EXPECT_EQ(sizeof(gpuq_capture_header), kCaptureHeaderSize);
  // The magic fills its field exactly, without a NUL.
  EXPECT_EQ(std::strlen(GPUQ_CAPTURE_MAGIC),
            sizeof(gpuq_capture_header{}.magic));
}

// Enum values are part of the ABI: the kernel side writes the numbers.
TEST(AbiTest, EnumValuesAndSentinels) {
  EXPECT_EQ(GPUQ_EV_INVALID, 0);
  EXPECT_EQ(GPUQ_EV_QUEUE_CREATE, 1);
  EXPECT_EQ(GPUQ_EV_QUEUE_DESTROY, 2);
  EXPECT_EQ(GPUQ_EV_PROCESS_EXIT, 3);
  EXPECT_EQ(GPUQ_EV_QUEUE_CREATE_FAILED, 4);
  EXPECT_EQ(GPUQ_EV_GPU_INFO, 5);
  EXPECT_EQ(GPUQ_EV_CGROUP_PATH, 6);
  EXPECT_EQ(GPUQ_EV_CONTAINER_META, 7);
  EXPECT_EQ(GPUQ_EV_RUNLIST, 8);
  EXPECT_EQ(GPUQ_EV_EVICTION, 9);
  EXPECT_EQ(GPUQ_EV_QUEUE_SAMPLE, 10);
  EXPECT_EQ(GPUQ_EV_DOORBELL_COUNT, 11);
  EXPECT_EQ(GPUQ_EV__MAX, 12);
  EXPECT_EQ(GPUQ_RUNLIST_OP__MAX, 4);
  EXPECT_EQ(GPUQ_CAUSE__MAX, 7);
  EXPECT_EQ(GPUQ_EVICTION_KIND__MAX, 2);
  EXPECT_EQ(GPUQ_TRIGGER_CRIU_RESTORE, 5);
  EXPECT_EQ(GPUQ_TRIGGER_UNKNOWN, 255);
  EXPECT_EQ(GPUQ_PACKET__MAX, 4);
  EXPECT_EQ(GPUQ_QUEUE__MAX, 6);
  EXPECT_EQ(GPUQ_DESTROY__MAX, 3);
  EXPECT_EQ(GPUQ_DROP__MAX, 2);
  EXPECT_EQ(GPUQ_ABI_VERSION, 1);
  EXPECT_EQ(GPUQ_CGROUP_PATH_MAX, 4096);
  // A cgroup path record of the longest path must fit the u16 size field.
  EXPECT_LE(kCgroupPathSize + GPUQ_CGROUP_PATH_MAX, 0xffffu);
}

// ---------------------------------------------------------------------------
// Encode / Decode.
// ---------------------------------------------------------------------------

gpuq_event_header Hdr(uint16_t type) {
  gpuq_event_header h{};
  h.type = type;
  h.tgid = 4242;
  h.ts_ns = 123456789012345ull;
  h.cgroup_id = 0x1234567890ull;
  h.process_key = 0xffff88811d208000ull;
  return h;
}

gpuq_queue_create_event MakeCreate() {
  gpuq_queue_create_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CREATE);
  e.gpu_id = 11437;
  e.queue_id = 3;
  e.queue_type = GPUQ_QUEUE_SDMA;
  e.queue_format = GPUQ_QUEUE_FORMAT_PM4;
  e.ring_address = 0x7e0000400000ull;
  e.ring_size = 1 << 20;
  e.read_ptr = 0x7e0000800000ull;
  e.write_ptr = 0x7e0000800008ull;
  e.priority = 7;
  e.percentage = 100;
  e.flags = GPUQ_CREATE_F_VIA_IOCTL;
  std::strncpy(e.comm, "pt_main_thread", sizeof(e.comm) - 1);
  return e;
}

gpuq_queue_destroy_event MakeDestroy() {
  gpuq_queue_destroy_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_DESTROY);
  e.gpu_id = 23710;
  e.queue_id = 9;
  e.queue_type = GPUQ_QUEUE_COMPUTE;
  e.reason = GPUQ_DESTROY_PROCESS_EXIT;
  e.flags = GPUQ_DESTROY_F_UNTRACKED;
  return e;
}

gpuq_process_exit_event MakeExit() {
  gpuq_process_exit_event e{};
  e.hdr = Hdr(GPUQ_EV_PROCESS_EXIT);
  // A full 16-byte comm without NUL: the ABI does not promise one.
  std::memcpy(e.comm, "0123456789abcdef", sizeof(e.comm));
  return e;
}

gpuq_queue_create_failed_event MakeCreateFailed() {
  gpuq_queue_create_failed_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CREATE_FAILED);
  e.gpu_id = 64512;
  e.queue_type = GPUQ_QUEUE_COMPUTE;
  e.error = -12;
  std::strncpy(e.comm, "hipcc_bench", sizeof(e.comm) - 1);
  return e;
}

gpuq_gpu_info_record MakeGpuInfo() {
  gpuq_gpu_info_record e{};
  e.hdr = Hdr(GPUQ_EV_GPU_INFO);
  e.gpu_id = 30584;
  e.node = 3;
  e.vendor_id = 0x1002;
  e.device_id = 0x74a1;
  e.location_id = 0x6500;
  e.domain = 0;
  e.drm_render_minor = 130;
  e.gfx_target_version = 90402;
  e.unique_id = 0x5386c9cd62e98913ull;
  e.simd_count = 1216;
  e.num_xcc = 8;
  std::strncpy(e.name, "gfx942", sizeof(e.name) - 1);
  return e;
}

CgroupPathRecord MakeCgroupPath(std::string path) {
  CgroupPathRecord r;
  r.hdr = Hdr(GPUQ_EV_CGROUP_PATH);
  r.path = std::move(path);
  return r;
}

// Decodes `bytes` and expects kOk with the whole buffer consumed.
Event DecodeOk(const std::string& bytes) {
  Event out;
  size_t consumed = 0;
  EXPECT_EQ(Decode(bytes.data(), bytes.size(), &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, bytes.size());
  return out;
}

// Encode -> Decode must give back the same struct, byte for byte (all ABI
// structs have explicit padding, so memcmp compares only fields), with
// hdr.size filled in by Encode.
template <typename T>
void ExpectRoundTrip(T original, size_t expected_size) {
  const std::string bytes = Encode(original);
  ASSERT_EQ(bytes.size(), expected_size);
  gpuq_event_header hdr;
  std::memcpy(&hdr, bytes.data(), sizeof(hdr));
  EXPECT_EQ(hdr.size, expected_size) << "Encode must set hdr.size";

  const Event decoded = DecodeOk(bytes);
  const T* got = std::get_if<T>(&decoded);
  ASSERT_NE(got, nullptr) << "decoded into the wrong alternative";
  original.hdr.size = static_cast<uint16_t>(expected_size);
  EXPECT_EQ(std::memcmp(got, &original, sizeof(T)), 0);
  EXPECT_EQ(Header(decoded).type, original.hdr.type);
  EXPECT_EQ(Header(decoded).tgid, 4242u);
  EXPECT_EQ(Header(decoded).cgroup_id, 0x1234567890ull);
  EXPECT_EQ(Header(decoded).process_key, 0xffff88811d208000ull);
  EXPECT_EQ(Header(decoded).ts_ns, 123456789012345ull);
}

TEST(AbiTest, RoundTripQueueCreate) {
  ExpectRoundTrip(MakeCreate(), kCreateSize);
  const Event e = DecodeOk(Encode(MakeCreate()));
  const auto& c = std::get<gpuq_queue_create_event>(e);
  EXPECT_EQ(c.gpu_id, 11437u);
  EXPECT_EQ(c.queue_id, 3u);
  EXPECT_EQ(c.ring_size, 1u << 20);
  EXPECT_EQ(c.write_ptr, 0x7e0000800008ull);
  EXPECT_EQ(c.flags, GPUQ_CREATE_F_VIA_IOCTL);
  EXPECT_STREQ(c.comm, "pt_main_thread");
}

TEST(AbiTest, RoundTripQueueDestroy) {
  ExpectRoundTrip(MakeDestroy(), kDestroySize);
  const Event e = DecodeOk(Encode(MakeDestroy()));
  const auto& d = std::get<gpuq_queue_destroy_event>(e);
  EXPECT_EQ(d.reason, static_cast<uint32_t>(GPUQ_DESTROY_PROCESS_EXIT));
  EXPECT_EQ(d.flags, GPUQ_DESTROY_F_UNTRACKED);
}

TEST(AbiTest, RoundTripProcessExit) { ExpectRoundTrip(MakeExit(), kExitSize); }

TEST(AbiTest, RoundTripQueueCreateFailed) {
  ExpectRoundTrip(MakeCreateFailed(), kCreateFailedSize);
  const Event e = DecodeOk(Encode(MakeCreateFailed()));
  // The errno is signed: a sign bug would turn -12 into 4294967284.
  EXPECT_EQ(std::get<gpuq_queue_create_failed_event>(e).error, -12);
}

TEST(AbiTest, RoundTripGpuInfo) {
  ExpectRoundTrip(MakeGpuInfo(), kGpuInfoSize);
}

TEST(AbiTest, RoundTripCgroupPathShort) {
  const std::string path = "/user.slice";  // 11 bytes: 40 + 11 -> 56
  const std::string bytes = Encode(MakeCgroupPath(path));
  ASSERT_EQ(bytes.size(), 56u);
  gpuq_cgroup_path_record rec;
  std::memcpy(&rec, bytes.data(), sizeof(rec));
  EXPECT_EQ(rec.hdr.type, GPUQ_EV_CGROUP_PATH);
  EXPECT_EQ(rec.hdr.size, 56u);
  EXPECT_EQ(rec.path_len, path.size());
  // The alignment tail is zeros, never stale memory.
  for (size_t i = kCgroupPathSize + path.size(); i < bytes.size(); ++i) {
    EXPECT_EQ(bytes[i], '\0') << "byte " << i;
  }
  const Event e = DecodeOk(bytes);
  const auto* got = std::get_if<CgroupPathRecord>(&e);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->path, path);
  EXPECT_EQ(got->hdr.cgroup_id, 0x1234567890ull);
  EXPECT_EQ(got->hdr.tgid, 4242u);
}

TEST(AbiTest, RoundTripCgroupPathOfMaximumLength) {
  // The longest path a record may carry; 40 + 4096 is already a multiple of 8.
  std::string path = "/kubepods.slice/";
  while (path.size() < GPUQ_CGROUP_PATH_MAX) {
    path += static_cast<char>('a' + path.size() % 26);
  }
  ASSERT_EQ(path.size(), static_cast<size_t>(GPUQ_CGROUP_PATH_MAX));
  const std::string bytes = Encode(MakeCgroupPath(path));
  EXPECT_EQ(bytes.size(), kCgroupPathSize + GPUQ_CGROUP_PATH_MAX);
  const Event e = DecodeOk(bytes);
  ASSERT_TRUE(std::holds_alternative<CgroupPathRecord>(e));
  EXPECT_EQ(std::get<CgroupPathRecord>(e).path, path);
}

TEST(AbiTest, RoundTripCgroupPathLongUnaligned) {
  // 1001 bytes: the record is padded to 40 + 1001 -> 1048.
  const std::string path = "/" + std::string(1000, 'x');
  const std::string bytes = Encode(MakeCgroupPath(path));
  EXPECT_EQ(bytes.size(), 1048u);
  const Event e = DecodeOk(bytes);
  EXPECT_EQ(std::get<CgroupPathRecord>(e).path, path);
}

TEST(AbiTest, RoundTripCgroupPathEmpty) {
  const std::string bytes = Encode(MakeCgroupPath(""));
  EXPECT_EQ(bytes.size(), kCgroupPathSize);
  EXPECT_EQ(std::get<CgroupPathRecord>(DecodeOk(bytes)).path, "");
}

// Header() gives the common header of every alternative.
TEST(AbiTest, HeaderOfEveryAlternative) {
  const std::vector<Event> events = {MakeCreate(),  MakeDestroy(),
                                     MakeExit(),    MakeCreateFailed(),
                                     MakeGpuInfo(), MakeCgroupPath("/")};
  const uint16_t types[] = {GPUQ_EV_QUEUE_CREATE, GPUQ_EV_QUEUE_DESTROY,
                            GPUQ_EV_PROCESS_EXIT, GPUQ_EV_QUEUE_CREATE_FAILED,
                            GPUQ_EV_GPU_INFO,     GPUQ_EV_CGROUP_PATH};
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(Header(events[i]).type, types[i]) << i;
    EXPECT_EQ(Header(events[i]).tgid, 4242u) << i;
  }
}

// Two records back to back: Decode takes exactly the first.
TEST(AbiTest, DecodeConsumesOneRecord) {
  const std::string bytes = Encode(MakeDestroy()) + Encode(MakeCreate());
  Event out;
  size_t consumed = 0;
  ASSERT_EQ(Decode(bytes.data(), bytes.size(), &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, kDestroySize);
  EXPECT_TRUE(std::holds_alternative<gpuq_queue_destroy_event>(out));
  ASSERT_EQ(
      Decode(bytes.data() + consumed, bytes.size() - consumed, &out, &consumed),
      DecodeStatus::kOk);
  EXPECT_EQ(consumed, kCreateSize);
  EXPECT_TRUE(std::holds_alternative<gpuq_queue_create_event>(out));
}

DecodeStatus DecodeBytes(const std::string& bytes, size_t len) {
  // Copy into an exactly sized heap buffer: reading past `len` would then be
  // visible to sanitizers.
  std::vector<char> buf(bytes.begin(), bytes.begin() + len);
  Event out;
  size_t consumed = 0;
  return Decode(buf.data(), buf.size(), &out, &consumed);
}

void SetSize(std::string* bytes, uint16_t size) {
  std::memcpy(bytes->data() + offsetof(gpuq_event_header, size), &size,
              sizeof(size));
}

void SetType(std::string* bytes, uint16_t type) {
  std::memcpy(bytes->data() + offsetof(gpuq_event_header, type), &type,
              sizeof(type));
}

TEST(AbiTest, DecodeShortBufferIsTruncated) {
  const std::string bytes = Encode(MakeCreate());
  // Not even a header.
  EXPECT_EQ(DecodeBytes(bytes, 0), DecodeStatus::kTruncated);
  EXPECT_EQ(DecodeBytes(bytes, 1), DecodeStatus::kTruncated);
  EXPECT_EQ(DecodeBytes(bytes, kHeaderSize - 1), DecodeStatus::kTruncated);
  // A header, but the record it announces is not all there.
  EXPECT_EQ(DecodeBytes(bytes, kHeaderSize), DecodeStatus::kTruncated);
  EXPECT_EQ(DecodeBytes(bytes, kCreateSize - 8), DecodeStatus::kTruncated);
  EXPECT_EQ(DecodeBytes(bytes, kCreateSize - 1), DecodeStatus::kTruncated);
  EXPECT_EQ(DecodeBytes(bytes, kCreateSize), DecodeStatus::kOk);
}

TEST(AbiTest, DecodeHeaderAnnouncingMoreThanAvailableIsTruncated) {
  // A well-formed larger record (forward compatible) whose tail is missing.
  std::string bytes = Encode(MakeDestroy());
  SetSize(&bytes, kDestroySize + 64);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kTruncated);

  std::string path = Encode(MakeCgroupPath(std::string(100, 'p')));
  EXPECT_EQ(DecodeBytes(path, path.size() - 8), DecodeStatus::kTruncated);
}

TEST(AbiTest, DecodeSizeSmallerThanStructIsBadSize) {
  std::string bytes = Encode(MakeCreate());
  SetSize(&bytes, kCreateSizeV1Original - 8);  // multiple of 8, too small
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
  SetSize(&bytes, 0);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
  SetSize(&bytes, kHeaderSize);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);

  std::string exit = Encode(MakeExit());
  SetSize(&exit, 3);
  EXPECT_EQ(DecodeBytes(exit, exit.size()), DecodeStatus::kBadSize);
}

TEST(AbiTest, DecodeSizeNotMultipleOfEightIsBadSize) {
  std::string bytes = Encode(MakeCreate()) + std::string(16, '\0');
  SetSize(&bytes, kCreateSize + 4);  // big enough, but misaligned
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
  SetSize(&bytes, kCreateSize + 1);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
}

TEST(AbiTest, DecodeCgroupPathLongerThanRecordIsBadSize) {
  std::string bytes = Encode(MakeCgroupPath("/user.slice"));  // 56 bytes
  const uint32_t path_len = 17;                               // 40 + 17 > 56
  std::memcpy(bytes.data() + offsetof(gpuq_cgroup_path_record, path_len),
              &path_len, sizeof(path_len));
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
  // A huge length must not wrap the bounds check.
  const uint32_t huge = 0xfffffff8u;
  std::memcpy(bytes.data() + offsetof(gpuq_cgroup_path_record, path_len), &huge,
              sizeof(huge));
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
}

TEST(AbiTest, DecodeCgroupPathOverMaximumIsBadSize) {
  // The record is big enough to hold the bytes, but the path is longer than
  // any path a writer may emit.
  std::string bytes =
      Encode(MakeCgroupPath(std::string(GPUQ_CGROUP_PATH_MAX, 'q')));
  bytes += std::string(8, 'q');
  SetSize(&bytes, static_cast<uint16_t>(bytes.size()));
  const uint32_t path_len = GPUQ_CGROUP_PATH_MAX + 1;
  std::memcpy(bytes.data() + offsetof(gpuq_cgroup_path_record, path_len),
              &path_len, sizeof(path_len));
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kBadSize);
}

TEST(AbiTest, DecodeUnknownTypes) {
  std::string bytes = Encode(MakeCreate());
  // A zeroed record is never valid.
  SetType(&bytes, GPUQ_EV_INVALID);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kUnknownType);
  SetType(&bytes, GPUQ_EV__MAX);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kUnknownType);
  SetType(&bytes, 0xffff);
  EXPECT_EQ(DecodeBytes(bytes, bytes.size()), DecodeStatus::kUnknownType);
  const std::string zeros(kCreateSize, '\0');
  EXPECT_EQ(DecodeBytes(zeros, zeros.size()), DecodeStatus::kUnknownType);
}

// abi.h: "skip trailing bytes of larger ones, so a minor ABI change may
// append fields". An old agent must read a newer kernel side's records.
TEST(AbiTest, LargerRecordDecodesForForwardCompatibility) {
  const gpuq_queue_create_event original = MakeCreate();
  std::string bytes = Encode(original) + std::string(24, '\x5a');
  SetSize(&bytes, kCreateSize + 24);
  Event out;
  size_t consumed = 0;
  ASSERT_EQ(Decode(bytes.data(), bytes.size(), &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, kCreateSize + 24) << "consumed is the header's size";
  const auto& got = std::get<gpuq_queue_create_event>(out);
  EXPECT_EQ(got.queue_id, original.queue_id);
  EXPECT_EQ(got.ring_address, original.ring_address);
  EXPECT_STREQ(got.comm, "pt_main_thread");

  // Followed by another record: the next decode starts after the extension.
  bytes += Encode(MakeExit());
  ASSERT_EQ(
      Decode(bytes.data() + consumed, bytes.size() - consumed, &out, &consumed),
      DecodeStatus::kOk);
  EXPECT_TRUE(std::holds_alternative<gpuq_process_exit_event>(out));
}

TEST(AbiTest, LargerCgroupPathRecordDecodes) {
  std::string bytes = Encode(MakeCgroupPath("/a/b"));  // 40 + 4 -> 48
  bytes += std::string(16, '\x33');
  SetSize(&bytes, static_cast<uint16_t>(bytes.size()));
  Event out;
  size_t consumed = 0;
  ASSERT_EQ(Decode(bytes.data(), bytes.size(), &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, 64u);
  EXPECT_EQ(std::get<CgroupPathRecord>(out).path, "/a/b");
}

TEST(AbiTest, EventTypeNames) {
  EXPECT_STREQ(EventTypeName(GPUQ_EV_QUEUE_CREATE), "queue_create");
  EXPECT_STREQ(EventTypeName(GPUQ_EV_QUEUE_DESTROY), "queue_destroy");
  EXPECT_STREQ(EventTypeName(GPUQ_EV_PROCESS_EXIT), "process_exit");
  EXPECT_STREQ(EventTypeName(GPUQ_EV_QUEUE_CREATE_FAILED),
               "queue_create_failed");
  EXPECT_STREQ(EventTypeName(GPUQ_EV_GPU_INFO), "gpu_info");
  EXPECT_STREQ(EventTypeName(GPUQ_EV_CGROUP_PATH), "cgroup_path");
  EXPECT_STREQ(EventTypeName(GPUQ_EV_INVALID), "invalid");
  EXPECT_STREQ(EventTypeName(GPUQ_EV__MAX), "invalid");
  EXPECT_STREQ(EventTypeName(0xffff), "invalid");
}

TEST(AbiTest, DecodeStatusNamesAreDistinct) {
  const std::string ok = DecodeStatusName(DecodeStatus::kOk);
  const std::string truncated = DecodeStatusName(DecodeStatus::kTruncated);
  const std::string bad_size = DecodeStatusName(DecodeStatus::kBadSize);
  const std::string unknown = DecodeStatusName(DecodeStatus::kUnknownType);
  EXPECT_NE(ok, truncated);
  EXPECT_NE(truncated, bad_size);
  EXPECT_NE(bad_size, unknown);
  EXPECT_NE(unknown, ok);
}

}  // namespace
}  // namespace gpuq

namespace gpuq {
namespace {

// Encode() writes the type of the alternative, whatever the header says.
TEST(AbiTest, EncodeWritesTheTypeOfTheAlternative) {
  gpuq_queue_destroy_event destroy{};
  destroy.hdr.type = GPUQ_EV_QUEUE_CREATE;  // inconsistent on purpose
  destroy.queue_id = 7;
  const std::string bytes = Encode(destroy);
  Event decoded;
  size_t consumed = 0;
  ASSERT_EQ(Decode(bytes.data(), bytes.size(), &decoded, &consumed),
            DecodeStatus::kOk);
  const auto* back = std::get_if<gpuq_queue_destroy_event>(&decoded);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->hdr.type, GPUQ_EV_QUEUE_DESTROY);
  EXPECT_EQ(back->queue_id, 7u);
}

}  // namespace
}  // namespace gpuq

// The event ABI's decoder and encoder (sources/event.h) and the ABI's enum
// values. The layouts themselves are checked at compile time in
// include/gpuq/abi.h (GPUQ_ABI_OFFSET/GPUQ_ABI_SIZE), for bpf/ and agent/
// alike.
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "sources/event.h"

namespace gpuq::abi_test {
namespace {

// Record sizes Encode writes and Decode accepts, as abi.h pins them.
constexpr size_t kHeaderSize = 32;
constexpr size_t kCreateSize = 128;
// Size of create records before doorbell_handle was appended (still valid).
constexpr size_t kCreateSizeV1Original = 112;
constexpr size_t kDestroySize = 64;
// Size of destroy records before write_index was appended (still valid).
constexpr size_t kDestroySizeV1Original = 56;
constexpr size_t kExitSize = 48;
constexpr size_t kCreateFailedSize = 64;
constexpr size_t kGpuInfoSize = 120;
// Size of gpu_info records before simd_per_cu was appended (still valid).
constexpr size_t kGpuInfoSizeV1Original = 112;
constexpr size_t kCuMaskSize = 176;
constexpr size_t kCgroupPathSize = 40;

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

// A destroy record from before write_index: no final write index.
TEST(AbiTest, DecodeOriginalSizeDestroyRecord) {
  gpuq_queue_destroy_event e{};
  e.hdr.type = GPUQ_EV_QUEUE_DESTROY;
  e.hdr.size = kDestroySizeV1Original;
  e.queue_id = 9;
  e.write_index = 77;  // beyond the old size: must not be read
  Event out;
  size_t consumed = 0;
  ASSERT_EQ(Decode(&e, kDestroySizeV1Original, &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, kDestroySizeV1Original);
  const auto& got = std::get<gpuq_queue_destroy_event>(out);
  EXPECT_EQ(got.queue_id, 9u);
  EXPECT_EQ(got.write_index, 0u);
  EXPECT_EQ(got.flags & GPUQ_DESTROY_F_WRITE_INDEX, 0u);
}

// A gpu_info record from before simd_per_cu: its CUs are unknown (0).
TEST(AbiTest, DecodeOriginalSizeGpuInfoRecord) {
  gpuq_gpu_info_record e{};
  e.hdr.type = GPUQ_EV_GPU_INFO;
  e.hdr.size = kGpuInfoSizeV1Original;
  e.gpu_id = 30584;
  e.simd_per_cu = 4;  // beyond the old size: must not be read
  Event out;
  size_t consumed = 0;
  ASSERT_EQ(Decode(&e, kGpuInfoSizeV1Original, &out, &consumed),
            DecodeStatus::kOk);
  EXPECT_EQ(consumed, kGpuInfoSizeV1Original);
  const auto& got = std::get<gpuq_gpu_info_record>(out);
  EXPECT_EQ(got.gpu_id, 30584u);
  EXPECT_EQ(got.simd_per_cu, 0u);
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
  EXPECT_EQ(GPUQ_EV_QUEUE_UPDATE, 12);
  EXPECT_EQ(GPUQ_EV_QUEUE_CU_MASK, 13);
  EXPECT_EQ(GPUQ_EV_SOURCE_DROPS, 14);
  EXPECT_EQ(GPUQ_EV_PROCESS_KNOBS, 15);
  EXPECT_EQ(GPUQ_EV__MAX, 16);
  EXPECT_EQ(GPUQ_KNOB_GPU_MAX_HW_QUEUES, 0);
  EXPECT_EQ(GPUQ_KNOB_CUDA_VISIBLE_DEVICES, 11);
  EXPECT_EQ(GPUQ_KNOB__MAX, 12);
  EXPECT_EQ(GPUQ_RUNLIST_OP__MAX, 4);
  EXPECT_EQ(GPUQ_CAUSE__MAX, 7);
  EXPECT_EQ(GPUQ_EVICTION_KIND__MAX, 2);
  EXPECT_EQ(GPUQ_TRIGGER_CRIU_RESTORE, 5);
  EXPECT_EQ(GPUQ_TRIGGER_UNKNOWN, 255);
  EXPECT_EQ(GPUQ_PACKET_EXT_DISPATCH, 4);
  EXPECT_EQ(GPUQ_PACKET__MAX, 5);
  EXPECT_EQ(GPUQ_QUEUE__MAX, 6);
  EXPECT_EQ(GPUQ_DESTROY__MAX, 3);
  EXPECT_EQ(GPUQ_DROP__MAX, 4);
  EXPECT_EQ(GPUQ_ABI_VERSION, 1);
  EXPECT_EQ(GPUQ_CGROUP_PATH_MAX, 4096);
  // That the longest cgroup path record fits the u16 size field is a
  // GPUQ_ABI_ASSERT in abi.h: it does not compile otherwise.
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
  e.simd_per_cu = 4;
  return e;
}

gpuq_queue_cu_mask_event MakeCuMask() {
  gpuq_queue_cu_mask_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CU_MASK);
  e.gpu_id = 30584;
  e.queue_id = 3;
  e.num_cu_mask = 64;
  e.words_read = 2;
  e.mask[0] = 0xffffffffu;
  e.mask[1] = 0x0000ffffu;
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

TEST(AbiTest, RoundTripQueueCuMask) {
  ExpectRoundTrip(MakeCuMask(), kCuMaskSize);
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
}  // namespace gpuq::abi_test

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

// Capture files (sources/capture.h): CaptureWriter -> ReadCapture round trip,
// every error kind ReadCapture reports, and the bundled example capture whose
// contents examples/README.md spells out.
#include "sources/capture.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "event_builders.h"
#include "sources/event.h"
#include "test_support.h"

#ifndef GPUQ_SOURCE_DIR
#error "GPUQ_SOURCE_DIR must name the repository root"
#endif

namespace gpuq::capture_test {
namespace {

namespace fs = std::filesystem;

// examples/README.md: both start clocks are fixed at this value.
constexpr uint64_t kScenarioStartNs = 1700000000000000000ull;
constexpr size_t kCaptureHeaderSize = 40;  // by hand, see abi_test.cc

// True if `text` contains `n` as a whole decimal number (not part of a
// longer one), after removing `strip` (the file name, whose random part may
// contain digits).
bool MentionsNumber(std::string text, const std::string& strip, uint64_t n) {
  for (size_t at;
       !strip.empty() && (at = text.find(strip)) != std::string::npos;) {
    text.erase(at, strip.size());
  }
  const std::string digits = std::to_string(n);
  for (size_t at = text.find(digits); at != std::string::npos;
       at = text.find(digits, at + 1)) {
    const bool digit_before =
        at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
    const size_t end = at + digits.size();
    const bool digit_after =
        end < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[end]));
    if (!digit_before && !digit_after) return true;
  }
  return false;
}

// Every sample record comes from one process of cgroup 5861.
gpuq_event_header Hdr(uint16_t type, uint64_t ts) {
  return gpuq::Hdr(type, 0xffff88811d208000ull, 31200, 5861, ts);
}

gpuq_queue_create_event Create(uint32_t qid, uint64_t ts) {
  gpuq_queue_create_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CREATE, ts);
  e.gpu_id = 11437;
  e.queue_id = qid;
  e.queue_type = GPUQ_QUEUE_COMPUTE;
  e.queue_format = GPUQ_QUEUE_FORMAT_AQL;
  e.ring_size = 256 * 1024;
  std::strncpy(e.comm, "pt_main_thread", sizeof(e.comm) - 1);
  return e;
}

gpuq_queue_destroy_event Destroy(uint32_t qid, uint64_t ts) {
  gpuq_queue_destroy_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_DESTROY, ts);
  e.gpu_id = 11437;
  e.queue_id = qid;
  e.reason = GPUQ_DESTROY_IOCTL;
  return e;
}

CgroupPathRecord Path(const std::string& path) {
  return CgroupPathRecord{Hdr(GPUQ_EV_CGROUP_PATH, 1), path};
}

// One of every record type, including a variable-length one.
std::vector<Event> SampleEvents() {
  gpuq_gpu_info_record gpu{};
  gpu.hdr = Hdr(GPUQ_EV_GPU_INFO, 0);
  gpu.gpu_id = 11437;
  gpu.node = 1;
  gpu.gfx_target_version = 90402;
  std::strncpy(gpu.name, "gfx942", sizeof(gpu.name) - 1);

  gpuq_process_exit_event exit{};
  exit.hdr = Hdr(GPUQ_EV_PROCESS_EXIT, 40);

  gpuq_queue_create_failed_event failed{};
  failed.hdr = Hdr(GPUQ_EV_QUEUE_CREATE_FAILED, 20);
  failed.gpu_id = 11437;
  failed.error = -12;

  return {gpu,
          Path("/system.slice/docker-0124dd351391c6c45121cf43714d956032a91aee4f"
               "a3fa9ed0cf6b58d62b9307.scope"),
          Create(0, 10),
          failed,
          Destroy(0, 30),
          exit};
}

// Writes `events` to `path` with a fixed start; asserts success.
void WriteCapture(const std::string& path, const std::vector<Event>& events,
                  uint64_t fixed_start_ns = kScenarioStartNs) {
  std::string error;
  auto writer = CaptureWriter::Create(path, &error, fixed_start_ns);
  ASSERT_NE(writer, nullptr) << error;
  for (const Event& e : events) ASSERT_TRUE(writer->Write(e));
  EXPECT_EQ(writer->Records(), events.size());
  ASSERT_TRUE(writer->Close(&error)) << error;
}

size_t EncodedSize(const std::vector<Event>& events) {
  size_t n = 0;
  for (const Event& e : events) n += Encode(e).size();
  return n;
}

TEST(CaptureTest, RoundTripKeepsHeaderAndRecords) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.File("rt.gpuqcap");
  const std::vector<Event> events = SampleEvents();
  WriteCapture(path, events);

  // Header, then the records back to back, nothing else.
  EXPECT_EQ(fs::file_size(path), kCaptureHeaderSize + EncodedSize(events));

  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_EQ(std::memcmp(capture.header.magic, "GPUQCAP1", 8), 0);
  EXPECT_EQ(capture.header.abi_version, 1u);
  EXPECT_EQ(capture.header.header_size, kCaptureHeaderSize);
  EXPECT_EQ(capture.header.start_realtime_ns, kScenarioStartNs);
  EXPECT_EQ(capture.header.start_monotonic_ns, kScenarioStartNs);

  ASSERT_EQ(capture.events.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(capture.events[i].index(), events[i].index()) << "record " << i;
    EXPECT_EQ(Encode(capture.events[i]), Encode(events[i])) << "record " << i;
  }
  EXPECT_EQ(std::get<CgroupPathRecord>(capture.events[1]).path,
            std::get<CgroupPathRecord>(events[1]).path);
}

// A full disk says so when the capture is closed, whatever calls ran
// between the failed write and the close (the errno of the first failure).
TEST(CaptureTest, AFullDiskIsNamedAtClose) {
  std::string error;
  auto writer = CaptureWriter::Create("/dev/full", &error, kScenarioStartNs);
  if (writer == nullptr) GTEST_SKIP() << "/dev/full: " << error;
  for (const Event& e : SampleEvents()) writer->Write(e);
  errno = 0;
  EXPECT_FALSE(writer->Close(&error));
  EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
}

// A record the reader refuses is never written: a cgroup path longer than
// GPUQ_CGROUP_PATH_MAX (cgroupfs nests deeper than PATH_MAX) made the whole
// capture "corrupt", and a 70 KiB payload wrapped the 16-bit record size.
// Found reviewing the writer after runtime_json_fuzzer's container_meta
// finding.
TEST(CaptureTest, RecordsTheReaderWouldRefuseAreLeftOut) {
  TempDir dir;
  const std::string path = dir.File("long.gpuqcap");
  std::string error;
  auto writer = CaptureWriter::Create(path, &error, kScenarioStartNs);
  ASSERT_NE(writer, nullptr) << error;
  const std::vector<Event> events = SampleEvents();
  ASSERT_TRUE(writer->Write(events[0]));
  ASSERT_TRUE(
      writer->Write(Path("/" + std::string(GPUQ_CGROUP_PATH_MAX, 'a'))));
  ASSERT_TRUE(writer->Write(ContainerMetaRecord{Hdr(GPUQ_EV_CONTAINER_META, 1),
                                                std::string(70000, 'x')}));
  ASSERT_TRUE(writer->Write(events[1]));
  EXPECT_EQ(writer->Records(), 2u);
  EXPECT_EQ(writer->Skipped(), 2u);
  ASSERT_TRUE(writer->Close(&error)) << error;

  Capture capture;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  ASSERT_EQ(capture.events.size(), 2u);
  EXPECT_EQ(Encode(capture.events[1]), Encode(events[1]));
}

TEST(CaptureTest, FixedStartMakesCapturesByteIdentical) {
  // Generated captures are reproducible byte for byte with a fixed start.
  TempDir dir;
  WriteCapture(dir.File("a.gpuqcap"), SampleEvents());
  WriteCapture(dir.File("b.gpuqcap"), SampleEvents());
  EXPECT_EQ(ReadFile(dir.File("a.gpuqcap")), ReadFile(dir.File("b.gpuqcap")));
}

TEST(CaptureTest, WithoutFixedStartUsesTheClocks) {
  TempDir dir;
  const std::string path = dir.File("clock.gpuqcap");
  WriteCapture(path, {}, /*fixed_start_ns=*/0);
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  // Realtime is after 2020-01-01 (1577836800 s); monotonic is set.
  EXPECT_GT(capture.header.start_realtime_ns, 1577836800ull * 1000000000ull);
  EXPECT_NE(capture.header.start_monotonic_ns, 0u);
}

TEST(CaptureTest, HeaderOnlyCaptureIsEmptyAndFine) {
  TempDir dir;
  const std::string path = dir.File("empty.gpuqcap");
  WriteCapture(path, {});
  EXPECT_EQ(fs::file_size(path), kCaptureHeaderSize);
  Capture capture;
  capture.events.push_back(Create(7, 7));  // stale content must go
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_TRUE(capture.events.empty());
}

TEST(CaptureTest, MissingFileIsOpenError) {
  TempDir dir;
  const std::string path = dir.File("does-not-exist.gpuqcap");
  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kOpen);
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST(CaptureTest, GarbageIsNotACapture) {
  TempDir dir;
  const std::string path = dir.File("garbage");
  WriteFile(path, "this is a text file, certainly not a capture\n");
  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNotCapture);
  EXPECT_NE(error.find(path), std::string::npos) << error;

  // Shorter than the magic, and empty.
  WriteFile(path, "GPUQ");
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNotCapture);
  WriteFile(path, "");
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNotCapture);
}

TEST(CaptureTest, OtherAbiVersionIsRejectedNamingBothVersions) {
  TempDir dir;
  const std::string path = dir.File("abi.gpuqcap");
  WriteCapture(path, SampleEvents());
  std::string bytes = ReadFile(path);
  const uint32_t other = 77;
  std::memcpy(bytes.data() + 8, &other, sizeof(other));  // abi_version
  WriteFile(path, bytes);

  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kAbiVersion);
  EXPECT_TRUE(MentionsNumber(error, path, 77)) << error;
  EXPECT_TRUE(MentionsNumber(error, path, GPUQ_ABI_VERSION)) << error;
}

TEST(CaptureTest, TruncatedMidRecordKeepsCompleteRecords) {
  TempDir dir;
  const std::string path = dir.File("cut.gpuqcap");
  const std::vector<Event> events = {Create(0, 1), Destroy(0, 2), Create(1, 3)};
  WriteCapture(path, events);
  // Cut the third record in half, as a killed recorder would leave it.
  const size_t third_at =
      kCaptureHeaderSize + Encode(events[0]).size() + Encode(events[1]).size();
  fs::resize_file(path, third_at + Encode(events[2]).size() / 2);

  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kTruncated);
  ASSERT_EQ(capture.events.size(), 2u);
  EXPECT_EQ(Encode(capture.events[0]), Encode(events[0]));
  EXPECT_EQ(Encode(capture.events[1]), Encode(events[1]));
  EXPECT_TRUE(MentionsNumber(error, path, third_at)) << error;
}

TEST(CaptureTest, TruncatedInsideRecordHeader) {
  // Fewer bytes than a record header after the last complete record.
  TempDir dir;
  const std::string path = dir.File("cut-hdr.gpuqcap");
  const std::vector<Event> events = {Create(0, 1), Create(1, 2)};
  WriteCapture(path, events);
  const size_t second_at = kCaptureHeaderSize + Encode(events[0]).size();
  fs::resize_file(path, second_at + 5);

  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kTruncated);
  EXPECT_EQ(capture.events.size(), 1u);
  EXPECT_TRUE(MentionsNumber(error, path, second_at)) << error;
}

TEST(CaptureTest, RecordWithImpossibleSizeIsCorrupt) {
  TempDir dir;
  const std::string path = dir.File("corrupt.gpuqcap");
  const std::vector<Event> events = {Create(0, 1), Destroy(0, 2)};
  WriteCapture(path, events);
  std::string bytes = ReadFile(path);
  const size_t second_at = kCaptureHeaderSize + Encode(events[0]).size();
  const uint16_t size = 3;
  std::memcpy(bytes.data() + second_at + 2, &size, sizeof(size));
  WriteFile(path, bytes);

  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kCorrupt);
  EXPECT_TRUE(MentionsNumber(error, path, second_at)) << error;
}

TEST(CaptureTest, RecordOfUnknownTypeIsCorrupt) {
  TempDir dir;
  const std::string path = dir.File("type.gpuqcap");
  WriteCapture(path, {Create(0, 1)});
  std::string bytes = ReadFile(path);
  const uint16_t type = GPUQ_EV__MAX;
  std::memcpy(bytes.data() + kCaptureHeaderSize, &type, sizeof(type));
  WriteFile(path, bytes);

  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(path, &capture, &error), CaptureError::kCorrupt);
}

TEST(CaptureTest, UnwritablePathFailsCreate) {
  TempDir dir;
  std::string error;
  // A missing parent directory, and a directory in place of the file: both
  // fail even for root.
  const std::string missing = dir.File("no/such/dir/x.gpuqcap");
  EXPECT_EQ(CaptureWriter::Create(missing, &error), nullptr);
  EXPECT_NE(error.find(missing), std::string::npos) << error;

  error.clear();
  EXPECT_EQ(CaptureWriter::Create(dir.path(), &error), nullptr);
  EXPECT_FALSE(error.empty());
}

// ---------------------------------------------------------------------------
// The bundled example capture. Counts from examples/README.md.
// ---------------------------------------------------------------------------

const std::string kBundled =
    std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap";

TEST(CaptureTest, BundledCaptureReadsWithReadmeCounts) {
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(kBundled, &capture, &error), CaptureError::kNone)
      << error;
  EXPECT_EQ(fs::file_size(kBundled), 23552u);
  EXPECT_EQ(capture.header.abi_version, 1u);
  EXPECT_EQ(capture.header.start_realtime_ns, kScenarioStartNs);
  EXPECT_EQ(capture.header.start_monotonic_ns, kScenarioStartNs);

  ASSERT_EQ(capture.events.size(), 206u);
  std::array<size_t, GPUQ_EV__MAX> by_type{};
  uint64_t last_ts = 0;
  for (const Event& e : capture.events) {
    const gpuq_event_header& h = Header(e);
    ASSERT_LT(h.type, GPUQ_EV__MAX);
    ++by_type[h.type];
    EXPECT_GE(h.ts_ns, last_ts) << "ts_ns never decreases";
    last_ts = h.ts_ns;
  }
  EXPECT_EQ(by_type[GPUQ_EV_GPU_INFO], 9u);
  EXPECT_EQ(by_type[GPUQ_EV_CGROUP_PATH], 3u);
  EXPECT_EQ(by_type[GPUQ_EV_CONTAINER_META], 2u);
  EXPECT_EQ(by_type[GPUQ_EV_QUEUE_CREATE], 55u);
  EXPECT_EQ(by_type[GPUQ_EV_QUEUE_DESTROY], 12u);
  EXPECT_EQ(by_type[GPUQ_EV_PROCESS_EXIT], 1u);
  EXPECT_EQ(by_type[GPUQ_EV_QUEUE_CREATE_FAILED], 1u);
  EXPECT_EQ(by_type[GPUQ_EV_RUNLIST], 12u);
  EXPECT_EQ(by_type[GPUQ_EV_EVICTION], 6u);
  EXPECT_EQ(by_type[GPUQ_EV_QUEUE_SAMPLE], 90u);
  EXPECT_EQ(by_type[GPUQ_EV_DOORBELL_COUNT], 4u);
  EXPECT_EQ(by_type[GPUQ_EV_QUEUE_CU_MASK], 1u);
  EXPECT_EQ(by_type[GPUQ_EV_PROCESS_KNOBS], 10u);
}

TEST(CaptureTest, BundledCaptureTimelineLandmarks) {
  // README "Timeline": records are numbered from 1.
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(kBundled, &capture, &error), CaptureError::kNone)
      << error;
  ASSERT_EQ(capture.events.size(), 206u);

  for (size_t i = 0; i < 8; ++i) {
    const auto* gpu = std::get_if<gpuq_gpu_info_record>(&capture.events[i]);
    ASSERT_NE(gpu, nullptr) << "record " << i + 1;
    EXPECT_EQ(gpu->node, i + 1);
    EXPECT_EQ(gpu->gfx_target_version, 90402u);
  }
  // Record 9: the W7900 (MES).
  const auto* w7900 = std::get_if<gpuq_gpu_info_record>(&capture.events[8]);
  ASSERT_NE(w7900, nullptr);
  EXPECT_EQ(w7900->gfx_target_version, 110000u);
  const auto* host_path = std::get_if<CgroupPathRecord>(&capture.events[9]);
  ASSERT_NE(host_path, nullptr);
  EXPECT_EQ(host_path->hdr.cgroup_id, 4127u);
  EXPECT_EQ(host_path->path, "/user.slice/user-1000.slice/session-3.scope");

  // Record 11: the seeded host queue.
  const auto* seeded =
      std::get_if<gpuq_queue_create_event>(&capture.events[10]);
  ASSERT_NE(seeded, nullptr);
  EXPECT_EQ(seeded->flags & GPUQ_CREATE_F_SEEDED, GPUQ_CREATE_F_SEEDED);
  EXPECT_EQ(seeded->hdr.process_key, 0u);
  EXPECT_EQ(seeded->hdr.tgid, 2817u);
  EXPECT_EQ(seeded->gpu_id, 23710u);
  EXPECT_EQ(seeded->queue_id, 0u);

  // Record 13: the failed create, -12.
  const auto* failed =
      std::get_if<gpuq_queue_create_failed_event>(&capture.events[12]);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->error, -12);

  // Records 17 and 67: what the runtimes said, right after each container's
  // cgroup path.
  const auto* vllm = std::get_if<ContainerMetaRecord>(&capture.events[16]);
  ASSERT_NE(vllm, nullptr);
  EXPECT_EQ(vllm->hdr.cgroup_id, 5861u);
  EXPECT_NE(vllm->json.find("\"name\":\"vllm\""), std::string::npos);
  const auto* trainer = std::get_if<ContainerMetaRecord>(&capture.events[66]);
  ASSERT_NE(trainer, nullptr);
  EXPECT_EQ(trainer->hdr.cgroup_id, 6342u);
  EXPECT_NE(trainer->json.find("\"pod\":\"trainer-0\""), std::string::npos);

  // Records 107-116: the knobs of the host process, the workers and the
  // trainer, read with their first samples.
  const auto* host_knobs =
      std::get_if<gpuq_process_knobs_record>(&capture.events[106]);
  ASSERT_NE(host_knobs, nullptr);
  EXPECT_EQ(host_knobs->hdr.tgid, 2817u);
  EXPECT_EQ(host_knobs->set, 0u);
  const auto* trainer_knobs =
      std::get_if<gpuq_process_knobs_record>(&capture.events[115]);
  ASSERT_NE(trainer_knobs, nullptr);
  EXPECT_EQ(trainer_knobs->hdr.tgid, 48211u);
  EXPECT_EQ(trainer_knobs->set, 1u << GPUQ_KNOB_GPU_MAX_HW_QUEUES);
  EXPECT_STREQ(trainer_knobs->values[GPUQ_KNOB_GPU_MAX_HW_QUEUES], "2");

  // Record 124: the unmap that timed out (-ETIME) on GPU 8.
  const auto* hang = std::get_if<gpuq_runlist_event>(&capture.events[123]);
  ASSERT_NE(hang, nullptr);
  EXPECT_EQ(hang->ret, -62);
  EXPECT_EQ(hang->gpu_id, 64512u);

  // Record 204: the host destroys the seeded queue, untracked, by ioctl.
  const auto* last =
      std::get_if<gpuq_queue_destroy_event>(&capture.events[203]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->hdr.tgid, 2817u);
  EXPECT_EQ(last->hdr.process_key, 0xffff888110e1b800ull);
  EXPECT_EQ(last->queue_id, 0u);
  EXPECT_EQ(last->reason, static_cast<uint32_t>(GPUQ_DESTROY_IOCTL));
  EXPECT_EQ(last->flags & GPUQ_DESTROY_F_UNTRACKED, GPUQ_DESTROY_F_UNTRACKED);

  // Records 205-206: the host's PM4 compute queue takes the freed id 0 (no
  // ROCr layout, so nothing to sample) and is fenced to 152 of 320 CUs.
  const auto* pm4 = std::get_if<gpuq_queue_create_event>(&capture.events[204]);
  ASSERT_NE(pm4, nullptr);
  EXPECT_EQ(pm4->hdr.tgid, 2817u);
  EXPECT_EQ(pm4->queue_id, 0u);
  EXPECT_EQ(pm4->gpu_id, 23710u);
  EXPECT_EQ(pm4->queue_type, static_cast<uint32_t>(GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(pm4->queue_format, static_cast<uint32_t>(GPUQ_QUEUE_FORMAT_PM4));
  EXPECT_EQ(pm4->flags, 0u);
  const auto* mask =
      std::get_if<gpuq_queue_cu_mask_event>(&capture.events[205]);
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->queue_id, 0u);
  EXPECT_EQ(mask->num_cu_mask, 320u);
  EXPECT_EQ(mask->hdr.ts_ns - pm4->hdr.ts_ns, 1000000u);
}

}  // namespace
}  // namespace gpuq::capture_test

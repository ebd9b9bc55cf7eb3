// The capture ABI's minors (agent/sources/capture_minors.h, docs/abi.md): each
// row of record sizes stays as it was released, captures of every minor
// read, and a record that breaks its capture's minor is refused.
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "event_builders.h"
#include "sources/capture.h"
#include "sources/capture_minors.h"
#include "sources/event.h"
#include "test_support.h"

namespace gpuq::abi_minor_test {
namespace {

// Every minor's row as it was released, written out again by hand: a row
// of kRecordSizesByMinor that changes fails here, so a layout change has to
// add a minor (and its row here) instead.
const std::vector<std::array<uint16_t, 16>> kReleasedRows = {
    // 0: sizes not fixed
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // 1
    {0, 128, 64, 48, 64, 120, 40, 40, 96, 64, 80, 88, 64, 176, 88},
    // 2: doorbell_count 104 (GPUQ_PACKET_EXT_DISPATCH, barrier_dispatches)
    {0, 128, 64, 48, 64, 120, 40, 40, 96, 64, 80, 104, 64, 176, 88},
    // 3: process_knobs 424
    {0, 128, 64, 48, 64, 120, 40, 40, 96, 64, 80, 104, 64, 176, 88, 424},
    // 4: creates and destroys may be _F_RECOVERED (sizes as in 3)
    {0, 128, 64, 48, 64, 120, 40, 40, 96, 64, 80, 104, 64, 176, 88, 424},
};

const std::string kFixtures = std::string(GPUQ_SOURCE_DIR) + "/tests/fixtures";

TEST(AbiMinorTest, EveryReleasedRowIsUnchanged) {
  ASSERT_EQ(kReleasedRows.size(), GPUQ_ABI_MINOR + 1u)
      << "a new minor needs its released row here";
  for (size_t minor = 0; minor < kReleasedRows.size(); ++minor) {
    for (size_t type = 0; type < GPUQ_EV__MAX; ++type) {
      const uint16_t released =
          type < kReleasedRows[minor].size() ? kReleasedRows[minor][type] : 0;
      EXPECT_EQ(kRecordSizesByMinor[minor][type], released)
          << "minor " << minor << ", record type " << type;
    }
  }
}

// Walks a capture's records as they lie in the file: (type, size) each.
std::vector<std::pair<uint16_t, uint16_t>> RecordSizes(
    const std::string& bytes) {
  std::vector<std::pair<uint16_t, uint16_t>> out;
  gpuq_capture_header header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  for (size_t at = header.header_size;
       at + sizeof(gpuq_event_header) <= bytes.size();) {
    gpuq_event_header hdr;
    std::memcpy(&hdr, bytes.data() + at, sizeof(hdr));
    out.emplace_back(hdr.type, hdr.size);
    if (hdr.size == 0) break;
    at += hdr.size;
  }
  return out;
}

TEST(AbiMinorTest, BundledCaptureIsTheCurrentMinorRecordForRecord) {
  const std::string bytes =
      ReadFile(std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap");
  gpuq_capture_header header;
  ASSERT_GE(bytes.size(), sizeof(header));
  std::memcpy(&header, bytes.data(), sizeof(header));
  EXPECT_EQ(header.abi_version, GPUQ_ABI_VERSION);
  ASSERT_EQ(header.abi_minor, GPUQ_ABI_MINOR);
  const auto records = RecordSizes(bytes);
  EXPECT_EQ(records.size(), 206u);
  for (size_t i = 0; i < records.size(); ++i) {
    const auto [type, size] = records[i];
    ASSERT_LT(type, GPUQ_EV__MAX) << "record " << i + 1;
    const uint16_t row = kRecordSizesByMinor[GPUQ_ABI_MINOR][type];
    if (type == GPUQ_EV_CGROUP_PATH || type == GPUQ_EV_CONTAINER_META) {
      EXPECT_GE(size, row) << "record " << i + 1;
    } else {
      EXPECT_EQ(size, row) << "record " << i + 1;
    }
  }
}

// The bundled capture as it was before minors were numbered: header
// abi_minor (then `reserved`) 0, read by the decoder's smallest sizes.
TEST(AbiMinorTest, MinorZeroCaptureStillReads) {
  const std::string path = kFixtures + "/captures/abi-1.0-default.gpuqcap";
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_EQ(capture.header.abi_minor, 0u);
  EXPECT_EQ(capture.events.size(), 194u);
}

// The bundled capture as minor 1 wrote it: its doorbell counts 88 bytes,
// read with no extended kernel dispatches.
TEST(AbiMinorTest, MinorOneCaptureReadsWithoutExtDispatches) {
  const std::string path = kFixtures + "/captures/abi-1.1-default.gpuqcap";
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_EQ(capture.header.abi_minor, 1u);
  EXPECT_EQ(capture.events.size(), 196u);
  size_t doorbell_counts = 0;
  uint64_t dispatches = 0;
  for (const Event& e : capture.events) {
    const auto* d = std::get_if<gpuq_doorbell_count_record>(&e);
    if (d == nullptr) continue;
    ++doorbell_counts;
    dispatches += d->by_packet[GPUQ_PACKET_DISPATCH];
    EXPECT_EQ(d->by_packet[GPUQ_PACKET_EXT_DISPATCH], 0u);
  }
  EXPECT_GT(doorbell_counts, 0u);
  EXPECT_GT(dispatches, 0u);
}

// The bundled capture as minor 2 wrote it: no process_knobs records, so no
// process's knobs were read.
TEST(AbiMinorTest, MinorTwoCaptureReadsWithoutKnobs) {
  const std::string path = kFixtures + "/captures/abi-1.2-default.gpuqcap";
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_EQ(capture.header.abi_minor, 2u);
  EXPECT_EQ(capture.events.size(), 196u);
  for (const Event& e : capture.events) {
    EXPECT_FALSE(std::holds_alternative<gpuq_process_knobs_record>(e));
  }
}

// The bundled capture as minor 3 wrote it: knobs, and no create or destroy
// of reconciliation's (_F_RECOVERED), which only minor 4 may hold.
TEST(AbiMinorTest, MinorThreeCaptureHoldsNoRecoveredRecords) {
  const std::string path = kFixtures + "/captures/abi-1.3-default.gpuqcap";
  Capture capture;
  std::string error;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_EQ(capture.header.abi_minor, 3u);
  size_t knobs = 0;
  for (const Event& e : capture.events) {
    if (std::holds_alternative<gpuq_process_knobs_record>(e)) ++knobs;
    if (const auto* c = std::get_if<gpuq_queue_create_event>(&e)) {
      EXPECT_EQ(c->flags & GPUQ_CREATE_F_RECOVERED, 0u);
    }
    if (const auto* d = std::get_if<gpuq_queue_destroy_event>(&e)) {
      EXPECT_EQ(d->flags & GPUQ_DESTROY_F_RECOVERED, 0u);
    }
  }
  EXPECT_GT(knobs, 0u);
}

TEST(AbiMinorTest, WriterStampsItsMinor) {
  TempDir dir;
  const std::string path = dir.File("w.gpuqcap");
  std::string error;
  auto writer = CaptureWriter::Create(path, &error);
  ASSERT_NE(writer, nullptr) << error;
  ASSERT_TRUE(writer->Write(Create(0x1000, 7, 5861, 11437, 0)));
  ASSERT_TRUE(writer->Close(&error)) << error;
  Capture capture;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  EXPECT_EQ(capture.header.abi_minor, GPUQ_ABI_MINOR);
}

// A capture of `minor` holding `record` (its bytes as given).
std::string CaptureOf(uint32_t minor, const std::string& record) {
  gpuq_capture_header header{};
  std::memcpy(header.magic, GPUQ_CAPTURE_MAGIC, sizeof(header.magic));
  header.abi_version = GPUQ_ABI_VERSION;
  header.header_size = sizeof(header);
  header.abi_minor = minor;
  return std::string(reinterpret_cast<const char*>(&header), sizeof(header)) +
         record;
}

// A queue_create record cut to `size` bytes, its header saying so.
std::string CreateRecordOf(uint16_t size) {
  gpuq_queue_create_event e = Create(0x1000, 7, 5861, 11437, 0);
  e.hdr.type = GPUQ_EV_QUEUE_CREATE;
  std::string bytes(reinterpret_cast<const char*>(&e), sizeof(e));
  bytes.resize(size, '\0');
  gpuq_event_header hdr;
  std::memcpy(&hdr, bytes.data(), sizeof(hdr));
  hdr.size = size;
  std::memcpy(bytes.data(), &hdr, sizeof(hdr));
  return bytes;
}

CaptureError Parse(const std::string& bytes, std::string* error) {
  Capture capture;
  return ParseCapture(bytes, "t.gpuqcap", &capture, error);
}

TEST(AbiMinorTest, ShortRecordReadsAtMinorZeroOnly) {
  // 112 bytes: a queue_create from before doorbell_handle was appended.
  std::string error;
  EXPECT_EQ(Parse(CaptureOf(0, CreateRecordOf(112)), &error),
            CaptureError::kNone)
      << error;
  EXPECT_EQ(Parse(CaptureOf(1, CreateRecordOf(112)), &error),
            CaptureError::kCorrupt);
  EXPECT_NE(error.find("ABI 1.1"), std::string::npos) << error;
  EXPECT_NE(error.find("not its type's at that ABI minor"), std::string::npos)
      << error;
  EXPECT_EQ(Parse(CaptureOf(1, CreateRecordOf(128)), &error),
            CaptureError::kNone)
      << error;
}

TEST(AbiMinorTest, NewerMinorReadsAppendedFieldsButNamesNewTypes) {
  const uint32_t newer = GPUQ_ABI_MINOR + 1;
  std::string error;
  // A field appended by a newer minor: its bytes are skipped.
  EXPECT_EQ(Parse(CaptureOf(newer, CreateRecordOf(136)), &error),
            CaptureError::kNone)
      << error;
  // A record type this agent does not know.
  std::string unknown = CreateRecordOf(128);
  const uint16_t type = GPUQ_EV__MAX;
  std::memcpy(unknown.data(), &type, sizeof(type));
  ASSERT_EQ(offsetof(gpuq_event_header, type), 0u);
  EXPECT_EQ(Parse(CaptureOf(newer, unknown), &error), CaptureError::kCorrupt);
  EXPECT_NE(error.find("newer than this gpuq-agent"), std::string::npos)
      << error;
  EXPECT_NE(error.find("ABI 1." + std::to_string(newer)), std::string::npos)
      << error;
}

}  // namespace
}  // namespace gpuq::abi_minor_test

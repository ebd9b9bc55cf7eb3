// Compressed captures (sources/capture_zstd.h): what `record` writes by
// default reads back record for record, a recorder killed after a flush
// leaves every record before it readable, and bad compressed input gets
// one line and a refusal.
#include "sources/capture_zstd.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sources/capture.h"
#include "sources/event.h"
#include "test_support.h"

namespace gpuq::capture_zstd_test {
namespace {

const std::string kBundledCapture =
    std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap";

Capture Read(const std::string& path, CaptureError want,
             std::string* error = nullptr) {
  Capture capture;
  std::string why;
  EXPECT_EQ(ReadCapture(path, &capture, &why), want) << why;
  if (error != nullptr) *error = why;
  return capture;
}

// The bundled capture's records written again through `compression`.
std::string Rewrite(const TempDir& dir, const std::string& name,
                    CaptureCompression compression, size_t records = 0,
                    bool close = true) {
  const Capture bundled = Read(kBundledCapture, CaptureError::kNone);
  const std::string path = dir.File(name);
  std::string error;
  auto writer = CaptureWriter::Create(
      path, &error, bundled.header.start_realtime_ns, compression);
  EXPECT_NE(writer, nullptr) << error;
  if (writer == nullptr) return path;
  const size_t n = records != 0 ? records : bundled.events.size();
  for (size_t i = 0; i < n; ++i) EXPECT_TRUE(writer->Write(bundled.events[i]));
  EXPECT_TRUE(writer->Flush());
  if (close) {
    EXPECT_TRUE(writer->Close(&error)) << error;
  } else {
    // What a killed recorder leaves: the file as it is now.
    WriteFile(dir.File("killed-" + name), ReadFile(path));
  }
  return path;
}

TEST(CaptureZstdTest, CompressedCaptureReadsAsTheRawOne) {
  TempDir dir;
  const std::string raw =
      Rewrite(dir, "raw.gpuqcap", CaptureCompression::kNone);
  const std::string zst =
      Rewrite(dir, "zst.gpuqcap", CaptureCompression::kZstd);
  const std::string raw_bytes = ReadFile(raw), zst_bytes = ReadFile(zst);
  EXPECT_EQ(raw_bytes.substr(0, 8), "GPUQCAP1");
  EXPECT_TRUE(IsZstd(zst_bytes));
  EXPECT_LT(zst_bytes.size() * 4, raw_bytes.size())
      << "zstd at least quarters the bundled capture";
  const Capture a = Read(raw, CaptureError::kNone);
  const Capture b = Read(zst, CaptureError::kNone);
  ASSERT_EQ(a.events.size(), 206u);
  ASSERT_EQ(b.events.size(), a.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(Encode(a.events[i]), Encode(b.events[i])) << "record " << i + 1;
  }
  EXPECT_EQ(b.header.abi_minor, a.header.abi_minor);
  // Decompressed, it is the raw file byte for byte.
  std::string inflated, error;
  EXPECT_EQ(Inflate(zst_bytes, 1 << 20, &inflated, &error),
            InflateResult::kComplete);
  EXPECT_EQ(inflated, raw_bytes);
}

TEST(CaptureZstdTest, AFlushedPrefixOfAKilledRecorderKeepsItsRecords) {
  TempDir dir;
  Rewrite(dir, "part.gpuqcap", CaptureCompression::kZstd, 120, false);
  std::string error;
  Capture c =
      Read(dir.File("killed-part.gpuqcap"), CaptureError::kTruncated, &error);
  EXPECT_EQ(c.events.size(), 120u);
  EXPECT_NE(error.find("ends after 120 complete records"), std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(CaptureZstdTest, CorruptCompressedCaptureIsOneLine) {
  TempDir dir;
  std::string bytes =
      ReadFile(Rewrite(dir, "c.gpuqcap", CaptureCompression::kZstd));
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 16; ++i) {
    bytes[i] = static_cast<char>(~bytes[i]);
  }
  WriteFile(dir.File("bad.gpuqcap"), bytes);
  std::string error;
  Read(dir.File("bad.gpuqcap"), CaptureError::kCorrupt, &error);
  EXPECT_NE(error.find("compressed (zstd) but corrupt"), std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  // Cut inside the first block: nothing of the header came out.
  WriteFile(dir.File("cut.gpuqcap"), bytes.substr(0, 40));
  Read(dir.File("cut.gpuqcap"), CaptureError::kTruncated, &error);
  EXPECT_NE(error.find("before the capture's header"), std::string::npos)
      << error;
}

TEST(CaptureZstdTest, InflateStopsAtItsLimit) {
  const std::string zeros(1 << 20, '\0');
  std::string packed(ZSTD_compressBound(zeros.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), zeros.data(),
                              zeros.size(), 3));
  ASSERT_LT(packed.size(), 1024u);  // a million zeros: a small bomb
  std::string out, error;
  EXPECT_EQ(Inflate(packed, 4096, &out, &error), InflateResult::kTooLarge);
  EXPECT_EQ(out.size(), 4096u);
  EXPECT_EQ(Inflate(packed, zeros.size(), &out, &error),
            InflateResult::kComplete);
  EXPECT_EQ(out, zeros);
}

TEST(CaptureZstdTest, CompressedTwiceIsRefused) {
  TempDir dir;
  const std::string once =
      ReadFile(Rewrite(dir, "c.gpuqcap", CaptureCompression::kZstd));
  std::string twice(ZSTD_compressBound(once.size()), '\0');
  twice.resize(
      ZSTD_compress(twice.data(), twice.size(), once.data(), once.size(), 3));
  WriteFile(dir.File("twice.gpuqcap"), twice);
  std::string error;
  Read(dir.File("twice.gpuqcap"), CaptureError::kCorrupt, &error);
  EXPECT_NE(error.find("compressed twice"), std::string::npos) << error;
}

}  // namespace
}  // namespace gpuq::capture_zstd_test

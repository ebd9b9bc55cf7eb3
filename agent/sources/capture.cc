#include "sources/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/bounded_read.h"
#include "common/clock.h"
#include "sources/capture_minors.h"
#include "sources/capture_zstd.h"

namespace gpuq {
namespace {

// What the record at the start of `rest` breaks of its capture's ABI minor,
// or nullptr (Decode judges what is left: a cut record, an unknown type in a
// capture of this agent's minor or older). A numbered minor fixes every
// type's size (a payload record's fixed part, then its payload); a capture
// of a newer minor may append fields, but a type this agent lacks is one a
// newer release added.
const char* AgainstMinor(uint32_t minor, std::string_view rest) {
  gpuq_event_header hdr;
  if (rest.size() < sizeof(hdr)) return nullptr;
  std::memcpy(&hdr, rest.data(), sizeof(hdr));
  const bool known = hdr.type > GPUQ_EV_INVALID && hdr.type < GPUQ_EV__MAX;
  if (minor > GPUQ_ABI_MINOR) {
    return known || hdr.type == GPUQ_EV_INVALID
               ? nullptr
               : "a record type newer than this gpuq-agent (replay it with "
                 "the release that wrote it, or a later one)";
  }
  if (minor == 0 || !known) return nullptr;
  const size_t want = kRecordSizesByMinor[minor][hdr.type];
  if (want == 0) return "a record type its ABI minor does not have";
  if (HasPayload(hdr.type) ? hdr.size < want : hdr.size != want) {
    return "a record whose size is not its type's at that ABI minor";
  }
  return nullptr;
}

// ParseCapture() of a zstd-compressed capture (`data` starts with zstd's
// magic): decompressed up to kMaxCaptureBytes, then parsed. A stream cut
// inside a frame keeps the complete records of its complete blocks
// (kTruncated).
CaptureError ParseCompressedCapture(std::string_view data,
                                    const std::string& path, Capture* out,
                                    std::string* error) {
  std::string raw, why;
  const InflateResult inflated = Inflate(data, kMaxCaptureBytes, &raw, &why);
  if (inflated == InflateResult::kCorrupt) {
    out->events.clear();
    *error = fmt::format(
        "capture {} is compressed (zstd) but corrupt: {} ({} bytes "
        "decompressed)",
        path, why, raw.size());
    return CaptureError::kCorrupt;
  }
  if (inflated == InflateResult::kTooLarge) {
    out->events.clear();
    *error = fmt::format(
        "capture {} decompresses to more than {} MiB, the most a capture is "
        "read to; cut long recordings with `record --duration`",
        path, kMaxCaptureBytes >> 20);
    return CaptureError::kOpen;
  }
  if (IsZstd(raw)) {  // compressed twice: nothing `record` writes
    *error = fmt::format("capture {} is compressed twice", path);
    return CaptureError::kCorrupt;
  }
  if (inflated == InflateResult::kTruncated &&
      raw.size() < sizeof(gpuq_capture_header)) {
    out->events.clear();
    *error = fmt::format(
        "capture {} is truncated: its zstd stream ends before the capture's "
        "header",
        path);
    return CaptureError::kTruncated;
  }
  const CaptureError parsed = ParseCapture(raw, path, out, error);
  if (parsed == CaptureError::kNone && inflated == InflateResult::kTruncated) {
    // The frame was cut at a flush: every record before it is whole.
    *error = fmt::format(
        "capture {} is truncated: its zstd stream ends after {} complete "
        "records (was the recorder killed?); --allow-truncated replays those",
        path, out->events.size());
    return CaptureError::kTruncated;
  }
  return parsed;
}

}  // namespace

CaptureWriter::CaptureWriter(std::FILE* file, std::string path, bool zstd)
    : file_(file),
      path_(std::move(path)),
      zstd_(zstd ? std::make_unique<ZstdFileWriter>(file) : nullptr) {}

CaptureWriter::~CaptureWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

std::unique_ptr<CaptureWriter> CaptureWriter::Create(
    const std::string& path, std::string* error, uint64_t fixed_start_ns,
    CaptureCompression compression) {
  std::FILE* file = std::fopen(path.c_str(), "wbe");
  if (file == nullptr) {
    *error = fmt::format("cannot create capture file {}: {}", path,
                         std::strerror(errno));
    return nullptr;
  }
  gpuq_capture_header header{};
  std::memcpy(header.magic, GPUQ_CAPTURE_MAGIC, sizeof(header.magic));
  header.abi_version = GPUQ_ABI_VERSION;
  header.abi_minor = GPUQ_ABI_MINOR;
  header.header_size = sizeof(header);
  header.start_realtime_ns =
      fixed_start_ns != 0 ? fixed_start_ns : ClockNowNs(CLOCK_REALTIME);
  header.start_monotonic_ns =
      fixed_start_ns != 0 ? fixed_start_ns : ClockNowNs(CLOCK_MONOTONIC);
  std::unique_ptr<CaptureWriter> writer(
      new CaptureWriter(file, path, compression == CaptureCompression::kZstd));
  if (!writer->Put(std::string_view(reinterpret_cast<const char*>(&header),
                                    sizeof(header)))) {
    *error = fmt::format("cannot write capture file {}: {}", path,
                         std::strerror(errno));
    return nullptr;
  }
  return writer;
}

bool CaptureWriter::Put(std::string_view bytes) {
  if (zstd_ != nullptr) return zstd_->Write(bytes);
  return std::fwrite(bytes.data(), bytes.size(), 1, file_) == 1;
}

bool CaptureWriter::Write(const Event& event) {
  const std::string bytes = Encode(event);
  // A record ReadCapture() would refuse (a cgroup path over
  // GPUQ_CGROUP_PATH_MAX, a payload whose size passes its maximum or wraps
  // the 16-bit record size) is left out: written, it made the whole capture
  // unreadable ("corrupt at byte N").
  Event check;
  size_t consumed = 0;
  if (Decode(bytes.data(), bytes.size(), &check, &consumed) !=
          DecodeStatus::kOk ||
      consumed != bytes.size()) {
    ++skipped_;
    return true;
  }
  if (!Put(bytes)) {
    Fail(errno);
    return false;
  }
  ++records_;
  return true;
}

void CaptureWriter::Fail(int err) {
  // The first failure says why (ENOSPC, EIO): later calls may change errno.
  if (error_ == 0) error_ = err != 0 ? err : EIO;
}

bool CaptureWriter::Flush() {
  if (zstd_ != nullptr ? !zstd_->Flush() : std::fflush(file_) != 0) {
    Fail(errno);
  }
  return error_ == 0;
}

bool CaptureWriter::Close(std::string* error) {
  if (zstd_ != nullptr ? !zstd_->Finish() : std::fflush(file_) != 0) {
    Fail(errno);
  }
  if (std::fclose(file_) != 0) Fail(errno);
  file_ = nullptr;
  if (error_ != 0) {
    *error = fmt::format("writing capture file {} failed: {}", path_,
                         std::strerror(error_));
    return false;
  }
  return true;
}

CaptureError ReadCapture(const std::string& path, Capture* out,
                         std::string* error) {
  // Only a regular file, only the bytes it had when opened, and at most
  // kMaxCaptureBytes: a FIFO, a device or a file that grows while read must
  // neither hang nor exhaust memory (captures are validated whole, up front).
  std::string data, problem;
  if (!ReadRegularFile(path, kMaxCaptureBytes, &data, &problem)) {
    *error = fmt::format(
        "cannot read capture {}: {} (a capture is a file written by "
        "`gpuq-agent record -o FILE`)",
        path, problem);
    return CaptureError::kOpen;
  }
  return ParseCapture(data, path, out, error);
}

CaptureError ParseCapture(std::string_view data, const std::string& path,
                          Capture* out, std::string* error) {
  if (IsZstd(data)) return ParseCompressedCapture(data, path, out, error);
  gpuq_capture_header header{};
  if (data.size() < sizeof(header.magic) ||
      std::memcmp(data.data(), GPUQ_CAPTURE_MAGIC, sizeof(header.magic)) != 0) {
    *error = fmt::format(
        "{} is not a gpuq capture (bad magic); captures are written by "
        "`gpuq-agent record -o FILE`",
        path);
    return CaptureError::kNotCapture;
  }
  if (data.size() < sizeof(header)) {
    *error = fmt::format("capture {} is truncated inside its header", path);
    return CaptureError::kTruncated;
  }
  std::memcpy(&header, data.data(), sizeof(header));
  if (header.abi_version != GPUQ_ABI_VERSION) {
    *error = fmt::format(
        "capture {} has ABI version {}, this gpuq-agent reads version {}: "
        "replay it with a matching gpuq-agent release",
        path, header.abi_version, GPUQ_ABI_VERSION);
    return CaptureError::kAbiVersion;
  }
  if (header.header_size < sizeof(header) || header.header_size > data.size()) {
    *error = fmt::format("capture {} has a bad header size {}", path,
                         header.header_size);
    return CaptureError::kCorrupt;
  }
  out->header = header;
  out->events.clear();
  size_t offset = header.header_size;
  while (offset < data.size()) {
    if (const char* why = AgainstMinor(header.abi_minor, data.substr(offset))) {
      *error = fmt::format(
          "capture {} (ABI {}.{}, this gpuq-agent reads up to {}.{}) is "
          "corrupt at byte {} (record {}): {}",
          path, header.abi_version, header.abi_minor, GPUQ_ABI_VERSION,
          GPUQ_ABI_MINOR, offset, out->events.size() + 1, why);
      return CaptureError::kCorrupt;
    }
    Event event;
    size_t consumed = 0;
    const DecodeStatus status =
        Decode(data.data() + offset, data.size() - offset, &event, &consumed);
    if (status == DecodeStatus::kTruncated) {
      *error = fmt::format(
          "capture {} is truncated at byte {} after {} complete records "
          "(was the recorder killed?); --allow-truncated replays those",
          path, offset, out->events.size());
      return CaptureError::kTruncated;
    }
    if (status != DecodeStatus::kOk) {
      *error =
          fmt::format("capture {} is corrupt at byte {} (record {}): {}", path,
                      offset, out->events.size() + 1, DecodeStatusName(status));
      return CaptureError::kCorrupt;
    }
    out->events.push_back(std::move(event));
    offset += consumed;
  }
  return CaptureError::kNone;
}

CaptureSpan SpanOf(const Capture& capture) {
  CaptureSpan span;
  span.start_realtime_ns = capture.header.start_realtime_ns;
  span.start_monotonic_ns = capture.header.start_monotonic_ns;
  for (const Event& event : capture.events) {
    const uint64_t ts = Header(event).ts_ns;
    if (&event == &capture.events.front()) span.first_ns = ts;
    span.last_ns = std::max(span.last_ns, ts);
  }
  return span;
}

}  // namespace gpuq

#include "sources/capture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/clock.h"
#include "sources/capture_stream.h"
#include "sources/capture_zstd.h"

namespace gpuq {

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

namespace {

// Every record of `stream` into *out: what ReadCapture() and ParseCapture()
// share (the checks are the stream's).
CaptureError Collect(CaptureStream* stream, Capture* out, std::string* error) {
  out->header = stream->header();
  out->events.clear();
  Event event;
  while (stream->Next(&event)) out->events.push_back(std::move(event));
  if (stream->Error() != CaptureError::kNone) *error = stream->Message();
  return stream->Error();
}

}  // namespace

CaptureError ReadCapture(const std::string& path, Capture* out,
                         std::string* error) {
  CaptureError kind = CaptureError::kNone;
  auto stream = CaptureStream::OpenFile(path, &kind, error);
  if (stream == nullptr) return kind;
  return Collect(stream.get(), out, error);
}

CaptureError ParseCapture(std::string_view data, const std::string& path,
                          Capture* out, std::string* error) {
  CaptureError kind = CaptureError::kNone;
  auto stream = CaptureStream::OpenMemory(data, path, &kind, error);
  if (stream == nullptr) return kind;
  return Collect(stream.get(), out, error);
}

CaptureSpan SpanOf(const Capture& capture) {
  CaptureSpan span = CaptureSpan::Of(capture.header);
  uint64_t index = 0;
  for (const Event& event : capture.events) {
    span.Take(Header(event).ts_ns, index++);
  }
  return span;
}

}  // namespace gpuq

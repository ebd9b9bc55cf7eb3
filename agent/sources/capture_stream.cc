#include "sources/capture_stream.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "common/bounded_read.h"
#include "sources/capture_minors.h"
#include "sources/capture_zstd.h"

namespace gpuq {
namespace {

/// How much of the input is read at a time.
constexpr size_t kInputChunk = 1 << 16;
/// No record is longer (hdr.size is 16 bits), nor a header.
constexpr size_t kMaxRecord = 1 << 16;

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

}  // namespace

CaptureStream::CaptureStream(std::string path, int fd, uint64_t file_size,
                             std::string_view memory)
    : path_(std::move(path)),
      fd_(fd),
      file_size_(fd >= 0 ? file_size : memory.size()),
      memory_(memory) {}

CaptureStream::~CaptureStream() {
  if (fd_ >= 0) close(fd_);
  ZSTD_freeDCtx(dctx_);
}

std::unique_ptr<CaptureStream> CaptureStream::OpenFile(const std::string& path,
                                                       CaptureError* kind,
                                                       std::string* error) {
  uint64_t size = 0;
  std::string problem;
  // Only a regular file, and only the bytes it had when opened: a FIFO, a
  // device or a file that grows while read must neither hang nor go on.
  const int fd = OpenRegularFile(path, std::numeric_limits<uint64_t>::max(),
                                 &size, &problem);
  if (fd < 0) {
    *kind = CaptureError::kOpen;
    *error = fmt::format(
        "cannot read capture {}: {} (a capture is a file written by "
        "`gpuq-agent record -o FILE`)",
        path, problem);
    return nullptr;
  }
  std::unique_ptr<CaptureStream> stream(new CaptureStream(path, fd, size, {}));
  if (!stream->ReadHeader(kind, error)) return nullptr;
  return stream;
}

std::unique_ptr<CaptureStream> CaptureStream::OpenMemory(
    std::string_view data, const std::string& path, CaptureError* kind,
    std::string* error) {
  std::unique_ptr<CaptureStream> stream(new CaptureStream(path, -1, 0, data));
  if (!stream->ReadHeader(kind, error)) return nullptr;
  return stream;
}

bool CaptureStream::Fail(CaptureError kind, std::string message) {
  error_ = kind;
  message_ = std::move(message);
  return false;
}

size_t CaptureStream::ReadInput(char* dst, size_t n) {
  const uint64_t left = file_size_ - input_read_;
  if (n > left) n = static_cast<size_t>(left);
  if (n == 0) return 0;
  if (fd_ < 0) {
    std::memcpy(dst, memory_.data() + input_read_, n);
    input_read_ += n;
    return n;
  }
  for (;;) {
    const ssize_t got = read(fd_, dst, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      // A read error, or the file shrank: what was read is all there is.
      file_size_ = input_read_;
      return 0;
    }
    input_read_ += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
}

bool CaptureStream::Fill(size_t want) {
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  char chunk[kInputChunk];
  while (Available() < want && !input_done_) {
    if (!zstd_) {
      const size_t n = ReadInput(chunk, sizeof(chunk));
      if (n == 0) input_done_ = true;
      buf_.append(chunk, n);
      continue;
    }
    if (in_pos_ == in_.size()) {
      in_.clear();
      in_pos_ = 0;
      const size_t n = ReadInput(chunk, sizeof(chunk));
      if (n == 0) {
        input_done_ = true;
        break;
      }
      in_.assign(chunk, n);
    }
    ZSTD_inBuffer in{in_.data(), in_.size(), in_pos_};
    const size_t before = buf_.size();
    buf_.resize(before + ZSTD_DStreamOutSize());
    ZSTD_outBuffer out{buf_.data() + before, buf_.size() - before, 0};
    const size_t hint = ZSTD_decompressStream(dctx_, &out, &in);
    buf_.resize(before + out.pos);
    in_pos_ = in.pos;
    if (ZSTD_isError(hint)) {
      return Fail(
          CaptureError::kCorrupt,
          fmt::format("capture {} is compressed (zstd) but corrupt: "
                      "{} ({} bytes decompressed)",
                      path_, ZSTD_getErrorName(hint), offset_ + Available()));
    }
    frame_pending_ = hint;
  }
  return true;
}

bool CaptureStream::ReadHeader(CaptureError* kind, std::string* error) {
  auto refuse = [&](CaptureError k, std::string message) {
    *kind = k;
    *error = std::move(message);
    return false;
  };
  // Raw or zstd: told by the file's first bytes.
  char magic[4] = {};
  const size_t n = ReadInput(magic, sizeof(magic));
  if (n == sizeof(magic) && IsZstd(std::string_view(magic, n))) {
    zstd_ = true;
    // Made once: Rewind() reads the header again with the same one.
    if (dctx_ == nullptr) dctx_ = ZSTD_createDCtx();
    if (dctx_ == nullptr) {
      return refuse(CaptureError::kOpen, "out of memory for the zstd decoder");
    }
    in_.assign(magic, n);
  } else {
    buf_.assign(magic, n);
  }
  if (!Fill(sizeof(gpuq_capture_header))) return refuse(error_, message_);
  if (zstd_ && Available() >= 4 &&
      IsZstd(std::string_view(buf_).substr(0, 4))) {
    // Compressed twice: nothing `record` writes.
    return refuse(CaptureError::kCorrupt,
                  fmt::format("capture {} is compressed twice", path_));
  }
  gpuq_capture_header header{};
  if (Available() < sizeof(header.magic) ||
      std::memcmp(buf_.data(), GPUQ_CAPTURE_MAGIC, sizeof(header.magic)) != 0) {
    if (zstd_ && Available() < sizeof(header.magic) && frame_pending_ != 0) {
      return refuse(CaptureError::kTruncated,
                    fmt::format("capture {} is truncated: its zstd stream ends "
                                "before the capture's header",
                                path_));
    }
    return refuse(
        CaptureError::kNotCapture,
        fmt::format("{} is not a gpuq capture (bad magic); captures are "
                    "written by `gpuq-agent record -o FILE`",
                    path_));
  }
  if (Available() < sizeof(header)) {
    if (zstd_ && frame_pending_ != 0) {
      return refuse(CaptureError::kTruncated,
                    fmt::format("capture {} is truncated: its zstd stream ends "
                                "before the capture's header",
                                path_));
    }
    return refuse(
        CaptureError::kTruncated,
        fmt::format("capture {} is truncated inside its header", path_));
  }
  std::memcpy(&header, buf_.data(), sizeof(header));
  if (header.abi_version != GPUQ_ABI_VERSION) {
    return refuse(
        CaptureError::kAbiVersion,
        fmt::format("capture {} has ABI version {}, this gpuq-agent reads "
                    "version {}: replay it with a matching gpuq-agent release",
                    path_, header.abi_version, GPUQ_ABI_VERSION));
  }
  if (header.header_size < sizeof(header) || header.header_size > kMaxRecord ||
      !Fill(header.header_size) || Available() < header.header_size) {
    return refuse(CaptureError::kCorrupt,
                  fmt::format("capture {} has a bad header size {}", path_,
                              header.header_size));
  }
  header_ = header;
  pos_ += header.header_size;
  offset_ = header.header_size;
  return true;
}

bool CaptureStream::Rewind() {
  if (fd_ >= 0 && lseek(fd_, 0, SEEK_SET) != 0) {
    return Fail(CaptureError::kOpen,
                fmt::format("cannot read capture {} again: {}", path_,
                            std::strerror(errno)));
  }
  input_read_ = 0;
  input_done_ = false;
  in_.clear();
  in_pos_ = 0;
  frame_pending_ = 0;
  buf_.clear();
  pos_ = 0;
  offset_ = 0;
  records_ = 0;
  error_ = CaptureError::kNone;
  message_.clear();
  if (dctx_ != nullptr) ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
  CaptureError kind = CaptureError::kNone;
  std::string error;
  if (!ReadHeader(&kind, &error)) return Fail(kind, error);
  return true;
}

bool CaptureStream::Next(Event* out) {
  if (error_ != CaptureError::kNone) return false;
  if (!Fill(kMaxRecord)) return false;
  if (Available() == 0) {
    if (zstd_ && frame_pending_ != 0) {
      // The frame was cut at a flush: every record before it is whole.
      return Fail(CaptureError::kTruncated,
                  fmt::format("capture {} is truncated: its zstd stream ends "
                              "after {} complete records (was the recorder "
                              "killed?); --allow-truncated replays those",
                              path_, records_));
    }
    return false;  // the end
  }
  const std::string_view rest(buf_.data() + pos_, Available());
  if (const char* why = AgainstMinor(header_.abi_minor, rest)) {
    return Fail(CaptureError::kCorrupt,
                fmt::format("capture {} (ABI {}.{}, this gpuq-agent reads up "
                            "to {}.{}) is corrupt at byte {} (record {}): {}",
                            path_, header_.abi_version, header_.abi_minor,
                            GPUQ_ABI_VERSION, GPUQ_ABI_MINOR, offset_,
                            records_ + 1, why));
  }
  size_t consumed = 0;
  const DecodeStatus status = Decode(rest.data(), rest.size(), out, &consumed);
  if (status == DecodeStatus::kTruncated) {
    return Fail(CaptureError::kTruncated,
                fmt::format("capture {} is truncated at byte {} after {} "
                            "complete records (was the recorder killed?); "
                            "--allow-truncated replays those",
                            path_, offset_, records_));
  }
  if (status != DecodeStatus::kOk) {
    return Fail(
        CaptureError::kCorrupt,
        fmt::format("capture {} is corrupt at byte {} (record {}): {}", path_,
                    offset_, records_ + 1, DecodeStatusName(status)));
  }
  pos_ += consumed;
  offset_ += consumed;
  ++records_;
  return true;
}

CaptureScan ScanCapture(CaptureStream* stream) {
  CaptureScan scan;
  scan.span = CaptureSpan::Of(stream->header());
  Event event;
  while (stream->Next(&event))
    scan.span.Take(Header(event).ts_ns, scan.records++);
  scan.error = stream->Error();
  scan.message = stream->Message();
  if (!stream->Rewind() && scan.error == CaptureError::kNone) {
    scan.error = stream->Error();
    scan.message = stream->Message();
  }
  return scan;
}

}  // namespace gpuq

// A capture read record by record: from a file or from memory, raw or zstd
// compressed, holding one read buffer (at most a record and a block of
// input) rather than the capture, so memory does not grow with the file.
// Every check ParseCapture() makes is made here as the records come: it is
// the one reader, which ParseCapture() and ReadCapture() drive to collect
// a whole capture.
#pragma once

#include <gpuq/abi.h>
#include <zstd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sources/capture.h"
#include "sources/event.h"

namespace gpuq {

/// Thread-safety: not thread-safe.
class CaptureStream {
 public:
  /// Opens the regular file `path` (its size now bounds what is read: a
  /// file that grows is read to that size) and reads its header. Null with
  /// *kind and *error (one line naming the file) when it cannot be opened or
  /// its header is refused.
  static std::unique_ptr<CaptureStream> OpenFile(const std::string& path,
                                                 CaptureError* kind,
                                                 std::string* error);
  /// The same over `data` (which must outlive the stream); `path` only
  /// names it in messages.
  static std::unique_ptr<CaptureStream> OpenMemory(std::string_view data,
                                                   const std::string& path,
                                                   CaptureError* kind,
                                                   std::string* error);
  ~CaptureStream();
  CaptureStream(const CaptureStream&) = delete;
  CaptureStream& operator=(const CaptureStream&) = delete;

  const gpuq_capture_header& header() const { return header_; }
  /// The next record into *out: true. False at the end: Error() is kNone at
  /// a clean end, else what stopped it, with Message() (kTruncated: every
  /// record before the cut was returned).
  bool Next(Event* out);
  CaptureError Error() const { return error_; }
  const std::string& Message() const { return message_; }
  /// Records returned so far.
  uint64_t Records() const { return records_; }
  /// Back to the first record (a second pass over what the first checked).
  bool Rewind();

 private:
  CaptureStream(std::string path, int fd, uint64_t file_size,
                std::string_view memory);
  bool ReadHeader(CaptureError* kind, std::string* error);
  /// Makes `want` bytes available from pos_ (fewer only at the end of the
  /// input); false on a read or decompression error (error_ set).
  bool Fill(size_t want);
  /// Up to `n` bytes of the input (the file or the memory) into `dst`.
  size_t ReadInput(char* dst, size_t n);
  bool Fail(CaptureError kind, std::string message);
  size_t Available() const { return buf_.size() - pos_; }

  std::string path_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::string_view memory_;
  uint64_t input_read_ = 0;  ///< bytes of the input consumed
  bool zstd_ = false;
  ZSTD_DCtx* dctx_ = nullptr;
  std::string in_;  ///< compressed input not yet decompressed
  size_t in_pos_ = 0;
  /// 0 once the last zstd frame ended (ZSTD_decompressStream's hint).
  size_t frame_pending_ = 0;
  bool input_done_ = false;
  std::string buf_;  ///< decoded bytes from pos_ on are unread
  size_t pos_ = 0;
  uint64_t offset_ = 0;  ///< decoded offset of buf_[pos_]
  gpuq_capture_header header_{};
  uint64_t records_ = 0;
  CaptureError error_ = CaptureError::kNone;
  std::string message_;
};

/// What a first pass over a capture found: how it ends, its records, and
/// when they happened (CaptureSpan); the stream is rewound to its first
/// record for the pass that uses them.
struct CaptureScan {
  CaptureError error = CaptureError::kNone;  ///< kNone or how it ended
  std::string message;                       ///< set with error
  uint64_t records = 0;  ///< complete records before any error
  CaptureSpan span;
};
CaptureScan ScanCapture(CaptureStream* stream);

}  // namespace gpuq

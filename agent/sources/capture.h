// Capture files: a gpuq_capture_header, then ABI records back to back
// (include/gpuq/abi.h). Written by `gpuq-agent record`, read by --replay.
#pragma once

#include <gpuq/abi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sources/event.h"

namespace gpuq {

class ZstdFileWriter;

/// How a capture file is stored: its bytes as they are, or one zstd frame
/// (what `record` writes; readers take either).
enum class CaptureCompression { kNone, kZstd };

/// Appends records to a capture file. Thread-safety: not thread-safe.
class CaptureWriter {
 public:
  /// Creates (truncates) `path` and writes the header. On failure returns
  /// nullptr and sets *error. `fixed_start_ns`, when non-zero, replaces both
  /// start clocks (generated captures are then reproducible byte for byte).
  static std::unique_ptr<CaptureWriter> Create(
      const std::string& path, std::string* error, uint64_t fixed_start_ns = 0,
      CaptureCompression compression = CaptureCompression::kNone);
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  /// Appends `event`; false on an I/O error. A record the reader would
  /// refuse (over its type's size limits) is skipped and counted instead.
  bool Write(const Event& event);
  /// Flushes buffered records to the file (compressed: as complete blocks, so
  /// a reader decodes every record written so far); false on an I/O error.
  bool Flush();
  /// Flushes and closes; false (with *error) if anything failed on the way.
  bool Close(std::string* error);
  uint64_t Records() const { return records_; }
  /// Whether a write, flush or close has failed (Close() says why).
  bool Failed() const { return error_ != 0; }
  /// Records left out because they would not read back.
  uint64_t Skipped() const { return skipped_; }

 private:
  CaptureWriter(std::FILE* file, std::string path, bool zstd);
  bool Put(std::string_view bytes);
  std::FILE* file_;
  std::string path_;
  std::unique_ptr<ZstdFileWriter> zstd_;
  uint64_t records_ = 0;
  uint64_t skipped_ = 0;
  int error_ = 0;  // errno of the first failed write, flush or close
  void Fail(int err);
};

/// A whole capture read into memory (tests, tools; the commands stream
/// theirs: sources/capture_stream.h).
struct Capture {
  gpuq_capture_header header{};
  std::vector<Event> events;
};

enum class CaptureError {
  kNone,
  kOpen,        ///< cannot open or read the file
  kNotCapture,  ///< bad magic: not a gpuq capture
  kAbiVersion,  ///< written by an incompatible ABI version
  kTruncated,   ///< ends inside a record (complete records kept)
  kCorrupt,     ///< a record fails validation
};

/// Reads `path`. On error returns the kind and sets *error to one line that
/// names the file, the byte offset and what to do. With kTruncated,
/// `out->events` holds every complete record before the cut.
CaptureError ReadCapture(const std::string& path, Capture* out,
                         std::string* error);

/// The same checks on a capture already in memory (`data`, the whole file,
/// compressed or not);
/// `path` only names it in *error. ReadCapture() reads the file and calls
/// this (the fuzzing harness of tests/fuzz calls it directly).
CaptureError ParseCapture(std::string_view data, const std::string& path,
                          Capture* out, std::string* error);

/// When a capture's records happened: the header's start on both clocks
/// (a record's ts_ns is CLOCK_MONOTONIC: its wall time is
/// start_realtime_ns + ts_ns - start_monotonic_ns), its first record's
/// ts_ns and the latest ts_ns of any record (agent-written records may be
/// stamped earlier than the one before).
struct CaptureSpan {
  uint64_t start_realtime_ns = 0;
  uint64_t start_monotonic_ns = 0;
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;

  /// The span of a capture with `header`, before its records are taken.
  static CaptureSpan Of(const gpuq_capture_header& header) {
    CaptureSpan span;
    span.start_realtime_ns = header.start_realtime_ns;
    span.start_monotonic_ns = header.start_monotonic_ns;
    return span;
  }
  /// Takes the time stamp of the record at `index` (file order).
  void Take(uint64_t ts_ns, uint64_t index) {
    if (index == 0) first_ns = ts_ns;
    last_ns = std::max(last_ns, ts_ns);
  }
};
CaptureSpan SpanOf(const Capture& capture);

}  // namespace gpuq

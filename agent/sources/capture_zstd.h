// Zstandard (libzstd) for capture files: `record` writes a capture as one
// zstd frame, flushed with every buffered write so that a recorder killed
// mid-way leaves every complete record readable; readers take a capture
// compressed or not.
#pragma once

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace gpuq {

/// True if `data` starts with a zstd frame's magic number.
bool IsZstd(std::string_view data);

enum class InflateResult {
  kComplete,   ///< every frame ended
  kTruncated,  ///< the input ends inside a frame: *out holds what it gave
  kTooLarge,   ///< more than `limit` bytes: *out holds the first `limit`
  kCorrupt,    ///< not valid zstd data (*error says what libzstd says)
};

/// Decompresses `data` (zstd frames back to back) into *out, at most `limit`
/// bytes. On kCorrupt, *error is libzstd's reason.
InflateResult Inflate(std::string_view data, uint64_t limit, std::string* out,
                      std::string* error);

/// A stream of bytes compressed into one zstd frame, written to `file`.
/// Thread-safety: not thread-safe.
class ZstdFileWriter {
 public:
  explicit ZstdFileWriter(std::FILE* file);
  ~ZstdFileWriter();
  ZstdFileWriter(const ZstdFileWriter&) = delete;
  ZstdFileWriter& operator=(const ZstdFileWriter&) = delete;

  /// Compresses `bytes`; false (errno set) if writing the output failed.
  bool Write(std::string_view bytes);
  /// Writes out everything given so far as complete blocks (a reader of the
  /// file decodes all of it), then fflush()es.
  bool Flush();
  /// Ends the frame (Flush() too).
  bool Finish();

 private:
  bool Run(std::string_view bytes, ZSTD_EndDirective mode);
  std::FILE* file_;
  ZSTD_CCtx* ctx_;
  std::string out_;
};

}  // namespace gpuq

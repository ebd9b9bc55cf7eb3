#include "sources/capture_zstd.h"

#include <cerrno>
#include <cstring>

namespace gpuq {

namespace {
// What `record` writes: zstd's default level, a fast one (captures are
// repetitive: the bundled one shrinks 5x, the 1M-record scale one 6x).
constexpr int kLevel = 3;
}  // namespace

bool IsZstd(std::string_view data) {
  static constexpr unsigned char kMagic[] = {0x28, 0xb5, 0x2f, 0xfd};
  return data.size() >= sizeof(kMagic) &&
         std::memcmp(data.data(), kMagic, sizeof(kMagic)) == 0;
}

InflateResult Inflate(std::string_view data, uint64_t limit, std::string* out,
                      std::string* error) {
  out->clear();
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  if (ctx == nullptr) {
    *error = "out of memory for the zstd decoder";
    return InflateResult::kCorrupt;
  }
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  size_t pending = 0;  // 0: the last frame ended
  InflateResult result = InflateResult::kComplete;
  for (;;) {
    ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
    const size_t read_before = in.pos;
    const size_t hint = ZSTD_decompressStream(ctx, &o, &in);
    if (ZSTD_isError(hint)) {
      *error = ZSTD_getErrorName(hint);
      result = InflateResult::kCorrupt;
      break;
    }
    // A call that read and wrote nothing (the last frame drained) would
    // answer for a next frame that is not there: keep the last answer.
    if (o.pos == 0 && in.pos == read_before) break;
    pending = hint;
    if (out->size() + o.pos > limit) {
      out->append(chunk.data(), limit - out->size());
      result = InflateResult::kTooLarge;
      break;
    }
    out->append(chunk.data(), o.pos);
    // An output buffer left unfilled with the input all read: nothing more
    // is held back in the decoder.
    if (in.pos == in.size && o.pos < o.size) break;
  }
  ZSTD_freeDCtx(ctx);
  if (result == InflateResult::kComplete && pending != 0) {
    result = InflateResult::kTruncated;
  }
  return result;
}

ZstdFileWriter::ZstdFileWriter(std::FILE* file)
    : file_(file), ctx_(ZSTD_createCCtx()), out_(ZSTD_CStreamOutSize(), '\0') {
  if (ctx_ != nullptr) {
    ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, kLevel);
    ZSTD_CCtx_setParameter(ctx_, ZSTD_c_checksumFlag, 1);
  }
}

ZstdFileWriter::~ZstdFileWriter() { ZSTD_freeCCtx(ctx_); }

bool ZstdFileWriter::Run(std::string_view bytes, ZSTD_EndDirective mode) {
  if (ctx_ == nullptr) {
    errno = ENOMEM;
    return false;
  }
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  for (;;) {
    ZSTD_outBuffer o{out_.data(), out_.size(), 0};
    const size_t left = ZSTD_compressStream2(ctx_, &o, &in, mode);
    if (ZSTD_isError(left)) {
      errno = EIO;
      return false;
    }
    if (o.pos > 0 && std::fwrite(out_.data(), o.pos, 1, file_) != 1) {
      return false;
    }
    const bool done = mode == ZSTD_e_continue ? in.pos == in.size : left == 0;
    if (done) return true;
  }
}

bool ZstdFileWriter::Write(std::string_view bytes) {
  return Run(bytes, ZSTD_e_continue);
}

bool ZstdFileWriter::Flush() {
  return Run({}, ZSTD_e_flush) && std::fflush(file_) == 0;
}

bool ZstdFileWriter::Finish() {
  return Run({}, ZSTD_e_end) && std::fflush(file_) == 0;
}

}  // namespace gpuq

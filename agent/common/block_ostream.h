// An ostream that gathers what is written into blocks of its own and hands
// each block to another stream in one write. The report's JSON and Perfetto
// writers emit a member or a number at a time; std::cout, synced with
// stdio, takes each of those as a locked fwrite of a few bytes.
#pragma once

#include <ostream>
#include <streambuf>
#include <vector>

namespace gpuq {

class BlockOstream : private std::streambuf, public std::ostream {
 public:
  explicit BlockOstream(std::ostream& sink, size_t block_bytes = 1 << 20)
      : std::ostream(static_cast<std::streambuf*>(this)),
        sink_(sink),
        block_(block_bytes) {
    setp(block_.data(), block_.data() + block_.size());
  }
  ~BlockOstream() override { Drain(); }
  BlockOstream(const BlockOstream&) = delete;
  BlockOstream& operator=(const BlockOstream&) = delete;

 private:
  // Hands the block to the sink; false (and this stream failed) where the
  // sink failed.
  bool Drain() {
    const std::ptrdiff_t n = pptr() - pbase();
    if (n > 0) sink_.write(pbase(), n);
    setp(block_.data(), block_.data() + block_.size());
    return static_cast<bool>(sink_);
  }
  using Traits = std::streambuf::traits_type;
  std::streambuf::int_type overflow(std::streambuf::int_type c) override {
    if (!Drain()) return Traits::eof();
    if (!Traits::eq_int_type(c, Traits::eof())) {
      *pptr() = Traits::to_char_type(c);
      pbump(1);
    }
    return Traits::not_eof(c);
  }
  int sync() override { return Drain() && sink_.flush() ? 0 : -1; }

  std::ostream& sink_;
  std::vector<char> block_;
};

}  // namespace gpuq

// BlockOstream: what is written reaches the sink whole and in order, in
// blocks, and a sink that fails makes the stream fail.
#include "common/block_ostream.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace gpuq::block_ostream_test {
namespace {

// Counts the writes that reach it.
class CountingBuf : public std::stringbuf {
 public:
  int writes = 0;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    ++writes;
    return std::stringbuf::xsputn(s, n);
  }
};

TEST(BlockOstreamTest, EverythingArrivesInOrderInBlocks) {
  CountingBuf buf;
  std::ostream sink(&buf);
  std::string want;
  {
    BlockOstream out(sink, 64);
    for (int i = 0; i < 1000; ++i) {
      out << i << ',';
      want += std::to_string(i) + ",";
    }
    out.put('!');
    want += "!";
  }  // the last block at destruction
  EXPECT_EQ(buf.str(), want);
  // 3,891 bytes in blocks of 64: 61 writes, not one per insertion.
  EXPECT_EQ(buf.writes, static_cast<int>((want.size() + 63) / 64));
}

TEST(BlockOstreamTest, FlushHandsOverWhatIsBuffered) {
  std::ostringstream sink;
  BlockOstream out(sink);
  out << "abc";
  EXPECT_EQ(sink.str(), "");
  out.flush();
  EXPECT_EQ(sink.str(), "abc");
  EXPECT_TRUE(out);
}

TEST(BlockOstreamTest, AFailedSinkFailsTheStream) {
  std::ostringstream sink;
  sink.setstate(std::ios::badbit);
  BlockOstream out(sink, 8);
  out << "more than eight bytes";
  EXPECT_FALSE(out);
  out.flush();
  EXPECT_FALSE(out);
}

}  // namespace
}  // namespace gpuq::block_ostream_test

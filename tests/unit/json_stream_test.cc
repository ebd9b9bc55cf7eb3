// JsonStream (report/json_stream.h): the JSON and Perfetto writers' pieces
// must be what nlohmann's dump() writes for the same values, so a report
// reads the same whether it was written piece by piece or as one document.
#include "report/json_stream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace gpuq::report {
namespace {

std::string Dumped(const JsonStream::Json& value) {
  return value.dump(-1, ' ', false, JsonStream::Json::error_handler_t::replace);
}

std::string Streamed(const std::string& s) {
  std::ostringstream out;
  {
    JsonStream json(out);
    json.String(s);
  }
  return out.str();
}

// Plain printable ASCII, each character the serializer escapes, DEL (not
// escaped without ensure_ascii), valid UTF-8, and invalid bytes (U+FFFD).
const std::vector<std::string> kStrings = {
    "",
    "compute queue 3",
    "/kubepods/pod-1/cri-containerd-0123",
    "say \"hi\"",
    "C:\\path",
    "tab\there",
    std::string("nul\0byte", 8),
    "line\nbreak\r",
    "\x1f\x01",
    "del\x7f",
    "gr\xc3\xbc\xc3\x9f e \xe2\x82\xac",
    "bad \xff byte",
    "cut \xe2\x82",
};

TEST(JsonStreamTest, StringsAreWrittenAsTheSerializerWritesThem) {
  for (const std::string& s : kStrings) {
    EXPECT_EQ(Streamed(s), Dumped(JsonStream::Json(s))) << s;
    EXPECT_EQ(JsonStream::Quoted(s), Dumped(JsonStream::Json(s))) << s;
  }
}

TEST(JsonStreamTest, NumbersAndIntegersAreWrittenAsTheSerializerWritesThem) {
  for (const double v : {0.0,
                         -0.0,
                         1.0,
                         0.1,
                         2.5e-7,
                         1e21,
                         123456789.125,
                         -3.75,
                         1.0 / 3.0,
                         12.0,
                         -3.0,
                         2525.0,
                         123456789012345.0,
                         999999999999999.0,
                         1e15,
                         -999999999999999.0,
                         -1e15,
                         1e16,
                         4503599627370496.0,
                         1234567.891,
                         5e-324,
                         -1.7976931348623157e308,
                         std::nan(""),
                         std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()}) {
    std::ostringstream out;
    {
      JsonStream json(out);
      json.Number(v);
    }
    EXPECT_EQ(out.str(), Dumped(JsonStream::Json(v))) << v;
  }
  for (const int64_t v :
       {int64_t{0}, int64_t{-7}, int64_t{1} << 40, INT64_MIN, INT64_MAX}) {
    std::ostringstream out;
    {
      JsonStream json(out);
      json.Int(v);
    }
    EXPECT_EQ(out.str(), Dumped(JsonStream::Json(v))) << v;
  }
}

TEST(JsonStreamTest, PrettyValuesKeepTheirIndent) {
  const JsonStream::Json value = {
      {"b", {1, 2}}, {"a", JsonStream::Json::object()}, {"c", "x\"y"}};
  std::ostringstream out;
  {
    JsonStream json(out);
    json.Value(value, true, 2, 4);
  }
  std::string want;
  nlohmann::detail::serializer<JsonStream::Json> s(
      nlohmann::detail::output_adapter<char>(want), ' ',
      JsonStream::Json::error_handler_t::replace);
  s.dump(value, true, false, 2, 4);
  EXPECT_EQ(out.str(), want);
}

TEST(JsonStreamTest, EverythingWrittenReachesTheStreamInOrder) {
  // Well past the buffer's flush size, with a piece straddling it.
  std::ostringstream out;
  std::string want;
  {
    JsonStream json(out);
    for (int i = 0; i < 50000; ++i) {
      json << '[';
      json.Int(i) << ',';
      json.String("queue") << ']';
      want += "[" + std::to_string(i) + ",\"queue\"]";
    }
    json.Spaces(3);
    want += "   ";
    json.Flush();
    EXPECT_EQ(out.str(), want);
    json << "end";
  }
  EXPECT_EQ(out.str(), want + "end");
}

// Records the size of each write that reaches it; fails them all when
// `broken`.
class WriteSizes : public std::stringbuf {
 public:
  std::vector<std::streamsize> sizes;
  bool broken = false;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (broken) return 0;
    sizes.push_back(n);
    return std::stringbuf::xsputn(s, n);
  }
};

TEST(JsonStreamTest, TheSinkGetsFullBlocksNotOnePerPiece) {
  WriteSizes buf;
  std::ostream sink(&buf);
  std::string want;
  {
    JsonStream json(sink);
    for (int i = 0; i < 100000; ++i) {
      json.Int(i) << ',';
      want += std::to_string(i) + ",";
    }
  }  // the rest at destruction
  EXPECT_EQ(buf.str(), want);
  ASSERT_GE(buf.sizes.size(), 2u);
  for (size_t k = 0; k + 1 < buf.sizes.size(); ++k) {
    EXPECT_EQ(buf.sizes[k], 1 << 16) << "write " << k;
  }
}

TEST(JsonStreamTest, AFailedWriteFailsTheSink) {
  WriteSizes buf;
  buf.broken = true;
  std::ostream sink(&buf);
  {
    JsonStream json(sink);
    json.String("queue");
    EXPECT_TRUE(sink) << "nothing written yet";
    json.Flush();
  }
  EXPECT_FALSE(sink) << "the caller (report's) sees the failure";
}

}  // namespace
}  // namespace gpuq::report

// JsonStream (report/json_stream.h): the JSON and Perfetto writers' pieces
// must be what nlohmann's dump() writes for the same values, so a report
// reads the same whether it was written piece by piece or as one document.
#include "report/json_stream.h"

#include <gtest/gtest.h>

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
  for (const double v :
       {0.0, -0.0, 1.0, 0.1, 2.5e-7, 1e21, 123456789.125, -3.75, 1.0 / 3.0}) {
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

}  // namespace
}  // namespace gpuq::report

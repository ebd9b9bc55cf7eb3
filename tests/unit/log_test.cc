// The leveled logger (common/log.h): levels, the repeat limit (with an
// explicit clock, so no test waits) and once-per-change reporting.
#include "common/log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "model/pipeline.h"

namespace gpuq {
namespace {

using std::chrono::seconds;

struct Captured {
  std::vector<std::string> lines;
  Logger::Sink Sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

TEST(LogTest, WritesEnabledLevelsOnly) {
  Captured out;
  Logger log(out.Sink());
  log.SetLevel(LogLevel::kWarn);
  log.Write(LogLevel::kError, "e");
  log.Write(LogLevel::kWarn, "w");
  log.Write(LogLevel::kInfo, "i");
  log.Write(LogLevel::kDebug, "d");
  EXPECT_EQ(out.lines, (std::vector<std::string>{"gpuq-agent: error: e",
                                                 "gpuq-agent: warn: w"}));
  EXPECT_FALSE(log.Enabled(LogLevel::kDebug));
  log.SetLevel(LogLevel::kDebug);
  EXPECT_TRUE(log.Enabled(LogLevel::kDebug));
}

TEST(LogTest, RepeatsAreLimitedAndCounted) {
  Captured out;
  Logger log(out.Sink(), seconds(10));
  const Logger::Clock::time_point t0{};
  log.Write(LogLevel::kWarn, "same", t0);
  log.Write(LogLevel::kWarn, "same", t0 + seconds(1));
  log.Write(LogLevel::kWarn, "same", t0 + seconds(9));
  log.Write(LogLevel::kWarn, "other", t0 + seconds(9));
  log.Write(LogLevel::kWarn, "same", t0 + seconds(10));
  log.Write(LogLevel::kWarn, "same", t0 + seconds(20));
  EXPECT_EQ(out.lines,
            (std::vector<std::string>{
                "gpuq-agent: warn: same", "gpuq-agent: warn: other",
                "gpuq-agent: warn: same (2 more since the last time)",
                "gpuq-agent: warn: same"}));
}

TEST(LogTest, WriteOnChangeWritesEachDifferentErrorOnce) {
  Captured out;
  Logger log(out.Sink(), seconds(0));
  log.WriteOnChange(LogLevel::kWarn, "runtime docker", "refused");
  log.WriteOnChange(LogLevel::kWarn, "runtime docker", "refused");
  log.WriteOnChange(LogLevel::kWarn, "runtime oci", "refused");
  log.WriteOnChange(LogLevel::kWarn, "runtime docker", "timed out");
  log.WriteOnChange(LogLevel::kWarn, "runtime docker", "");  // it answered
  log.WriteOnChange(LogLevel::kWarn, "runtime docker", "timed out");
  EXPECT_EQ(out.lines, (std::vector<std::string>{
                           "gpuq-agent: warn: runtime docker: refused",
                           "gpuq-agent: warn: runtime oci: refused",
                           "gpuq-agent: warn: runtime docker: timed out",
                           "gpuq-agent: warn: runtime docker: timed out"}));
}

TEST(LogTest, OneLineEscapesControlBytesOnly) {
  EXPECT_EQ(OneLine("plain text: 'key' \xc3\xa9"),
            "plain text: 'key' \xc3\xa9");
  EXPECT_EQ(OneLine(std::string("a\nb\r\x1b[31mc\x7f\0d", 13)),
            "a\\x0ab\\x0d\\x1b[31mc\\x7f\\x00d");
  EXPECT_EQ(OneLine(""), "");
}

TEST(LogTest, LinesCarryNoControlBytesOfTheirMessage) {
  Captured out;
  Logger logger(out.Sink());
  logger.Write(LogLevel::kWarn, "line one\nline two");
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0], "gpuq-agent: warn: line one\\x0aline two");
}

TEST(LogTest, LevelNamesRoundTrip) {
  for (LogLevel level :
       {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug}) {
    LogLevel parsed = LogLevel::kError;
    ASSERT_TRUE(ParseLogLevel(LogLevelName(level), &parsed));
    EXPECT_EQ(parsed, level);
  }
  LogLevel unchanged = LogLevel::kInfo;
  EXPECT_FALSE(ParseLogLevel("verbose", &unchanged));
  EXPECT_EQ(unchanged, LogLevel::kInfo);
}

// 2026-12-01T20:00:00.123Z, for lines whose stamp is known.
std::chrono::system_clock::time_point FixedWallTime() {
  return std::chrono::system_clock::time_point(
      std::chrono::milliseconds(1796155200123));
}

TEST(LogTest, LogfmtLinesCarryTsLevelAndMsgQuotedAsGoLogfmtQuotes) {
  Captured out;
  Logger log(out.Sink(), seconds(0));
  log.SetWallClock(FixedWallTime);
  log.SetFormat(LogFormat::kLogfmt);
  log.Write(LogLevel::kWarn, "a \"quoted\" C:\\path\nnext");
  log.Write(LogLevel::kInfo, "ok");
  log.Write(LogLevel::kError, "");
  log.Write(LogLevel::kInfo, "a=b");
  log.Write(LogLevel::kInfo, "caf\xc3\xa9 \xff");
  EXPECT_EQ(
      out.lines,
      (std::vector<std::string>{
          // The newline is OneLine()'s \x0a, whose backslash is escaped.
          R"(ts=2026-12-01T20:00:00.123Z level=warn msg="a \"quoted\" C:\\path\\x0anext")",
          "ts=2026-12-01T20:00:00.123Z level=info msg=ok",
          R"(ts=2026-12-01T20:00:00.123Z level=error msg="")",
          R"(ts=2026-12-01T20:00:00.123Z level=info msg="a=b")",
          "ts=2026-12-01T20:00:00.123Z level=info msg=\"caf\xc3\xa9 "
          "\\ufffd\""}));
}

TEST(LogTest, JsonLinesAreOneObjectWithTsLevelAndMsg) {
  Captured out;
  Logger log(out.Sink(), seconds(0));
  log.SetWallClock(FixedWallTime);
  log.SetFormat(LogFormat::kJson);
  log.Write(LogLevel::kDebug, "x");  // below the level: nothing
  log.Write(LogLevel::kWarn, "say \"hi\"\\ \x1b[2J \xc3\x28");
  EXPECT_EQ(
      out.lines,
      (std::vector<std::string>{
          R"({"ts":"2026-12-01T20:00:00.123Z","level":"warn","msg":"say \"hi\"\\ \\x1b[2J \ufffd("})"}));
}

TEST(LogTest, TheRepeatLimitIsOnTheMessageNotTheTimestamp) {
  Captured out;
  Logger log(out.Sink(), seconds(10));
  log.SetFormat(LogFormat::kLogfmt);
  auto wall = FixedWallTime();
  log.SetWallClock([&wall] {
    wall += std::chrono::milliseconds(1);  // every line a new stamp
    return wall;
  });
  const Logger::Clock::time_point t0{};
  log.Write(LogLevel::kWarn, "same", t0);
  log.Write(LogLevel::kWarn, "same", t0 + seconds(1));
  log.Write(LogLevel::kError, "same", t0 + seconds(1));  // another level
  log.Write(LogLevel::kWarn, "same", t0 + seconds(10));
  ASSERT_EQ(out.lines.size(), 3u);
  EXPECT_NE(out.lines[2].find(R"x(msg="same (1 more since the last time)")x"),
            std::string::npos)
      << out.lines[2];
}

TEST(LogTest, WriteAlwaysIgnoresTheLevelAndTheRepeatLimit) {
  Captured out;
  Logger log(out.Sink(), seconds(10));
  log.SetWallClock(FixedWallTime);
  log.SetLevel(LogLevel::kError);
  log.WriteAlways(LogLevel::kInfo, "serving /metrics on port 1");
  log.WriteAlways(LogLevel::kInfo, "serving /metrics on port 1");
  log.SetFormat(LogFormat::kLogfmt);
  log.WriteAlways(LogLevel::kInfo, "serving /metrics on port 1");
  EXPECT_EQ(
      out.lines,
      (std::vector<std::string>{
          "gpuq-agent: serving /metrics on port 1",
          "gpuq-agent: serving /metrics on port 1",
          R"(ts=2026-12-01T20:00:00.123Z level=info msg="serving /metrics on port 1")"}));
}

TEST(LogTest, FormatNamesAndTimestamps) {
  LogFormat format = LogFormat::kPlain;
  ASSERT_TRUE(ParseLogFormat("json", &format));
  EXPECT_EQ(format, LogFormat::kJson);
  ASSERT_TRUE(ParseLogFormat("logfmt", &format));
  EXPECT_EQ(format, LogFormat::kLogfmt);
  // The plain format is the logger's start, not a choice of --log.format.
  EXPECT_FALSE(ParseLogFormat("plain", &format));
  EXPECT_FALSE(ParseLogFormat("text", &format));
  EXPECT_EQ(format, LogFormat::kLogfmt);
  EXPECT_EQ(UtcTimestamp(FixedWallTime()), "2026-12-01T20:00:00.123Z");
  EXPECT_EQ(UtcTimestamp(std::chrono::system_clock::time_point(
                std::chrono::milliseconds(-1))),
            "1969-12-31T23:59:59.999Z");
}

TEST(LogTest, ReconciliationErrorIsWrittenOncePerChange) {
  Captured out;
  Log().SetSink(out.Sink());
  PipelineOptions options;
  options.paths.sysfs = "/nonexistent-gpuq-sysfs";
  Pipeline pipeline(options, nullptr);
  pipeline.ReconcileNow();
  pipeline.ReconcileNow();
  Log().SetSink([](const std::string&) {});  // this process's later tests
  EXPECT_EQ(pipeline.TakeSnapshot().reconcile.errors, 2u);
  ASSERT_EQ(out.lines.size(), 1u);
  EXPECT_EQ(out.lines[0].rfind("gpuq-agent: warn: reconciliation: ", 0), 0u)
      << out.lines[0];
}

}  // namespace
}  // namespace gpuq

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

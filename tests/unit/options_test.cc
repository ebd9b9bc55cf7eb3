// The flags (cli/options.h): durations, --speed and the choice flags as
// CLI11's transformers read them, -o as each command's own, report's
// labels, and what is refused (exit 2, one line; a file a flag names that
// cannot be read: exit 1) instead of guessed.
#include "cli/options.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "log_capture.h"

namespace gpuq::options_test {
namespace {

using std::chrono::milliseconds;

// ParseOptions over "gpuq-agent" and `args`; the exit code it asks for, or
// nullopt when the command should run.
std::optional<int> Parse(const std::vector<std::string>& args, Options* out) {
  std::vector<std::string> words{"gpuq-agent"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return ParseOptions(static_cast<int>(argv.size()), argv.data(), out);
}

milliseconds Interval(const std::string& text) {
  Options o;
  EXPECT_EQ(Parse({"--once", "--interval", text}, &o), std::nullopt) << text;
  return o.interval;
}

TEST(OptionsTest, DurationsTakeAUnitOrMeanSeconds) {
  EXPECT_EQ(Interval("500ms"), milliseconds(500));
  EXPECT_EQ(Interval("1.5s"), milliseconds(1500));
  EXPECT_EQ(Interval("2m"), milliseconds(120000));
  EXPECT_EQ(Interval("10"), milliseconds(10000));
  EXPECT_EQ(Interval("0.25"), milliseconds(250));
  EXPECT_EQ(Interval("0"), milliseconds(0));
}

TEST(OptionsTest, DefaultsAreTheDocumentedOnes) {
  Options o;
  ASSERT_EQ(Parse({}, &o), std::nullopt);
  EXPECT_EQ(o.interval, milliseconds(1000));
  EXPECT_EQ(o.reconcile_interval, milliseconds(10000));
  EXPECT_EQ(o.container_grace, milliseconds(300000));
  EXPECT_EQ(o.runtime_timeout, milliseconds(2000));
  EXPECT_EQ(o.sample_interval, milliseconds(1000));
  EXPECT_EQ(o.duration, std::nullopt);
  EXPECT_EQ(o.replay_speed, 1.0);
}

TEST(OptionsTest, WhatIsNotADurationIsRefused) {
  for (const char* bad : {"soon", "s", "ms", "-1s", "1d", "1e400", "nan", "inf",
                          "", "1 0s", "2e9"}) {
    Options o;
    EXPECT_EQ(Parse({"--once", "--interval", bad}, &o), 2) << bad;
  }
}

TEST(OptionsTest, EveryDurationFlagReadsUnits) {
  Options o;
  ASSERT_EQ(Parse({"--reconcile-interval", "250ms", "--container-grace", "1m",
                   "--runtime.timeout", "3", "--sample-interval", "20ms"},
                  &o),
            std::nullopt);
  EXPECT_EQ(o.reconcile_interval, milliseconds(250));
  EXPECT_EQ(o.container_grace, milliseconds(60000));
  EXPECT_EQ(o.runtime_timeout, milliseconds(3000));
  EXPECT_EQ(o.sample_interval, milliseconds(20));
  Options r;
  ASSERT_EQ(Parse({"record", "-o", "/tmp/x.gpuq", "--duration", "90s"}, &r),
            std::nullopt);
  EXPECT_EQ(r.duration, milliseconds(90000));
  Options d;
  ASSERT_EQ(Parse({"--recording.dir", "/tmp/recs", "--recording.retention",
                   "2h", "--recording.max-bytes", "64MiB"},
                  &d),
            std::nullopt);
  EXPECT_EQ(d.recording_retention, std::chrono::seconds(7200));
  EXPECT_EQ(d.recording_max_bytes, 64u << 20);
}

TEST(OptionsTest, RecordingFlagsApplyWhereTheyAct) {
  Options o;
  // The recording API is the daemon's: elsewhere it would do nothing.
  EXPECT_EQ(Parse({"--once", "--recording.dir", "/tmp/recs"}, &o), 2);
  // record --from records on another agent: nothing here may act.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"record", "-o", "/tmp/x", "--from", "http://a:9464", "--replay",
            "/tmp/c"},
           {"record", "-o", "/tmp/x", "--from", "http://a:9464", "--compress",
            "none"},
           {"record", "-o", "/tmp/x", "--from", "http://a:9464", "--", "true"},
           {"record", "-o", "/tmp/x", "--from", "a:9464"}}) {
    Options r;
    EXPECT_EQ(Parse(args, &r), 2) << args.back();
  }
  Options ok;
  ASSERT_EQ(Parse({"record", "-o", "/tmp/x", "--from", "https://u:p@node:9464",
                   "--duration", "30s"},
                  &ok),
            std::nullopt);
  EXPECT_EQ(ok.record_from, "https://u:p@node:9464");
}

TEST(OptionsTest, SpeedIsANumberOrMax) {
  Options o;
  ASSERT_EQ(Parse({"top", "--speed", "max"}, &o), std::nullopt);
  EXPECT_EQ(o.replay_speed, 0.0);
  ASSERT_EQ(Parse({"top", "--speed", "2.5"}, &o), std::nullopt);
  EXPECT_EQ(o.replay_speed, 2.5);
  for (const char* bad : {"fast", "-1", "nan", "inf"}) {
    Options r;
    EXPECT_EQ(Parse({"top", "--speed", bad}, &r), 2) << bad;
  }
}

TEST(OptionsTest, ListenAddressNeedsAPort) {
  for (const char* good : {"0.0.0.0:9464", ":0", "[::1]:65535"}) {
    Options o;
    EXPECT_EQ(Parse({"--web.listen-address", good}, &o), std::nullopt) << good;
  }
  for (const char* bad : {"localhost", "host:", "host:65536", "host:+80",
                          "host:80x", "host:-1"}) {
    Options o;
    EXPECT_EQ(Parse({"--web.listen-address", bad}, &o), 2) << bad;
  }
}

// Each choice flag reads its words into its enum.
TEST(OptionsTest, ChoicesAreReadIntoTheirEnums) {
  Options o;
  ASSERT_EQ(Parse({"--once", "--output", "wide", "--probe-tier", "args",
                   "--doorbells", "uprobe", "--log.level", "debug",
                   "--log.format", "json"},
                  &o),
            std::nullopt);
  EXPECT_EQ(o.output, OnceFormat::kWide);
  EXPECT_EQ(o.probe_tier, TierRequest::kArgs);
  EXPECT_EQ(o.doorbells, DoorbellMode::kUprobe);
  EXPECT_EQ(o.log_level, LogLevel::kDebug);
  EXPECT_EQ(o.log_format, LogFormat::kJson);
  Options d;
  ASSERT_EQ(Parse({}, &d), std::nullopt);
  EXPECT_EQ(d.output, OnceFormat::kTable);
  EXPECT_EQ(d.probe_tier, TierRequest::kAuto);
  EXPECT_EQ(d.doorbells, DoorbellMode::kOff);
  EXPECT_EQ(d.log_level, LogLevel::kInfo);
  EXPECT_EQ(d.report_format, report::ReportFormat::kText);
}

// A refused word is named with the flag's own choices, and an enum's
// integer (how CLI11 reads enums) is no word.
TEST(OptionsTest, ARefusedChoiceListsThatFlagsChoices) {
  const struct {
    std::vector<std::string> args;
    const char* said;
  } cases[] = {
      {{"--once", "-o", "html"}, "html not in {table,wide,json,prometheus}"},
      {{"report", "x.gpuqcap", "-o", "yaml"},
       "yaml not in {text,markdown,json,html,perfetto}"},
      {{"--probe-tier", "btf"}, "btf not in {auto,args,tracepoint}"},
      {{"--doorbells", "on"}, "on not in {off,uprobe}"},
      {{"--log.level", "loud"}, "loud not in {error,warn,info,debug}"},
      {{"--log.format", "text"}, "text not in {logfmt,json}"},
      {{"--once", "-o", "1"}, "1 not in {table,wide,json,prometheus}"},
      {{"report", "x.gpuqcap", "-o", "4"},
       "4 not in {text,markdown,json,html,perfetto}"},
  };
  for (const auto& c : cases) {
    LogCapture log;
    Options o;
    EXPECT_EQ(Parse(c.args, &o), 2) << c.said;
    EXPECT_TRUE(log.Said(c.said)) << c.said;
  }
}

// -o is each command's own --output: report's format after `report`,
// record's capture file; refused where it would reach --once's unused.
TEST(OptionsTest, OIsEachCommandsOwnOutput) {
  Options r;
  ASSERT_EQ(Parse({"report", "x.gpuqcap", "-o", "json"}, &r), std::nullopt);
  EXPECT_EQ(r.command, Command::kReport);
  EXPECT_EQ(r.report_format, report::ReportFormat::kJson);
  EXPECT_EQ(r.output, OnceFormat::kTable);
  Options h;
  ASSERT_EQ(Parse({"report", "--output", "html", "x.gpuqcap"}, &h),
            std::nullopt);
  EXPECT_EQ(h.report_format, report::ReportFormat::kHtml);
  for (const char* flag : {"-o", "--output", "--output-file"}) {
    Options rec;
    ASSERT_EQ(Parse({"record", flag, "/tmp/x.gpuqcap"}, &rec), std::nullopt)
        << flag;
    EXPECT_EQ(rec.record_path, "/tmp/x.gpuqcap") << flag;
  }
  const struct {
    std::vector<std::string> args;
    const char* said;
  } refused[] = {
      {{"-o", "json", "report", "x.gpuqcap"}, "report --output FORMAT"},
      {{"-o", "json", "record", "-o", "x"}, "record -o FILE"},
      {{"check", "-o", "json"}, "does not apply to `check`"},
      {{"top", "-o", "json"}, "does not apply to `top`"},
      {{"-o", "json"}, "add --once"},
  };
  for (const auto& c : refused) {
    LogCapture log;
    Options o;
    EXPECT_EQ(Parse(c.args, &o), 2) << c.said;
    EXPECT_TRUE(log.Said(c.said)) << c.said;
  }
}

// report's captures: LABEL=PATH, unless the whole argument is a file.
TEST(OptionsTest, ReportCapturesTakeLabels) {
  Options o;
  ASSERT_EQ(Parse({"report", "before=a/run.gpuqcap", "b/run.gpuqcap",
                   "dir/x=y.gpuqcap"},
                  &o),
            std::nullopt);
  ASSERT_EQ(o.report_captures.size(), 3u);
  EXPECT_EQ(o.report_captures[0].label, "before");
  EXPECT_EQ(o.report_captures[0].path, "a/run.gpuqcap");
  EXPECT_EQ(o.report_captures[1].label, "");
  EXPECT_EQ(o.report_captures[1].path, "b/run.gpuqcap");
  // A '/' before the '=': a path.
  EXPECT_EQ(o.report_captures[2].label, "");
  EXPECT_EQ(o.report_captures[2].path, "dir/x=y.gpuqcap");

  // A file whose name holds a '=' (and no '/' before it) is a path.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(::testing::TempDir().c_str()), 0);
  std::FILE* f = std::fopen("lr=0.1.gpuqcap", "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  Options e;
  const auto parsed = Parse({"report", "lr=0.1.gpuqcap", "lr=x.gpuqcap"}, &e);
  std::remove("lr=0.1.gpuqcap");
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_EQ(parsed, std::nullopt);
  EXPECT_EQ(e.report_captures[0].label, "");
  EXPECT_EQ(e.report_captures[0].path, "lr=0.1.gpuqcap");
  EXPECT_EQ(e.report_captures[1].label, "lr");
  EXPECT_EQ(e.report_captures[1].path, "x.gpuqcap");

  Options twice;
  EXPECT_EQ(Parse({"report", "x=a.gpuqcap", "x=b.gpuqcap"}, &twice), 2);
  Options empty;
  EXPECT_EQ(Parse({"report", "x="}, &empty), 2);
}

// A file a flag names that cannot be read: exit 1, as a capture that
// cannot be read (captures are checked by their reader, when read).
TEST(OptionsTest, AnUnreadableFileExitsOne) {
  const std::string missing = ::testing::TempDir() + "gpuq-missing";
  Options o;
  EXPECT_EQ(Parse({"--btf", missing}, &o), 1);
  Options w;
  EXPECT_EQ(Parse({"--web.config.file", missing}, &w), 1);
  Options h;
  EXPECT_EQ(Parse({"--doorbells=uprobe", "--hsa-runtime", missing}, &h), 1);
  Options d;
  EXPECT_EQ(Parse({"--btf", ::testing::TempDir()}, &d), 1);
  Options r;
  EXPECT_EQ(Parse({"--once", "--replay", missing}, &r), std::nullopt);
  EXPECT_EQ(r.replay, missing);
}

}  // namespace
}  // namespace gpuq::options_test

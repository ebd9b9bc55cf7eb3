// The flags (cli/options.h): durations and --speed as CLI11's transformers
// read them, and what is refused (exit 2, one line) instead of guessed.
#include "cli/options.h"

#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace gpuq {
namespace {

using std::chrono::milliseconds;

// ParseOptions over "gpuq-agent" and `args`; the exit code it asks for, or
// nullopt when the command should run.
std::optional<int> Parse(std::initializer_list<std::string> args,
                         Options* out) {
  std::vector<std::string> words{"gpuq-agent"};
  words.insert(words.end(), args);
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
  for (const char* bad : {"soon", "s", "ms", "-1s", "1h", "1e400", "nan", "inf",
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

}  // namespace
}  // namespace gpuq

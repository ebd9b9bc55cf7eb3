// The recording API's answers, without a socket: start, one at a time,
// list, stop, download, delete, bad parameters, the size limit and
// retention. The HTTP side (auth, streaming, a client that leaves, a full
// disk) is tested with curl against the real binary in
// tests/e2e/recording_api_test.sh.
#include "export/recording_api.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "scenario.h"
#include "sources/capture.h"
#include "test_support.h"

namespace gpuq {
namespace {

using Json = nlohmann::json;

PipelineOptions ApiPipelineOptions() {
  PipelineOptions options;
  options.use_sysfs = false;
  return options;
}

// A pipeline holding the bundled scenario's state (43 live queues).
std::unique_ptr<Pipeline> DefaultPipeline() {
  auto pipeline = std::make_unique<Pipeline>(ApiPipelineOptions(), nullptr);
  EXPECT_TRUE(BuildDefaultScenario([&](const Event& e) {
    pipeline->Handle(e);
    return true;
  }));
  return pipeline;
}

ApiResponse Call(RecordingApi* api, const std::string& method,
                 const std::string& path,
                 std::map<std::string, std::string> query = {}) {
  return api->Handle({method, path, std::move(query)});
}

Json Body(const ApiResponse& r) { return Json::parse(r.body); }

TEST(RecordingApiTest, StartListStopDownloadDelete) {
  TempDir tmp;
  auto pipeline = DefaultPipeline();
  std::string error;
  auto api =
      RecordingApi::Create({tmp.path() + "/recs"}, pipeline.get(), &error);
  ASSERT_NE(api, nullptr) << error;
  EXPECT_EQ(std::filesystem::status(tmp.path() + "/recs").permissions(),
            std::filesystem::perms::owner_all)
      << "a directory it makes is its own";
  const ApiResponse started = Call(api.get(), "POST", "/api/v1/recordings");
  ASSERT_EQ(started.status, 201) << started.body;
  const std::string id = Body(started)["id"];
  EXPECT_EQ(Body(started)["state"], "recording");
  EXPECT_NE(started.extra_headers.find("Location: /api/v1/recordings/" + id),
            std::string::npos);

  // One at a time, and a running capture is not served half written.
  const ApiResponse second = Call(api.get(), "POST", "/api/v1/recordings");
  EXPECT_EQ(second.status, 409);
  EXPECT_NE(Body(second)["error"].get<std::string>().find(id),
            std::string::npos);
  const std::string one = "/api/v1/recordings/" + id;
  EXPECT_EQ(Call(api.get(), "GET", one + "/capture").status, 409);
  EXPECT_EQ(Call(api.get(), "DELETE", one).status, 409);

  const ApiResponse list = Call(api.get(), "GET", "/api/v1/recordings");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(Body(list)["recordings"].size(), 1u);

  const ApiResponse stopped = Call(api.get(), "POST", one + "/stop");
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  EXPECT_EQ(Body(stopped)["state"], "done");
  EXPECT_EQ(Body(stopped)["reason"], "stopped");
  // Stopping again says the same.
  EXPECT_EQ(Body(Call(api.get(), "POST", one + "/stop"))["state"], "done");

  const ApiResponse download = Call(api.get(), "GET", one + "/capture");
  ASSERT_EQ(download.status, 200);
  EXPECT_EQ(download.download_name, id + ".gpuqcap");
  Capture capture;
  ASSERT_EQ(ReadCapture(download.file, &capture, &error), CaptureError::kNone)
      << error;
  // The start state: 9 GPUs and the 43 live queues, and the closing drops.
  size_t creates = 0, gpus = 0;
  for (const Event& e : capture.events) {
    creates += std::holds_alternative<gpuq_queue_create_event>(e);
    gpus += std::holds_alternative<gpuq_gpu_info_record>(e);
  }
  EXPECT_EQ(creates, 43u);
  EXPECT_EQ(gpus, 9u);
  EXPECT_EQ(Body(stopped)["records"].get<uint64_t>(), capture.events.size());
  EXPECT_TRUE(
      std::holds_alternative<gpuq_source_drops_record>(capture.events.back()));

  EXPECT_EQ(Call(api.get(), "DELETE", one).status, 204);
  EXPECT_FALSE(std::filesystem::exists(download.file));
  EXPECT_EQ(Call(api.get(), "GET", one).status, 404);
}

TEST(RecordingApiTest, BadRequestsGetOneClearAnswer) {
  TempDir tmp;
  Pipeline pipeline(ApiPipelineOptions(), nullptr);
  std::string error;
  auto api = RecordingApi::Create({tmp.path()}, &pipeline, &error);
  ASSERT_NE(api, nullptr) << error;
  const std::string root = "/api/v1/recordings";
  EXPECT_EQ(Call(api.get(), "POST", root, {{"duration", "soon"}}).status, 400);
  EXPECT_EQ(Call(api.get(), "POST", root, {{"duration", "0"}}).status, 400);
  EXPECT_EQ(Call(api.get(), "POST", root, {{"duration", "1e9"}}).status, 400);
  EXPECT_EQ(Call(api.get(), "POST", root, {{"max_bytes", "12"}}).status, 400);
  const ApiResponse typo =
      Call(api.get(), "POST", root, {{"contianer", "vllm"}});
  EXPECT_EQ(typo.status, 400);
  EXPECT_NE(Body(typo)["error"].get<std::string>().find("contianer"),
            std::string::npos);
  EXPECT_EQ(Call(api.get(), "PUT", root).status, 405);
  EXPECT_EQ(Call(api.get(), "GET", root + "/../../etc").status, 404);
  EXPECT_EQ(Call(api.get(), "GET", root + "/nope").status, 404);
  EXPECT_EQ(Call(api.get(), "GET", root + "/nope/capture").status, 404);
  EXPECT_EQ(Call(api.get(), "GET", root + "/nope/stop").status, 405);
  EXPECT_EQ(Call(api.get(), "POST", root + "/nope/stop").status, 404);
  EXPECT_TRUE(RecordingApi::Handles(root));
  EXPECT_TRUE(RecordingApi::Handles(root + "/x"));
  EXPECT_FALSE(RecordingApi::Handles("/api/v1/recordingsx"));
  EXPECT_FALSE(RecordingApi::Handles("/metrics"));
}

TEST(RecordingApiTest, DurationAndSizeLimitEndARecording) {
  TempDir tmp;
  auto pipeline = DefaultPipeline();
  std::string error;
  auto api = RecordingApi::Create({tmp.path()}, pipeline.get(), &error);
  ASSERT_NE(api, nullptr) << error;
  const std::string root = "/api/v1/recordings";
  ApiResponse r = Call(api.get(), "POST", root, {{"duration", "0.001"}});
  ASSERT_EQ(r.status, 201);
  const std::string timed = Body(r)["id"];
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  api->Tick();
  EXPECT_EQ(Body(Call(api.get(), "GET", root + "/" + timed))["reason"],
            "duration");

  // The start state alone is larger than 4096 bytes raw; compressed it is
  // not, so the pipeline goes on writing until the flushed file reaches it.
  r = Call(api.get(), "POST", root, {{"max_bytes", "4096"}});
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string sized = Body(r)["id"];
  for (int round = 0; round < 200; ++round) {
    BuildDefaultScenario([&](const Event& e) {
      pipeline->Handle(e);
      return true;
    });
    api->Tick();
    if (Body(Call(api.get(), "GET", root + "/" + sized))["state"] !=
        "recording") {
      break;
    }
  }
  const Json info = Body(Call(api.get(), "GET", root + "/" + sized));
  EXPECT_EQ(info["reason"], "size limit");
  EXPECT_GE(info["bytes"].get<uint64_t>(), 4096u);
  Capture capture;
  EXPECT_EQ(
      ReadCapture(tmp.path() + "/" + sized + ".gpuqcap", &capture, &error),
      CaptureError::kNone)
      << error;
}

TEST(RecordingApiTest, RetentionAndTheBudgetDeleteTheOldest) {
  TempDir tmp;
  const std::string dir = tmp.path();
  // Two captures of an earlier run: one a day and a half old.
  tmp.Write("20260101T000000Z.gpuqcap", std::string(3000, 'x'));
  tmp.Write("20261201T000000Z.gpuqcap", std::string(3000, 'y'));
  tmp.Write("notes.txt", "not a capture");
  const std::string old = dir + "/20260101T000000Z.gpuqcap";
  const time_t then = time(nullptr) - 36 * 3600;
  utimbuf times{then, then};
  ASSERT_EQ(utime(old.c_str(), &times), 0);
  Pipeline pipeline(ApiPipelineOptions(), nullptr);
  std::string error;
  RecordingLimits limits{dir, 1 << 20, std::chrono::hours(24)};
  {
    auto api = RecordingApi::Create(limits, &pipeline, &error);
    ASSERT_NE(api, nullptr) << error;
    const Json list = Body(Call(api.get(), "GET", "/api/v1/recordings"));
    ASSERT_EQ(list["recordings"].size(), 1u) << list.dump();
    EXPECT_EQ(list["recordings"][0]["id"], "20261201T000000Z");
    EXPECT_FALSE(std::filesystem::exists(old));
    EXPECT_TRUE(std::filesystem::exists(dir + "/notes.txt"));
  }
  // A budget smaller than what is kept: the oldest finished go first.
  limits.max_bytes = 4096;
  auto api = RecordingApi::Create(limits, &pipeline, &error);
  ASSERT_NE(api, nullptr) << error;
  EXPECT_EQ(
      Body(Call(api.get(), "GET", "/api/v1/recordings"))["recordings"].size(),
      1u);
  tmp.Write("20261201T000001Z.gpuqcap", std::string(3000, 'z'));
  auto again = std::move(api);
  again.reset();
  api = RecordingApi::Create(limits, &pipeline, &error);
  ASSERT_NE(api, nullptr) << error;
  const Json list = Body(Call(api.get(), "GET", "/api/v1/recordings"));
  ASSERT_EQ(list["recordings"].size(), 1u) << list.dump();
  EXPECT_EQ(list["recordings"][0]["id"], "20261201T000001Z");
}

TEST(RecordingApiTest, AnUnusableDirectoryIsOneLine) {
  TempDir tmp;
  tmp.Write("file", "x");
  Pipeline pipeline(ApiPipelineOptions(), nullptr);
  std::string error;
  EXPECT_EQ(
      RecordingApi::Create({tmp.path() + "/file/recs"}, &pipeline, &error),
      nullptr);
  EXPECT_NE(error.find("--recording.dir"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace gpuq

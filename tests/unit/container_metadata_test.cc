// Runtime metadata clients against recorded and hand-built runtime state: the
// Docker API client against a unix-socket HTTP server in the test process
// (serving recorded podman responses, 404s, garbage, or nothing at all), the
// OCI bundle reader against bundle trees laid out as containerd and CRI-O lay
// them out, and MetadataResolver with scripted clients. No root, no runtime.
#include "resolver/container_metadata.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "log_capture.h"
#include "resolver/container_metadata_json.h"
#include "resolver/docker_api_client.h"
#include "resolver/oci_bundle_client.h"
#include "resolver/runtime_events.h"
#include "sources/event.h"
#include "test_support.h"

namespace gpuq::container_metadata_test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kFixtures =
    std::string(GPUQ_SOURCE_DIR) + "/tests/fixtures/runtime";

// Client timeout in these tests, and what a loaded CI machine may add to it.
constexpr milliseconds kTimeout{200};

// Ids of the recorded and hand-built fixtures (tests/fixtures/runtime/).
const std::string kPodmanId =
    "1f5410ae1a19a2bede6137323ca9ca8c9e22f1160b2f293a3c51bfec91e9c078";
const std::string kCriDockerdId =
    "32e61375748e9fc732a7a30ab641f7f7eb34c1fdbf7e2d0ece9812da4ac70678";
const std::string kContainerdCriId =
    "f7c0895683016cf44c5ebbc8e956316d01e3a7544c81bc4c4d2dd75ffcf9a669";
const std::string kNerdctlId =
    "96e586724031ce09cd82b53a10117f244dc4103cb9e1528e09ba0028805b980c";
const std::string kMobyId =
    "a020e8fdbc0c26993357030c7b3fc4b3d2ade671cbd51862452a613b649bcf97";
const std::string kCrioId =
    "b1e6954514af415b071a01fe4422709bebb2e8aebcd0faf5d34b67dfb4a5b890";
const std::string kUnknownId =
    "0000000000000000000000000000000000000000000000000000000000000000";

ContainerIdentity Container(const std::string& id,
                            const std::string& runtime = "docker") {
  ContainerIdentity identity;
  identity.container_id = id;
  identity.runtime = runtime;
  return identity;
}

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

// ---------------------------------------------------------------------------
// A dockerd stand-in: one thread accepting on a unix socket, answering every
// request the same way. The socket is listening when the constructor returns.
class FakeDockerd {
 public:
  enum class Mode {
    kServe,        // 200 with `body`
    kNotFound,     // 404 with `body`
    kServerError,  // 500 with a Docker error document
    kNotJson,      // 200 whose body is not JSON
    kNotHttp,      // bytes that are not an HTTP response, then close
    kHang,         // read the request, never answer, keep the connection
  };

  FakeDockerd(std::string socket_path, Mode mode, std::string body = "")
      : path_(std::move(socket_path)), mode_(mode), body_(std::move(body)) {
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    if (listen_fd_ < 0 ||
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
            0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "listen on " << path_ << ": " << std::strerror(errno);
      return;
    }
    thread_ = std::thread([this] { Loop(); });
  }

  ~FakeDockerd() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int fd : held_) ::close(fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::unlink(path_.c_str());
  }

  FakeDockerd(const FakeDockerd&) = delete;
  FakeDockerd& operator=(const FakeDockerd&) = delete;

  /// Request lines received so far ("GET /v1.41/... HTTP/1.1").
  std::vector<std::string> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) Handle(fd);
    }
  }

  void Handle(int fd) {
    const std::string request = ReadRequest(fd);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request.substr(0, request.find("\r\n")));
    }
    if (mode_ == Mode::kHang) {
      held_.push_back(fd);  // closed by the destructor, after the test
      return;
    }
    SendAll(fd, Response());
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
  }

  std::string Response() const {
    switch (mode_) {
      case Mode::kServe:
        return Http("200 OK", body_);
      case Mode::kNotFound:
        return Http("404 Not Found", body_);
      case Mode::kServerError:
        return Http("500 Internal Server Error",
                    "{\"message\":\"container store is locked\"}");
      case Mode::kNotJson:
        return Http("200 OK", "<html><body>It works!</body></html>\n");
      case Mode::kNotHttp:
        return "\x16\x03\x01 garbage\r\n\r\n";
      case Mode::kHang:
        break;
    }
    return "";
  }

  // Headers as podman 4.3 sends them, with a length instead of chunks.
  static std::string Http(const std::string& status, const std::string& body) {
    return "HTTP/1.1 " + status +
           "\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n"
           "Server: Libpod/4.3.1 (linux)\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  }

  // Up to the end of the headers (a GET has no body), or 1 s of silence.
  static std::string ReadRequest(int fd) {
    std::string request;
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos &&
           request.size() < 65536) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) break;
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      request.append(buf, static_cast<size_t>(n));
    }
    return request;
  }

  static void SendAll(int fd, const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n =
          ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  std::string path_;
  Mode mode_;
  std::string body_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> held_;  // only touched by thread_ until it is joined
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
};

class DockerApiClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }

  std::string Socket() const { return tmp_.File("docker.sock"); }

  std::unique_ptr<RuntimeClient> Client() const {
    return MakeDockerApiClient(Socket(), kTimeout);
  }

  TempDir tmp_;
};

void ExpectOneLine(const std::string& error) {
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST_F(DockerApiClientTest, ReadsRecordedPodmanInspect) {
  FakeDockerd server(
      Socket(), FakeDockerd::Mode::kServe,
      ReadFile(kFixtures + "/docker-api/podman-4.3-container.json"));
  std::string error;
  const auto meta = Client()->Lookup(Container(kPodmanId, "podman"), &error);

  ASSERT_TRUE(meta.has_value()) << error;
  EXPECT_EQ(error, "");
  EXPECT_EQ(meta->name, "meta-test");  // "/meta-test" in the API
  EXPECT_EQ(meta->labels, (std::map<std::string, std::string>{{"team", "ml"}}));
  EXPECT_EQ(meta->pod, "");
  EXPECT_EQ(meta->ns, "");
  EXPECT_EQ(meta->k8s_container, "");
  EXPECT_EQ(meta->source, "docker-api");
  EXPECT_EQ(server.Requests(),
            std::vector<std::string>{"GET /v1.41/containers/" + kPodmanId +
                                     "/json HTTP/1.1"});
}

TEST_F(DockerApiClientTest, KubernetesNamesFromCriDockerdLabels) {
  FakeDockerd server(
      Socket(), FakeDockerd::Mode::kServe,
      ReadFile(kFixtures + "/docker-api/podman-4.3-cri-dockerd-labels.json"));
  std::string error;
  const auto meta = Client()->Lookup(Container(kCriDockerdId), &error);

  ASSERT_TRUE(meta.has_value()) << error;
  EXPECT_EQ(meta->name,
            "k8s_vllm_vllm-0_ml_3f0a6c2e-8b1d-4c55-9e7a-2d4b6f1c9a80_0");
  EXPECT_EQ(meta->pod, "vllm-0");
  EXPECT_EQ(meta->ns, "ml");
  EXPECT_EQ(meta->k8s_container, "vllm");
  EXPECT_EQ(meta->labels.at("io.kubernetes.pod.uid"),
            "3f0a6c2e-8b1d-4c55-9e7a-2d4b6f1c9a80");
  EXPECT_EQ(meta->labels.at("annotation.io.kubernetes.container.hash"),
            "9f3c2a1b");
}

TEST_F(DockerApiClientTest, NotFoundIsNoAnswerAndNoError) {
  FakeDockerd server(
      Socket(), FakeDockerd::Mode::kNotFound,
      ReadFile(kFixtures + "/docker-api/podman-4.3-not-found.json"));
  std::string error;
  EXPECT_FALSE(Client()->Lookup(Container(kUnknownId), &error).has_value());
  EXPECT_EQ(error, "");
  EXPECT_EQ(server.Requests().size(), 1u);
}

TEST_F(DockerApiClientTest, ServerErrorIsAnError) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kServerError);
  std::string error;
  EXPECT_FALSE(Client()->Lookup(Container(kPodmanId), &error).has_value());
  ExpectOneLine(error);
  EXPECT_NE(error.find("HTTP 500: container store is locked"),
            std::string::npos)
      << error;
}

// ---- container_meta records ----

// `record` writes MetadataToJson() as a container_meta record; whatever the
// runtime said, the record must read back (before: labels past 32 KiB made
// the whole capture "corrupt", past 64 KiB the record size wrapped). Found
// writing tests/fuzz/runtime_json_fuzzer's round-trip check; its seeds have
// an inspect document with 40 KiB of labels.
TEST(ContainerMetaRecordTest, ManyLabelsStillReadBack) {
  ContainerMetadata m;
  m.name = "vllm";
  m.pod = "vllm-0";
  m.ns = "ml";
  m.k8s_container = "server";
  m.source = "docker-api";
  m.labels["team"] = "inference";
  for (int i = 0; i < 100; ++i) {
    m.labels["org.example.label" + std::to_string(i)] =
        std::string(1000 - i, 'x');
  }
  const std::string json = MetadataToJson(m);
  ASSERT_LE(json.size(), size_t{GPUQ_CONTAINER_META_MAX});
  gpuq_event_header hdr{};
  hdr.cgroup_id = 5;
  const std::string bytes = Encode(ContainerMetaRecord{hdr, json});
  Event event;
  size_t consumed = 0;
  ASSERT_EQ(Decode(bytes.data(), bytes.size(), &event, &consumed),
            DecodeStatus::kOk);
  const auto back = MetadataFromJson(std::get<ContainerMetaRecord>(event).json);
  ASSERT_TRUE(back.has_value());
  // The names stay; labels go largest first, the small ones stay.
  EXPECT_EQ(back->name, "vllm");
  EXPECT_EQ(back->pod, "vllm-0");
  EXPECT_EQ(back->ns, "ml");
  EXPECT_EQ(back->k8s_container, "server");
  EXPECT_EQ(back->source, "docker-api");
  EXPECT_EQ(back->labels.at("team"), "inference");
  EXPECT_EQ(back->labels.count("org.example.label0"), 0u);  // the largest
  EXPECT_EQ(back->labels.count("org.example.label99"), 1u);
  EXPECT_GT(back->labels.size(), 20u);
}

TEST(ContainerMetaRecordTest, SmallMetadataIsUntouched) {
  ContainerMetadata m;
  m.name = "trainer";
  m.labels["a"] = "b";
  m.source = "oci-bundle";
  EXPECT_EQ(MetadataToJson(m),
            R"({"name":"trainer","pod":"","namespace":"","container":"",)"
            R"("labels":{"a":"b"},"source":"oci-bundle"})");
}

TEST(ContainerMetaRecordTest, HugeNamesAreLeftOut) {
  ContainerMetadata m;
  m.name = std::string(40000, 'n');
  m.pod = "p";
  m.labels["k"] = "v";
  const std::string json = MetadataToJson(m);
  ASSERT_LE(json.size(), size_t{GPUQ_CONTAINER_META_MAX});
  const auto back = MetadataFromJson(json);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->name, "");
  EXPECT_EQ(back->pod, "p");
}

TEST_F(DockerApiClientTest, NonJsonBodyIsAnError) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kNotJson);
  std::string error;
  EXPECT_FALSE(Client()->Lookup(Container(kPodmanId), &error).has_value());
  ExpectOneLine(error);
  EXPECT_NE(error.find("not a JSON object"), std::string::npos) << error;
}

TEST_F(DockerApiClientTest, NonHttpReplyIsAnError) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kNotHttp);
  std::string error;
  EXPECT_FALSE(Client()->Lookup(Container(kPodmanId), &error).has_value());
  ExpectOneLine(error);
}

TEST_F(DockerApiClientTest, SilentServerTimesOutWithAnError) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kHang);
  std::string error;
  const auto start = Clock::now();
  EXPECT_FALSE(Client()->Lookup(Container(kPodmanId), &error).has_value());
  const milliseconds took = Since(start);

  EXPECT_GE(took, kTimeout - milliseconds(20));  // it did wait for an answer
  // ... and ended at its timeout (the error says so), not later: a bound far
  // beyond any scheduling delay on a loaded machine.
  EXPECT_LT(took, kTimeout * 25);
  ExpectOneLine(error);
  EXPECT_NE(error.find("no answer within 200 ms"), std::string::npos) << error;
}

// Polls until the fake runtime has `n` requests (at most 10 s).
bool RequestsReach(const FakeDockerd& server, size_t n) {
  for (int i = 0; i < 5000 && server.Requests().size() < n; ++i) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  return server.Requests().size() >= n;
}

TEST_F(DockerApiClientTest, CancelEndsALookupInProgress) {
  // A runtime that never answers, and a timeout far beyond the test: the
  // lookup can only return early because Cancel() ended it (shutdown).
  FakeDockerd server(Socket(), FakeDockerd::Mode::kHang);
  const auto client = MakeDockerApiClient(Socket(), std::chrono::minutes(10));
  std::string error;
  // Cancelled once the runtime has the request: the lookup is waiting for
  // its answer then, not yet to start.
  bool reached = false;
  std::thread canceller([&client, &server, &reached] {
    reached = RequestsReach(server, 1);
    client->Cancel();
  });
  EXPECT_FALSE(client->Lookup(Container(kPodmanId), &error).has_value());
  canceller.join();
  EXPECT_TRUE(reached) << "the lookup never reached the runtime";
  ExpectOneLine(error);
  EXPECT_NE(error.find("cancelled: the agent is stopping"), std::string::npos)
      << error;
  // Every later lookup returns at once too.
  error.clear();
  EXPECT_FALSE(client->Lookup(Container(kPodmanId), &error).has_value());
  EXPECT_NE(error.find("cancelled"), std::string::npos) << error;
}

TEST_F(DockerApiClientTest, MissingSocketIsAnErrorEveryTime) {
  const auto client = Client();
  for (int i = 0; i < 2; ++i) {
    std::string error;
    // Refused at connect (the errno below), not after the timeout, whose
    // error would say "no answer within".
    EXPECT_FALSE(client->Lookup(Container(kPodmanId), &error).has_value());
    ExpectOneLine(error);
    EXPECT_NE(error.find(Socket()), std::string::npos) << error;
    EXPECT_NE(error.find("No such file or directory"), std::string::npos)
        << error;
  }
}

TEST_F(DockerApiClientTest, SocketWithoutListenerIsRefused) {
  // A socket file left behind by a daemon that died: bound, never listening.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, Socket().c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);

  std::string error;
  EXPECT_FALSE(Client()->Lookup(Container(kPodmanId), &error).has_value());
  ExpectOneLine(error);
  EXPECT_NE(error.find("connection refused"), std::string::npos) << error;
}

TEST_F(DockerApiClientTest, RejectsIdsThatAreNotIds) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kNotFound, "{}");
  for (const std::string id : {"../../info?x=", "a/b", "..", "id with space"}) {
    std::string error;
    EXPECT_FALSE(Client()->Lookup(Container(id), &error).has_value()) << id;
    ExpectOneLine(error);
  }
  EXPECT_TRUE(server.Requests().empty());
}

TEST_F(DockerApiClientTest, NameIsStable) {
  EXPECT_EQ(Client()->Name(), "docker-api");
}

// ---------------------------------------------------------------------------
// OCI bundles.

class OciBundleClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }

  static std::optional<ContainerMetadata> LookupIn(const std::string& run_dir,
                                                   const std::string& id,
                                                   std::string* error) {
    return MakeOciBundleClient(run_dir)->Lookup(Container(id, "containerd"),
                                                error);
  }

  static std::string Task(const std::string& ns, const std::string& id) {
    return "containerd/io.containerd.runtime.v2.task/" + ns + "/" + id +
           "/config.json";
  }

  const std::string run_ = kFixtures + "/run";
  TempDir tmp_;
};

TEST_F(OciBundleClientTest, ContainerdCriAnnotations) {
  std::string error;
  const auto meta = LookupIn(run_, kContainerdCriId, &error);

  ASSERT_TRUE(meta.has_value()) << error;
  EXPECT_EQ(error, "");
  EXPECT_EQ(meta->pod, "vllm-7d9f8c6b5-x2k4q");
  EXPECT_EQ(meta->ns, "inference");
  EXPECT_EQ(meta->k8s_container, "vllm");
  EXPECT_EQ(meta->name, "");  // containerd CRI has no runtime name
  EXPECT_EQ(meta->source, "containerd-bundle");
  EXPECT_EQ(meta->labels.at("io.kubernetes.cri.sandbox-uid"),
            "b3c6fc26-f440-49df-b0cd-47f9f529477c");
}

TEST_F(OciBundleClientTest, NerdctlNameAndLabels) {
  std::string error;
  const auto meta = LookupIn(run_, kNerdctlId, &error);

  ASSERT_TRUE(meta.has_value()) << error;
  EXPECT_EQ(meta->name, "trainer");
  EXPECT_EQ(meta->labels.at("team"), "ml");
  EXPECT_EQ(meta->pod, "");
  EXPECT_EQ(meta->k8s_container, "");
  EXPECT_EQ(meta->source, "containerd-bundle");
}

TEST_F(OciBundleClientTest, CrioAnnotations) {
  std::string error;
  const auto meta = LookupIn(run_, kCrioId, &error);

  ASSERT_TRUE(meta.has_value()) << error;
  EXPECT_EQ(meta->pod, "gpu-probe");
  EXPECT_EQ(meta->ns, "monitoring");
  EXPECT_EQ(meta->k8s_container, "rocm-smi");
  EXPECT_EQ(meta->name,
            "k8s_rocm-smi_gpu-probe_monitoring_5e0f4d2c-9a1b-4c3d-8e7f-"
            "6a5b4c3d2e1f_0");
  EXPECT_EQ(meta->source, "containers-storage-bundle");
}

TEST_F(OciBundleClientTest, DockerdBundleWithoutNamesIsNoAnswer) {
  ASSERT_TRUE(fs::exists(run_ + "/" + Task("moby", kMobyId)));
  std::string error;
  EXPECT_FALSE(LookupIn(run_, kMobyId, &error).has_value());
  EXPECT_EQ(error, "");
}

TEST_F(OciBundleClientTest, RecordedPodmanSpecIsNoAnswer) {
  tmp_.Write("containers/storage/overlay-containers/" + kPodmanId +
                 "/userdata/config.json",
             ReadFile(kFixtures + "/oci/podman-4.3-config.json"));
  std::string error;
  EXPECT_FALSE(LookupIn(tmp_.path(), kPodmanId, &error).has_value());
  EXPECT_EQ(error, "");
}

TEST_F(OciBundleClientTest, MissingBundleIsNoAnswerAndNoError) {
  std::string error;
  EXPECT_FALSE(LookupIn(run_, kUnknownId, &error).has_value());
  EXPECT_EQ(error, "");
  // Neither runtime ever ran here.
  EXPECT_FALSE(LookupIn(tmp_.File("empty"), kCrioId, &error).has_value());
  EXPECT_EQ(error, "");
}

TEST_F(OciBundleClientTest, GarbageJsonIsAnError) {
  tmp_.Write(Task("k8s.io", kContainerdCriId), "{\"ociVersion\": \"1.1.");
  std::string error;
  EXPECT_FALSE(LookupIn(tmp_.path(), kContainerdCriId, &error).has_value());
  ExpectOneLine(error);
  EXPECT_NE(error.find(Task("k8s.io", kContainerdCriId)), std::string::npos)
      << error;
}

TEST_F(OciBundleClientTest, UnreadableConfigIsAnError) {
  // A directory where the file should be fails to read even for root.
  tmp_.MakeDir(Task("k8s.io", kContainerdCriId));
  std::string error;
  EXPECT_FALSE(LookupIn(tmp_.path(), kContainerdCriId, &error).has_value());
  ExpectOneLine(error);
  EXPECT_NE(error.find("Is a directory"), std::string::npos) << error;
}

TEST_F(OciBundleClientTest, PermissionDeniedIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads mode-000 files";
  tmp_.Write(Task("k8s.io", kContainerdCriId), "{}");
  ASSERT_EQ(::chmod(tmp_.File(Task("k8s.io", kContainerdCriId)).c_str(), 0), 0);
  std::string error;
  EXPECT_FALSE(LookupIn(tmp_.path(), kContainerdCriId, &error).has_value());
  EXPECT_NE(error.find("Permission denied"), std::string::npos) << error;
}

TEST_F(OciBundleClientTest, SkipsNonStringAndHugeAnnotations) {
  tmp_.Write(Task("k8s.io", kContainerdCriId),
             "{\"annotations\": {\"io.kubernetes.cri.sandbox-name\": \"p\", "
             "\"count\": 3, \"nested\": {\"a\": \"b\"}, \"doc\": \"" +
                 std::string(4096, 'x') + "\"}}");
  std::string error;
  const auto meta = LookupIn(tmp_.path(), kContainerdCriId, &error);
  ASSERT_TRUE(meta.has_value()) << error;
  EXPECT_EQ(meta->pod, "p");
  EXPECT_EQ(meta->labels, (std::map<std::string, std::string>{
                              {"io.kubernetes.cri.sandbox-name", "p"}}));
}

TEST_F(OciBundleClientTest, RejectsIdsThatAreNotIds) {
  std::string error;
  EXPECT_FALSE(LookupIn(run_, "../../../etc", &error).has_value());
  ExpectOneLine(error);
}

// ---------------------------------------------------------------------------
// MetadataResolver.

// A scripted client; the test keeps a handle on its state to change the
// script and count calls while the resolver owns the client.
struct Script {
  std::mutex mu;
  int calls = 0;
  std::optional<ContainerMetadata> answer;
  std::string error;
  milliseconds delay{0};
  bool throws = false;

  int Calls() {
    std::lock_guard<std::mutex> lock(mu);
    return calls;
  }
  void Answer(std::optional<ContainerMetadata> a, std::string e = "") {
    std::lock_guard<std::mutex> lock(mu);
    answer = std::move(a);
    error = std::move(e);
  }
};

class ScriptedClient : public RuntimeClient {
 public:
  ScriptedClient(std::string name, std::shared_ptr<Script> script)
      : name_(std::move(name)), script_(std::move(script)) {}

  std::optional<ContainerMetadata> Lookup(const ContainerIdentity&,
                                          std::string* error) override {
    std::optional<ContainerMetadata> answer;
    milliseconds delay;
    bool throws;
    {
      std::lock_guard<std::mutex> lock(script_->mu);
      ++script_->calls;
      answer = script_->answer;
      *error = script_->error;
      delay = script_->delay;
      throws = script_->throws;
    }
    std::this_thread::sleep_for(delay);
    if (throws) throw std::runtime_error("scripted failure");
    return answer;
  }

  std::string Name() const override { return name_; }

 private:
  std::string name_;
  std::shared_ptr<Script> script_;
};

ContainerMetadata Named(const std::string& name) {
  ContainerMetadata meta;
  meta.name = name;
  meta.source = "scripted";
  return meta;
}

class MetadataResolverTest : public ::testing::Test {
 protected:
  std::shared_ptr<Script> AddClient(const std::string& name) {
    auto script = std::make_shared<Script>();
    clients_.push_back(std::make_unique<ScriptedClient>(name, script));
    return script;
  }

  /// Options on the test's clock (it moves only when Advance() moves it).
  MetadataResolver::Options Stepped(
      milliseconds retry_after = std::chrono::seconds(30)) {
    MetadataResolver::Options options;
    options.retry_after = retry_after;
    options.now = [this] {
      return Clock::time_point(std::chrono::nanoseconds(now_ns_.load()));
    };
    return options;
  }
  std::unique_ptr<MetadataResolver> Make(
      milliseconds retry_after = std::chrono::seconds(30)) {
    return std::make_unique<MetadataResolver>(std::move(clients_),
                                              Stepped(retry_after));
  }
  void Advance(milliseconds by) {
    now_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(by).count();
  }

  std::vector<std::unique_ptr<RuntimeClient>> clients_;
  // An hour in: next_try starts at the clock's epoch.
  std::atomic<int64_t> now_ns_{3600 * 1000000000ll};
  const ContainerIdentity id_ = Container(kPodmanId);
};

TEST_F(MetadataResolverTest, UnknownUntilLookedUpThenCached) {
  auto a = AddClient("a");
  a->Answer(Named("vllm"));
  auto resolver = Make();

  EXPECT_FALSE(resolver->Get(id_).has_value());  // never waits for a lookup
  resolver->WaitIdle();
  const auto meta = resolver->Get(id_);
  ASSERT_TRUE(meta.has_value());
  EXPECT_EQ(meta->name, "vllm");
  EXPECT_EQ(a->Calls(), 1);
  EXPECT_TRUE(resolver->Errors().empty());
}

TEST_F(MetadataResolverTest, HostProcessesAreNeverLookedUp) {
  auto a = AddClient("a");
  a->Answer(Named("x"));
  auto resolver = Make();
  EXPECT_FALSE(resolver->Get(ContainerIdentity{}).has_value());
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 0);
}

TEST_F(MetadataResolverTest, FirstAnswerWins) {
  auto a = AddClient("a");  // no answer, no error: not its container
  auto b = AddClient("b");
  auto c = AddClient("c");
  b->Answer(Named("from-b"));
  c->Answer(Named("from-c"));
  auto resolver = Make();

  resolver->Get(id_);
  resolver->WaitIdle();
  ASSERT_TRUE(resolver->Get(id_).has_value());
  EXPECT_EQ(resolver->Get(id_)->name, "from-b");
  EXPECT_EQ(a->Calls(), 1);
  EXPECT_EQ(c->Calls(), 0);
}

TEST_F(MetadataResolverTest, ErrorsCountedByClientName) {
  auto a = AddClient("docker-api");
  auto b = AddClient("oci-bundle");
  a->Answer(std::nullopt, "docker-api GET ...: connection refused");
  b->Answer(Named("from-bundle"));
  auto resolver = Make();

  resolver->Get(id_);
  resolver->WaitIdle();
  EXPECT_EQ(resolver->Get(id_)->name, "from-bundle");
  EXPECT_EQ(resolver->Errors(),
            (std::map<std::string, uint64_t>{{"docker-api", 1}}));
}

TEST_F(MetadataResolverTest, FailedLookupRetriedOnlyAfterRetryAfter) {
  auto a = AddClient("a");
  a->Answer(std::nullopt, "boom");
  auto resolver = Make(milliseconds(150));

  resolver->Get(id_);
  resolver->WaitIdle();
  resolver->Get(id_);  // too early: no new lookup
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 1);

  Advance(milliseconds(149));
  resolver->Get(id_);  // still too early
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 1);
  Advance(milliseconds(1));
  a->Answer(Named("late"));
  EXPECT_FALSE(resolver->Get(id_).has_value());  // schedules the retry
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 2);
  EXPECT_EQ(resolver->Get(id_)->name, "late");
  EXPECT_EQ(resolver->Errors().at("a"), 1u);
}

// A runtime's error is logged outside the resolver's lock: while the log
// sink blocks (a stderr pipe nobody reads), Get still answers. With the
// lock held, Get would wait until the test releases the sink, after 10 s.
TEST_F(MetadataResolverTest, GetAnswersWhileTheLogIsBlocked) {
  auto a = AddClient("a");
  a->Answer(std::nullopt, "runtime down (the blocked-log test)");
  std::mutex mu;
  std::condition_variable cv;
  bool in_sink = false;
  bool released = false;
  Log().SetSink([&](const std::string&) {
    std::unique_lock<std::mutex> lock(mu);
    in_sink = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });  // the test releases it
  });
  auto resolver = Make();
  resolver->Get(id_);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return in_sink; });
  }
  std::atomic<bool> answered{false};
  std::thread getter([&] {
    resolver->Get(id_);
    answered = true;
  });
  for (int i = 0; i < 10000 && !answered; ++i)
    std::this_thread::sleep_for(milliseconds(1));
  const bool answered_while_blocked = answered;
  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
  }
  cv.notify_all();
  getter.join();
  resolver->WaitIdle();
  Log().SetSink([](const std::string&) {});  // this process's later tests
  EXPECT_TRUE(in_sink);
  EXPECT_TRUE(answered_while_blocked);
  EXPECT_EQ(resolver->Errors().at("a"), 1u);
}

TEST_F(MetadataResolverTest, EmptyLookupIsRetriedToo) {
  auto a = AddClient("a");  // nobody knows the container yet
  auto resolver = Make(milliseconds(50));
  resolver->Get(id_);
  resolver->WaitIdle();
  Advance(milliseconds(50));
  resolver->Get(id_);
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 2);
  EXPECT_TRUE(resolver->Errors().empty());
}

TEST_F(MetadataResolverTest, SuccessIsPinned) {
  auto a = AddClient("a");
  a->Answer(Named("vllm"));
  auto resolver = Make(milliseconds(20));
  resolver->Get(id_);
  resolver->WaitIdle();

  a->Answer(std::nullopt, "runtime went away");
  Advance(milliseconds(60));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(resolver->Get(id_).has_value());
    EXPECT_EQ(resolver->Get(id_)->name, "vllm");
    resolver->WaitIdle();
  }
  EXPECT_EQ(a->Calls(), 1);
  EXPECT_TRUE(resolver->Errors().empty());
}

TEST_F(MetadataResolverTest, ClientExceptionIsCountedAndNextClientAsked) {
  auto a = AddClient("a");
  auto b = AddClient("b");
  a->throws = true;
  b->Answer(Named("from-b"));
  auto resolver = Make();
  resolver->Get(id_);
  resolver->WaitIdle();
  EXPECT_EQ(resolver->Get(id_)->name, "from-b");
  EXPECT_EQ(resolver->Errors().at("a"), 1u);
}

TEST_F(MetadataResolverTest, ConcurrentGetsLookUpEachContainerOnce) {
  auto a = AddClient("a");
  a->Answer(Named("x"));
  a->delay = milliseconds(5);
  auto resolver = Make();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&resolver] {
      for (int i = 0; i < 200; ++i) {
        resolver->Get(Container(std::string(63, 'a') + "0123456789"[i % 10]));
      }
    });
  }
  for (auto& t : threads) t.join();
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 10);
}

// The resolver in front of a runtime that accepts and never answers.
class HangingRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  std::string Socket() const { return tmp_.File("docker.sock"); }

  TempDir tmp_;
};

// A lookup the runtime never answers (its client's timeout is far beyond
// the test) is in progress while Get() is asked again and again: each returns
// at once, and one lookup was made. Were Get() waiting for the runtime, it
// would take the client's 10 minutes.
constexpr auto kNeverAnswered = std::chrono::minutes(10);

TEST_F(HangingRuntimeTest, GetNeverWaitsForTheRuntime) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kHang);
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(MakeDockerApiClient(Socket(), kNeverAnswered));
  MetadataResolver resolver(std::move(clients), {});
  EXPECT_FALSE(resolver.Get(Container(kPodmanId)).has_value());
  ASSERT_TRUE(RequestsReach(server, 1)) << "lookup never started";
  const auto start = Clock::now();
  for (int i = 0; i < 20; ++i) {
    EXPECT_FALSE(resolver.Get(Container(kPodmanId)).has_value());
  }
  // Far below the lookup's 10 minutes, far above any scheduling delay.
  EXPECT_LT(Since(start), std::chrono::seconds(30));
  EXPECT_EQ(server.Requests().size(), 1u);  // one lookup, not one per Get
}

// The destructor cancels the lookup in progress (10 minutes from its
// timeout) and asks no other client: it neither waits for the runtime nor
// for each client in turn.
TEST_F(HangingRuntimeTest, DestructorCancelsTheLookupInProgress) {
  FakeDockerd server(Socket(), FakeDockerd::Mode::kHang);
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(MakeDockerApiClient(Socket(), kNeverAnswered));
  clients.push_back(MakeDockerApiClient(Socket(), kNeverAnswered));
  auto resolver = std::make_unique<MetadataResolver>(
      std::move(clients), MetadataResolver::Options{});
  resolver->Get(Container(kPodmanId));
  ASSERT_TRUE(RequestsReach(server, 1)) << "lookup never started";

  const auto start = Clock::now();
  resolver.reset();
  EXPECT_LT(Since(start), std::chrono::seconds(30));
  EXPECT_EQ(server.Requests().size(), 1u);  // the second client was not asked
}

// ---------------------------------------------------------------------------
// Names learned when containers start: the events stream and Announce.

// Recorded from podman 4.3.1's compat API on this project's host
// (GET /v1.41/events, `podman run --rm --name gpuq-sl-ev --label team=x`).
constexpr char kPodmanCreateEvent[] =
    R"({"status":"create","id":"81a06b05f4962e20a1751a3de534e6c9e9717fc3cc332aa17c7c53d3b51c9fa2","from":"localhost/debian:bookworm-slim","Type":"container","Action":"create","Actor":{"ID":"81a06b05f4962e20a1751a3de534e6c9e9717fc3cc332aa17c7c53d3b51c9fa2","Attributes":{"containerExitCode":"0","image":"localhost/debian:bookworm-slim","name":"gpuq-sl-ev","podId":"","team":"x"}},"scope":"local","time":1795474842,"timeNano":1795474842306677204})";
constexpr char kEventId[] =
    "81a06b05f4962e20a1751a3de534e6c9e9717fc3cc332aa17c7c53d3b51c9fa2";

TEST(DockerEventTest, ReadsRecordedPodmanEvent) {
  std::string id, action;
  ContainerMetadata said;
  ASSERT_TRUE(ParseDockerEvent(kPodmanCreateEvent, &id, &action, &said));
  EXPECT_EQ(id, kEventId);
  EXPECT_EQ(action, "create");
  EXPECT_EQ(said.name, "gpuq-sl-ev");
  EXPECT_EQ(said.source, "docker-events");
  // The container's labels, without the event's own attributes.
  EXPECT_EQ(said.labels, (std::map<std::string, std::string>{{"team", "x"}}));
}

TEST(DockerEventTest, KubernetesNamesFromLabels) {
  const std::string line =
      R"({"Type":"container","Action":"start","Actor":{"ID":"abc123",)"
      R"("Attributes":{"name":"k8s_app_web-0_shop_uid_0",)"
      R"("io.kubernetes.pod.name":"web-0",)"
      R"("io.kubernetes.pod.namespace":"shop",)"
      R"("io.kubernetes.container.name":"app"}}})";
  std::string id, action;
  ContainerMetadata said;
  ASSERT_TRUE(ParseDockerEvent(line, &id, &action, &said));
  EXPECT_EQ(said.pod, "web-0");
  EXPECT_EQ(said.ns, "shop");
  EXPECT_EQ(said.k8s_container, "app");
}

TEST(DockerEventTest, RejectsWhatIsNotAContainerEvent) {
  std::string id, action;
  ContainerMetadata said;
  for (const char* line : {
           "",
           "not json",
           "[]",
           R"({"Type":"image","Action":"pull","Actor":{"ID":"abc"}})",
           R"({"Type":"container","Action":"start"})",
           R"({"Type":"container","Action":"start","Actor":{"ID":"../x"}})",
           R"({"Type":"container","Action":"start","Actor":{"ID":7}})",
       }) {
    EXPECT_FALSE(ParseDockerEvent(line, &id, &action, &said)) << line;
  }
}

TEST_F(MetadataResolverTest, AnnouncedContainerIsLookedUpBeforeItIsAsked) {
  auto a = AddClient("a");
  a->Answer(Named("from-inspect"));
  auto resolver = Make();
  resolver->Announce(kPodmanId, Named("from-event"));
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 1);
  ASSERT_TRUE(resolver->Get(id_).has_value());
  EXPECT_EQ(resolver->Get(id_)->name, "from-inspect");  // the full answer
  EXPECT_EQ(a->Calls(), 1);
}

TEST_F(MetadataResolverTest, RemovedBeforeTheLookupKeepsTheEventsName) {
  auto a = AddClient("a");  // 404: already removed (`podman run --rm`)
  auto resolver = Make();
  resolver->Announce(kPodmanId, Named("from-event"));
  resolver->WaitIdle();
  ASSERT_TRUE(resolver->Get(id_).has_value());
  EXPECT_EQ(resolver->Get(id_)->name, "from-event");
}

TEST_F(MetadataResolverTest, AnnounceRetriesALookupThatFoundNothingYet) {
  auto a = AddClient("a");
  auto resolver = Make();                        // retry_after 30 s
  EXPECT_FALSE(resolver->Get(id_).has_value());  // asked before it existed
  resolver->WaitIdle();
  a->Answer(Named("started"));
  resolver->Announce(kPodmanId, std::nullopt);  // the start event
  resolver->WaitIdle();
  EXPECT_EQ(a->Calls(), 2);
  ASSERT_TRUE(resolver->Get(id_).has_value());
  EXPECT_EQ(resolver->Get(id_)->name, "started");
}

// Polls `done` every 20 ms for up to 10 s (a worker thread's result).
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 500 && !done(); ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  return done();
}

TEST_F(MetadataResolverTest, UnusedAnswersAreForgottenAfterTheRetention) {
  auto a = AddClient("a");
  a->Answer(Named("x"));
  MetadataResolver::Options options = Stepped();
  options.retention = milliseconds(100);
  MetadataResolver resolver(std::move(clients_), options);
  resolver.Announce(kPodmanId, std::nullopt);
  resolver.WaitIdle();
  Advance(milliseconds(99));
  resolver.Trim();
  EXPECT_EQ(resolver.Size(), 1u);
  Advance(milliseconds(1));
  resolver.Trim();
  EXPECT_EQ(resolver.Size(), 0u);
  EXPECT_EQ(resolver.Evicted(), 0u);  // expired, not evicted
}

TEST_F(MetadataResolverTest, BoundedByCapacityLeastRecentlyUsedFirst) {
  AddClient("a");
  MetadataResolver::Options options = Stepped();
  options.capacity = 2;
  MetadataResolver resolver(std::move(clients_), options);
  for (const char* id : {"c0", "c1"}) {
    resolver.Announce(id, Named("n"));
    resolver.WaitIdle();
    Advance(milliseconds(1));  // distinct last_used
  }
  ASSERT_TRUE(resolver.Get(Container("c0")));  // used after c1 now
  Advance(milliseconds(1));
  resolver.Announce("c2", Named("n"));
  resolver.WaitIdle();
  resolver.Trim();
  EXPECT_EQ(resolver.Size(), 2u);
  EXPECT_EQ(resolver.Evicted(), 1u);
  // c1, the least recently used, went; c0, inserted before it, stays.
  EXPECT_TRUE(resolver.Get(Container("c0")));
  EXPECT_TRUE(resolver.Get(Container("c2")));
  EXPECT_EQ(resolver.Size(), 2u);
}

TEST(DockerEventsWatcherTest, AnnouncesContainersOfTheStream) {
  TempDir tmp;
  const std::string socket = tmp.path() + "/podman.sock";
  const std::string start = std::regex_replace(
      std::string(kPodmanCreateEvent), std::regex("\"create\""), "\"start\"");
  const std::string other =
      R"({"Type":"container","Action":"die","Actor":{"ID":"dead0001"}})";
  FakeDockerd server(
      socket, FakeDockerd::Mode::kServe,
      std::string(kPodmanCreateEvent) + "\n" + other + "\n" + start + "\n");
  auto script = std::make_shared<Script>();  // inspect: 404, removed
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(std::make_unique<ScriptedClient>("docker-api", script));
  MetadataResolver resolver(std::move(clients), {});
  {
    DockerEventsWatcher watcher(socket, &resolver, milliseconds(50));
    EXPECT_TRUE(Eventually([&] { return watcher.Announced() >= 2; }));
  }  // stops and joins
  resolver.WaitIdle();
  const auto meta = resolver.Get(Container(kEventId, "podman"));
  ASSERT_TRUE(meta.has_value());
  EXPECT_EQ(meta->name, "gpuq-sl-ev");
  const auto requests = server.Requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests[0].rfind("GET /v1.41/events?filters=", 0), 0u)
      << requests[0];
  EXPECT_FALSE(resolver.Get(Container("dead0001")).has_value());
}

// A stream line that is no JSON is skipped, counted with the failed
// connections (gpuq_runtime_lookup_errors_total{runtime="docker-events"})
// and said; JSON that is not an event the agent uses is neither; the events
// around both are still announced.
TEST(DockerEventsWatcherTest, GarbledLinesAreCountedAndSaid) {
  TempDir tmp;
  const std::string socket = tmp.path() + "/podman.sock";
  const std::string other =
      R"({"Type":"container","Action":"die","Actor":{"ID":"dead0001"}})";
  FakeDockerd server(socket, FakeDockerd::Mode::kServe,
                     "<html>502 Bad Gateway</html>\n" + other + "\n" +
                         std::string(kPodmanCreateEvent) + "\n");
  const LogCapture log;
  auto script = std::make_shared<Script>();  // inspect: 404, removed
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(std::make_unique<ScriptedClient>("docker-api", script));
  MetadataResolver resolver(std::move(clients), {});
  uint64_t garbled = 0;
  {
    DockerEventsWatcher watcher(socket, &resolver, milliseconds(50));
    EXPECT_TRUE(Eventually([&] { return watcher.Announced() >= 1; }));
    garbled = watcher.Garbled();
  }
  EXPECT_GE(garbled, 1u);
  // (more lines may have been garbled between the read and the join)
  EXPECT_GE(resolver.Errors()["docker-events"], garbled);
  EXPECT_TRUE(log.Said("a line that is not JSON (28 bytes), skipped"))
      << "the garbled line was not logged";
}

TEST(DockerEventsWatcherTest, MissingSocketNeitherBlocksNorCrashes) {
  TempDir tmp;
  MetadataResolver resolver({}, {});
  DockerEventsWatcher watcher(tmp.path() + "/absent.sock", &resolver,
                              milliseconds(20));
  EXPECT_TRUE(Eventually([&] { return watcher.Failures() >= 2; }));
  EXPECT_EQ(watcher.Announced(), 0u);
}

// A runtime that stays down is counted at every reconnect (the `runtime`
// label "docker-events" of gpuq_runtime_lookup_errors_total) and said once.
TEST(DockerEventsWatcherTest, FailedConnectionsAreCountedAndSaidOnce) {
  TempDir tmp;
  const LogCapture log;
  MetadataResolver resolver({}, {});
  {
    DockerEventsWatcher watcher(tmp.path() + "/absent.sock", &resolver,
                                milliseconds(20));
    EXPECT_TRUE(Eventually([&] { return watcher.Failures() >= 3; }));
  }
  EXPECT_GE(resolver.Errors()["docker-events"], 3u);
  const std::vector<std::string> lines = log.Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("absent.sock"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace gpuq::container_metadata_test

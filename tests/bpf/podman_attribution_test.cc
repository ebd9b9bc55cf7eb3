// Container attribution on real containers: two named podman containers on this
// host, a real kernel event from inside each (the test probe on a syscall
// tracepoint stands in for the KFD hooks this host cannot attach), the real
// cgroup id the kernel reports, the real resolver walking this host's
// cgroup hierarchy, names from `podman system service`'s Docker-compatible
// API, and the real /metrics server and --once renderer.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "export/metrics_server.h"
#include "export/once_render.h"
#include "loader/kernel_features.h"
#include "model/pipeline.h"
#include "resolver/container_metadata.h"
#include "resolver/docker_api_client.h"
#include "resolver/proc_cgroup.h"
#include "ringbuf_probe.skel.h"
#include "sources/bpf_source.h"

namespace gpuq {
namespace {

constexpr const char* kImage = "localhost/debian:bookworm-slim";
// This process's own names: two runs at once (ctest -j, or two checkouts)
// would remove each other's containers.
const std::array<std::string, 2> kNames = {
    "gpuq-it-alpha-" + std::to_string(getpid()),
    "gpuq-it-beta-" + std::to_string(getpid())};

std::string Shell(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
    out.pop_back();
  }
  return out;
}

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

std::string HttpGet(const std::string& url) {
  std::string body;
  CURL* curl = curl_easy_init();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  return body;
}

/// Two running containers and a podman API service, removed at the end.
class PodmanAttributionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasBpfPrivileges()) GTEST_SKIP() << "needs root to load BPF";
    if (Shell("podman image exists " + std::string(kImage) + " && echo yes") !=
        "yes") {
      GTEST_SKIP() << "podman or the base image " << kImage
                   << " is missing (tests/lib/podman_env.sh setup makes it)";
    }
    dir_ = Shell("mktemp -d");
    socket_ = dir_ + "/podman.sock";
    service_ = fork();
    if (service_ == 0) {
      execlp("podman", "podman", "system", "service", "--time=0",
             ("unix://" + socket_).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (const std::string& name : kNames) {
      Shell("podman rm -f " + name + " >/dev/null 2>&1");
      // dash calls getppid() at start-up: every `sh -c :` is one event.
      Shell("podman run -d --name " + name +
            " --label com.example.team=" + name + " " + kImage +
            " sh -c 'while :; do sh -c :; sleep 0.05; done' >/dev/null");
    }
    struct stat st {};
    for (int i = 0; i < 50 && stat(socket_.c_str(), &st) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  void TearDown() override {
    for (const std::string& name : kNames) {
      Shell("podman rm -f -t 0 " + name + " >/dev/null 2>&1");
    }
    if (service_ > 0) {
      kill(service_, SIGTERM);
      waitpid(service_, nullptr, 0);
    }
    if (!dir_.empty()) Shell("rm -rf " + dir_);
  }

  /// The cgroup id the kernel reports for a container's processes.
  uint64_t CgroupIdOf(const std::string& name, const std::string& v2_root) {
    const std::string pid = Shell("podman inspect -f '{{.State.Pid}}' " + name);
    const auto path = CgroupPathOfPid("/proc", std::stoul(pid));
    if (!path) return 0;
    return CgroupIdOfPath(v2_root, *path).value_or(0);
  }

  std::string dir_, socket_;
  pid_t service_ = -1;
};

TEST_F(PodmanAttributionTest, NamedContainersShowUpUnderTheirNames) {
  PipelineOptions options;  // the host's real /sys and /proc
  options.label_allowlist = {"com.example.team"};
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  clients.push_back(MakeDockerApiClient(socket_, std::chrono::seconds(2)));
  MetadataResolver metadata(std::move(clients), {});
  options.metadata = &metadata;

  ringbuf_probe* skel = ringbuf_probe__open();
  ASSERT_NE(skel, nullptr);
  skel->rodata->filter_cgroups = true;
  ASSERT_EQ(ringbuf_probe__load(skel), 0);
  CgroupResolver probe_resolver(HostPaths().CgroupMount());
  probe_resolver.PathOf(1);  // finds the v2 root
  ASSERT_FALSE(probe_resolver.V2Root().empty()) << "no cgroup v2 hierarchy";
  for (const std::string& name : kNames) {
    const uint64_t id = CgroupIdOf(name, probe_resolver.V2Root());
    ASSERT_GT(id, 1u) << name << " has no cgroup of its own";
    const uint8_t one = 1;
    ASSERT_EQ(bpf_map__update_elem(skel->maps.target_cgroups, &id, sizeof(id),
                                   &one, sizeof(one), BPF_ANY),
              0);
  }
  ASSERT_EQ(ringbuf_probe__attach(skel), 0);

  Pipeline pipeline(
      options, std::make_unique<BpfEventSource>(bpf_map__fd(skel->maps.events),
                                                bpf_map__fd(skel->maps.drops)));
  pipeline.Start();
  std::string error;
  auto server = MetricsServer::Start(
      "127.0.0.1:0", std::make_shared<PipelineCollectable>(&pipeline), &error);
  ASSERT_NE(server, nullptr) << error;
  std::atomic<bool> stop{false};
  std::thread loop([&] { pipeline.Run(stop, std::nullopt); });

  // Names arrive asynchronously: poll /metrics until both show (or 20 s).
  const std::string url =
      "http://127.0.0.1:" + std::to_string(server->Port()) + "/metrics";
  std::string body;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto shows_both = [&body] {
    return body.find("gpuq_queues{container=\"" + kNames[0] + "\"") !=
               std::string::npos &&
           body.find("gpuq_queues{container=\"" + kNames[1] + "\"") !=
               std::string::npos;
  };
  while (std::chrono::steady_clock::now() < give_up) {
    body = HttpGet(url);
    if (shows_both()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  const Snapshot snapshot = pipeline.TakeSnapshot();
  stop = true;
  loop.join();
  ringbuf_probe__destroy(skel);

  EXPECT_TRUE(shows_both()) << body;
  for (const std::string& name : kNames) {
    // The runtime's labels come along (allowlist) and the ids behind the
    // name are one gpuq_container_info series.
    EXPECT_NE(body.find("label_com_example_team=\"" + name + "\""),
              std::string::npos)
        << name;
    const std::string info = "gpuq_container_info{container=\"" + name + "\"";
    const auto at = body.find(info);
    ASSERT_NE(at, std::string::npos) << body;
    const std::string line = body.substr(at, body.find('\n', at) - at);
    EXPECT_NE(line.find("runtime=\"podman\""), std::string::npos) << line;
    EXPECT_NE(line.find("name=\"" + name + "\""), std::string::npos) << line;
  }
  EXPECT_NE(body.find("gpuq_cgroups_unresolved_total 0"), std::string::npos);

  // --once renders the same snapshot: both names, their ids (the wide
  // table's ID column) and pids.
  const std::string table = RenderOnce(snapshot, OnceFormat::kWide);
  for (const std::string& name : kNames) {
    const std::string id = Shell("podman inspect -f '{{.Id}}' " + name);
    EXPECT_NE(table.find(name), std::string::npos) << table;
    EXPECT_NE(table.find(id.substr(0, 12)), std::string::npos) << table;
  }
}

}  // namespace
}  // namespace gpuq

// /metrics cost and memory at scale, side by side with node_exporter.
//
// Each size runs in a fresh child process (this binary re-run with --child),
// so one size's heap cannot inflate the next one's RSS. The child builds the
// pipeline state, renders once, reads its RSS, then times rendering and HTTP
// scrapes of its own MetricsServer interleaved with scrapes of a
// node_exporter the parent started. The parent also runs the real gpuq-agent
// binary on a capture of each size and reads its RSS. See bench/README.md.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_args.h"
#include "bench_stats.h"
#include "export/collector.h"
#include "export/metrics_server.h"
#include "model/pipeline.h"
#include "scenario.h"
#include "sources/capture.h"

namespace {

using gpuq::bench::Median;

using Clock = std::chrono::steady_clock;
using Results = std::map<std::string, double>;

constexpr const char* kNodeExporter = "/usr/bin/prometheus-node-exporter";
constexpr double kRssTargetMiB = 30;  // at 1,000 queues (the target)

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A "VmRSS:"-style field of /proc/<pid>/status, in MiB (-1 if absent).
double StatusMiB(const std::string& pid, const std::string& field) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stod(line.substr(field.size() + 1)) / 1024;  // kB
    }
  }
  return -1;
}

// Exposition lines that are samples, not # HELP / # TYPE.
size_t CountSeries(const std::string& text) {
  size_t n = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') ++n;
  }
  return n;
}

// A loopback port nobody listens on right now.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Starts argv[0]. Its stdout goes to `out_fd`, or with its stderr to
// /dev/null when out_fd is -1.
pid_t Spawn(const std::vector<std::string>& args, int out_fd = -1) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (out_fd >= 0) {
    dup2(out_fd, STDOUT_FILENO);
  } else {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
  }
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

// SIGTERM, then SIGKILL if it is still there after 5 s.
void Stop(pid_t pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// One keep-alive connection to a /metrics endpoint.
class Scraper {
 public:
  explicit Scraper(int port)
      : curl_(curl_easy_init()),
        url_(fmt::format("http://127.0.0.1:{}/metrics", port)) {
    curl_easy_setopt(curl_, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &Scraper::Append);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &body_);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(curl_, CURLOPT_NOPROXY, "*");
  }
  ~Scraper() { curl_easy_cleanup(curl_); }
  Scraper(const Scraper&) = delete;
  Scraper& operator=(const Scraper&) = delete;

  // Seconds the GET took, or -1 if it failed.
  double Get() {
    body_.clear();
    const auto start = Clock::now();
    long status = 0;
    if (curl_easy_perform(curl_) != CURLE_OK) return -1;
    const double seconds = SecondsSince(start);
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
    return status == 200 ? seconds : -1;
  }
  const std::string& body() const { return body_; }

 private:
  static size_t Append(char* data, size_t size, size_t n, void* body) {
    static_cast<std::string*>(body)->append(data, size * n);
    return size * n;
  }
  CURL* curl_;
  std::string url_;
  std::string body_;
};

// Polls until `pid` serves /metrics with a series count that has stopped
// moving (a replay may still be running). False if it never does.
bool WaitServing(pid_t pid, Scraper* scraper) {
  size_t last = 0;
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return false;
    if (scraper->Get() >= 0) {
      const size_t n = CountSeries(scraper->body());
      if (n > 0 && n == last) return true;
      last = n;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// The child: one size, reported as "key value" lines on stdout.
int RunChild(const gpuq::ScaleParams& params, int node_port, int iterations) {
  Results r;
  r["rss_start_mib"] = StatusMiB("self", "VmRSS");

  // Fed straight from the generator, one event at a time as the live ring
  // buffer would: no event vector stays behind to inflate the RSS.
  gpuq::PipelineOptions options;
  options.use_sysfs = false;
  gpuq::Pipeline pipeline(options, nullptr);
  gpuq::ScenarioSummary summary;
  gpuq::BuildScaleScenario(
      params,
      [&pipeline](const gpuq::Event& e) {
        pipeline.Handle(e);
        return true;
      },
      &summary);
  r["rss_state_mib"] = StatusMiB("self", "VmRSS");
  auto collectable = std::make_shared<gpuq::PipelineCollectable>(&pipeline);
  const prometheus::TextSerializer serializer;
  const std::string text = serializer.Serialize(collectable->Collect());
  r["live_queues"] = static_cast<double>(summary.live_queues);
  r["series"] = static_cast<double>(CountSeries(text));
  r["bytes"] = static_cast<double>(text.size());
  r["rss_mib"] = StatusMiB("self", "VmRSS");
  r["hwm_mib"] = StatusMiB("self", "VmHWM");

  std::string error;
  const auto server =
      gpuq::MetricsServer::Start("127.0.0.1:0", collectable, &error);
  if (server == nullptr) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  Scraper gpuq(server->Port());
  Scraper node(node_port);
  if (gpuq.Get() < 0 || node.Get() < 0) {  // warm up both connections
    std::fprintf(stderr, "warm-up scrape failed\n");
    return 1;
  }
  // Interleaved: render, gpuq GET, node_exporter GET, render, ...
  std::vector<double> collect_s, render_s, gpuq_s, node_s;
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    const auto families = collectable->Collect();
    collect_s.push_back(SecondsSince(start));
    const std::string out = serializer.Serialize(families);
    render_s.push_back(SecondsSince(start));
    gpuq_s.push_back(gpuq.Get());
    node_s.push_back(node.Get());
  }
  if (*std::min_element(gpuq_s.begin(), gpuq_s.end()) < 0 ||
      *std::min_element(node_s.begin(), node_s.end()) < 0) {
    std::fprintf(stderr, "a scrape failed\n");
    return 1;
  }
  r["collect_ms"] = Median(collect_s) * 1e3;
  r["render_ms"] = Median(render_s) * 1e3;
  r["http_series"] = static_cast<double>(CountSeries(gpuq.body()));
  r["http_bytes"] = static_cast<double>(gpuq.body().size());
  r["http_ms"] = Median(gpuq_s) * 1e3;
  r["node_series"] = static_cast<double>(CountSeries(node.body()));
  r["node_bytes"] = static_cast<double>(node.body().size());
  r["node_ms"] = Median(node_s) * 1e3;
  for (const auto& [key, value] : r) fmt::print("{} {}\n", key, value);
  return 0;
}

// Re-runs this binary with --child for one size and parses its report.
// /proc/self/exe still execs if a rebuild replaced the file meanwhile.
bool MeasureInChild(const gpuq::ScaleParams& params, int node_port,
                    int iterations, Results* out) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  const pid_t pid = Spawn(
      {"/proc/self/exe", "--child", "--containers",
       std::to_string(params.containers), "--queues-per-container",
       std::to_string(params.queues_per_container), "--node-port",
       std::to_string(node_port), "--iterations", std::to_string(iterations)},
      fds[1]);
  close(fds[1]);
  std::FILE* report = fdopen(fds[0], "r");
  char line[256];
  while (std::fgets(line, sizeof(line), report) != nullptr) {
    char key[128];
    double value = 0;
    if (std::sscanf(line, "%127s %lf", key, &value) == 2) (*out)[key] = value;
  }
  std::fclose(report);
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

// RSS of the real gpuq-agent serving a replay of the same scenario.
bool MeasureAgent(const gpuq::ScaleParams& params, Results* out) {
  char path[] = "/tmp/gpuq-bench-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return false;
  close(fd);
  std::string error;
  auto writer = gpuq::CaptureWriter::Create(path, &error);
  bool ok = writer != nullptr &&
            gpuq::BuildScaleScenario(
                params,
                [&writer](const gpuq::Event& e) { return writer->Write(e); }) &&
            writer->Close(&error);
  const int port = FreeLoopbackPort();
  if (ok) {
    const pid_t pid =
        Spawn({GPUQ_AGENT_PATH, "--replay", path, "--web.listen-address",
               fmt::format("127.0.0.1:{}", port)});
    Scraper scraper(port);
    ok = WaitServing(pid, &scraper);
    if (ok) {
      (*out)["agent_series"] = static_cast<double>(CountSeries(scraper.body()));
      (*out)["agent_rss_mib"] = StatusMiB(std::to_string(pid), "VmRSS");
      (*out)["agent_hwm_mib"] = StatusMiB(std::to_string(pid), "VmHWM");
    }
    Stop(pid);
  }
  unlink(path);
  return ok;
}

const char* Verdict(bool pass) { return pass ? "PASS" : "MISS"; }

}  // namespace

int main(int argc, char** argv) {
  bool child = false;
  gpuq::ScaleParams params;
  int node_port = 0;
  int iterations = 30;
  gpuq::bench::Args args{
      "/metrics render cost and RSS at scale, vs node_exporter."};
  args.Flag("--child", child, "internal: measure one size");
  args.Add("--containers", params.containers);
  args.Add("--queues-per-container", params.queues_per_container);
  args.Add("--node-port", node_port);
  args.Add("--iterations", iterations, 1, 1000);
  if (const auto status = args.Parse(argc, argv)) return *status;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  if (child) return RunChild(params, node_port, iterations);

  // node_exporter with its default collectors, as it is usually deployed.
  const int port = FreeLoopbackPort();
  const std::string listen = fmt::format("127.0.0.1:{}", port);
  const pid_t node = Spawn({kNodeExporter, "--web.listen-address=" + listen});
  {
    Scraper probe(port);
    if (!WaitServing(node, &probe)) {
      std::fprintf(stderr, "%s did not start on port %d\n", kNodeExporter,
                   port);
      Stop(node);
      return 1;
    }
  }

  const std::vector<std::pair<uint32_t, uint32_t>> sizes = {{100, 10},
                                                            {1000, 10}};
  std::vector<Results> results;
  for (const auto& [containers, queues] : sizes) {
    params.containers = containers;
    params.queues_per_container = queues;
    Results r = {{"containers", containers}};
    if (!MeasureInChild(params, port, iterations, &r) ||
        !MeasureAgent(params, &r)) {
      std::fprintf(stderr, "measuring %u x %u failed\n", containers, queues);
      Stop(node);
      return 1;
    }
    results.push_back(r);
  }
  Stop(node);

  fmt::print(
      "medians of {} iterations, interleaved: render, gpuq GET, "
      "node_exporter GET, render, ...\n",
      iterations);
  for (const Results& r : results) {
    const double per_series_us = r.at("render_ms") * 1e3 / r.at("series");
    const double http_us = r.at("http_ms") * 1e3 / r.at("http_series");
    const double node_us = r.at("node_ms") * 1e3 / r.at("node_series");
    fmt::print("\n{:.0f} queues over {:.0f} containers\n", r.at("live_queues"),
               r.at("containers"));
    fmt::print(
        "  render (Collect+Serialize): {:.0f} series, {:.0f} KiB, "
        "{:.2f} ms (Collect {:.2f} ms), {:.2f} us/series\n",
        r.at("series"), r.at("bytes") / 1024, r.at("render_ms"),
        r.at("collect_ms"), per_series_us);
    fmt::print(
        "  HTTP gpuq:          {:6.0f} series, {:7.0f} KiB, {:7.2f} ms, "
        "{:.2f} us/series\n",
        r.at("http_series"), r.at("http_bytes") / 1024, r.at("http_ms"),
        http_us);
    fmt::print(
        "  HTTP node_exporter: {:6.0f} series, {:7.0f} KiB, {:7.2f} ms, "
        "{:.2f} us/series\n",
        r.at("node_series"), r.at("node_bytes") / 1024, r.at("node_ms"),
        node_us);
    fmt::print(
        "  ratio gpuq/node_exporter time per series (HTTP): {:.3f}  "
        "[{}: no worse than node_exporter]\n",
        http_us / node_us, Verdict(http_us <= node_us));
    fmt::print(
        "  RSS bench child: {:.1f} MiB at start, {:.1f} with the state, "
        "{:.1f} after one render (VmHWM {:.1f})\n",
        r.at("rss_start_mib"), r.at("rss_state_mib"), r.at("rss_mib"),
        r.at("hwm_mib"));
    fmt::print(
        "  RSS gpuq-agent --replay: {:.1f} MiB (VmHWM {:.1f}), "
        "{:.0f} series served\n",
        r.at("agent_rss_mib"), r.at("agent_hwm_mib"), r.at("agent_series"));
  }
  const Results& small = results.front();
  fmt::print(
      "\nagent RSS at {:.0f} queues: {:.1f} MiB  [{}: under {:.0f} "
      "MiB]\n",
      small.at("live_queues"), small.at("agent_rss_mib"),
      Verdict(small.at("agent_rss_mib") < kRssTargetMiB), kRssTargetMiB);
  curl_global_cleanup();
  return 0;  // benchmarks report; they do not gate
}

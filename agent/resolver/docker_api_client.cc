// The Docker Engine API client: GET /containers/<id>/json through libcurl
// over the runtime's unix socket, and the events stream's lines.
#include "resolver/docker_api_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "resolver/runtime_json.h"

namespace gpuq {

// The label names and readers every runtime client shares.
using namespace runtime_json;

// Reads one inspect document (Docker Engine API ContainerInspectResponse;
// podman's compat handler returns the same shape).
std::optional<ContainerMetadata> ParseDockerInspect(const std::string& body,
                                                    std::string* error) {
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    *error = "response is not a JSON object";
    return std::nullopt;
  }
  ContainerMetadata meta;
  meta.source = "docker-api";
  // The API reports names with the leading '/' of Docker's name tree.
  meta.name = StringField(doc, "Name");
  if (!meta.name.empty() && meta.name.front() == '/') meta.name.erase(0, 1);
  const auto config = doc.find("Config");
  if (config != doc.end() && config->is_object()) {
    const auto labels = config->find("Labels");
    if (labels != config->end()) meta.labels = StringMap(*labels);
  }
  FillKubernetes(meta.labels, kKubeletPodName, kKubeletPodNamespace,
                 kKubeletContainerName, &meta);
  return meta;
}

bool ParseDockerEvent(const std::string& line, std::string* container_id,
                      std::string* action, ContainerMetadata* said) {
  const nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return false;
  // API >= 1.22 spells it Type/Action/Actor; older ones only status/id.
  if (StringField(doc, "Type") != "container") return false;
  *action = StringField(doc, "Action");
  const auto actor = doc.find("Actor");
  if (actor == doc.end() || !actor->is_object()) return false;
  *container_id = StringField(*actor, "ID");
  if (!IsSafeId(*container_id)) return false;
  ContainerMetadata meta;
  meta.source = "docker-events";
  const auto attributes = actor->find("Attributes");
  if (attributes != actor->end()) meta.labels = StringMap(*attributes);
  // Docker's attributes are the container's labels plus these keys of its
  // own (podman's compat API adds a few more); they are not labels.
  for (const char* own : {"name", "image", "podId", "containerExitCode"}) {
    if (own == std::string("name")) meta.name = ValueOf(meta.labels, own);
    meta.labels.erase(own);
  }
  FillKubernetes(meta.labels, kKubeletPodName, kKubeletPodNamespace,
                 kKubeletContainerName, &meta);
  *said = std::move(meta);
  return true;
}

namespace {

// Responses of GET /containers/<id>/json are a few KiB to a few hundred KiB;
// anything larger is not an inspect document.
constexpr size_t kMaxResponseBytes = 8u << 20;

// The version prefix pins the response shape; v1.41 is served by dockerd
// 20.10+ and by podman's compat API (it accepts any version up to its own).
constexpr char kDockerApiPrefix[] = "http://localhost/v1.41";

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t bytes = size * count;
  if (body->size() + bytes > kMaxResponseBytes) return 0;  // -> WRITE_ERROR
  body->append(data, bytes);
  return bytes;
}

// Why connecting to the socket failed, from the filesystem: libcurl's own
// message names "localhost port 80", which misleads for a unix socket.
std::string SocketProblem(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISSOCK(st.st_mode)) return "not a socket";
  return "connection refused";
}

class DockerApiClient final : public RuntimeClient {
 public:
  DockerApiClient(std::string socket_path, std::chrono::milliseconds timeout)
      : socket_path_(std::move(socket_path)),
        timeout_ms_(std::max<long>(1, static_cast<long>(timeout.count()))) {}

  std::optional<ContainerMetadata> Lookup(const ContainerIdentity& id,
                                          std::string* error) override {
    try {
      return LookupOrThrow(id, error);
    } catch (const std::exception& e) {  // bad_alloc, json type errors
      *error = OneLine(fmt::format("docker-api: {}", e.what()));
      return std::nullopt;
    }
  }

  std::string Name() const override { return "docker-api"; }
  void Cancel() override { cancelled_.store(true); }

 private:
  struct Response {
    long status = 0;
    std::string body;
  };

  std::optional<ContainerMetadata> LookupOrThrow(const ContainerIdentity& id,
                                                 std::string* error) {
    if (!IsSafeId(id.container_id)) {
      *error = OneLine(fmt::format("docker-api: invalid container id \"{}\"",
                                   id.container_id));
      return std::nullopt;
    }
    const std::string path =
        fmt::format("/containers/{}/json", id.container_id);
    Response response;
    std::string problem;
    if (!Get(path, &response, &problem)) {
      *error = Describe(id, problem);
      return std::nullopt;
    }
    // 404 "No such container": the container belongs to another runtime.
    if (response.status == 404) return std::nullopt;
    if (response.status != 200) {
      *error = Describe(id, HttpProblem(response));
      return std::nullopt;
    }
    std::string parse_error;
    auto meta = ParseDockerInspect(response.body, &parse_error);
    if (!meta) *error = Describe(id, parse_error);
    return meta;
  }

  // GET kDockerApiPrefix + path over the socket. False with *problem set when
  // no complete HTTP response arrived within the timeout.
  bool Get(const std::string& path, Response* out, std::string* problem) const {
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                             curl_easy_cleanup);
    if (!curl) {
      *problem = "curl_easy_init failed";
      return false;
    }
    const std::string url = kDockerApiPrefix + path;
    char errbuf[CURL_ERROR_SIZE] = {};
    CURL* c = curl.get();
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket_path_.c_str());
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    // An http_proxy in the agent's environment must not capture the request.
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms_);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms_);
    // No SIGALRM-based timeouts: the agent is multi-threaded.
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuq-agent/" GPUQ_VERSION);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &AppendBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out->body);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    const CURLcode rc = Perform(c);
    if (rc != CURLE_OK) {
      *problem = CurlProblem(rc, errbuf);
      return false;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    return true;
  }

  // curl_easy_perform() through a multi handle polled in short slices, so
  // that Cancel() ends a request within one slice (a shutdown must not wait
  // for --runtime.timeout). CURLOPT_TIMEOUT_MS still bounds the request.
  CURLcode Perform(CURL* c) const {
    constexpr int kSliceMs = 50;
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(
        curl_multi_init(), curl_multi_cleanup);
    if (!multi || curl_multi_add_handle(multi.get(), c) != CURLM_OK) {
      return CURLE_OUT_OF_MEMORY;
    }
    CURLcode rc = CURLE_OK;
    int running = 1;
    while (true) {
      if (curl_multi_perform(multi.get(), &running) != CURLM_OK) {
        rc = CURLE_RECV_ERROR;
        break;
      }
      if (running == 0) {
        int left = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
          if (msg->msg == CURLMSG_DONE) rc = msg->data.result;
        }
        break;
      }
      if (cancelled_.load()) {
        rc = CURLE_ABORTED_BY_CALLBACK;
        break;
      }
      curl_multi_poll(multi.get(), nullptr, 0, kSliceMs, nullptr);
    }
    curl_multi_remove_handle(multi.get(), c);
    return rc;
  }

  std::string CurlProblem(CURLcode rc, const char* errbuf) const {
    switch (rc) {
      case CURLE_ABORTED_BY_CALLBACK:
        return "cancelled: the agent is stopping";
      case CURLE_COULDNT_CONNECT:
        return SocketProblem(socket_path_);
      case CURLE_OPERATION_TIMEDOUT:
        return fmt::format("no answer within {} ms", timeout_ms_);
      case CURLE_WRITE_ERROR:
        return fmt::format("response larger than {} bytes", kMaxResponseBytes);
      default:
        return *errbuf != '\0' ? std::string(errbuf) : curl_easy_strerror(rc);
    }
  }

  // Docker's error bodies are {"message": "..."}; quote it when present.
  static std::string HttpProblem(const Response& response) {
    const nlohmann::json doc =
        nlohmann::json::parse(response.body, nullptr, false);
    const std::string message = StringField(doc, "message");
    return message.empty()
               ? fmt::format("HTTP {}", response.status)
               : fmt::format("HTTP {}: {}", response.status, message);
  }

  // The message names the container by its short id, as `docker ps` does.
  std::string Describe(const ContainerIdentity& id,
                       const std::string& problem) const {
    return OneLine(
        fmt::format("docker-api GET /containers/{}.../json on {}: {}",
                    id.ShortId(), socket_path_, problem));
  }

  std::string socket_path_;
  long timeout_ms_;
  std::atomic<bool> cancelled_{false};
};

// libcurl's global state must be set up once before any handle; since 7.84
// curl_global_init is thread-safe, but older ones are not, so do it here.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::unique_ptr<RuntimeClient> MakeDockerApiClient(
    std::string socket_path, std::chrono::milliseconds timeout) {
  InitCurlOnce();
  return std::make_unique<DockerApiClient>(std::move(socket_path), timeout);
}

}  // namespace gpuq

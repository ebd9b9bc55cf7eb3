// Container metadata from the runtimes: a Docker Engine API client (libcurl
// over a unix socket), an OCI bundle reader for containerd and CRI-O, and the
// asynchronous cache in front of them.
#include "resolver/container_metadata.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/log.h"
#include "common/worker_thread.h"

namespace gpuq {
namespace {

using Labels = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------
// Label and annotation names, each as the runtime that writes it spells it.

// Kubelet's container labels (kubernetes pkg/kubelet/types/labels.go:
// KubernetesPodNameLabel, KubernetesPodNamespaceLabel,
// KubernetesContainerNameLabel). Kubelet sends them as CRI
// ContainerConfig.Labels; cri-dockerd (and dockershim before it) stores them
// as Docker labels, and CRI-O copies every CRI label into the OCI spec
// annotations (cri-o internal/factory/container/container.go,
// SpecAddAnnotations: `for k, v := range labels { c.spec.AddAnnotation(k, v)
// }`).
constexpr char kKubeletPodName[] = "io.kubernetes.pod.name";
constexpr char kKubeletPodNamespace[] = "io.kubernetes.pod.namespace";
constexpr char kKubeletContainerName[] = "io.kubernetes.container.name";

// containerd's CRI plugin (containerd internal/cri/annotations/annotations.go,
// formerly pkg/cri/annotations: SandboxName, SandboxNamespace,
// ContainerName, set by DefaultCRIAnnotations). The container name is only on
// containers, not on the pause sandbox.
constexpr char kCriSandboxName[] = "io.kubernetes.cri.sandbox-name";
constexpr char kCriSandboxNamespace[] = "io.kubernetes.cri.sandbox-namespace";
constexpr char kCriContainerName[] = "io.kubernetes.cri.container-name";

// CRI-O's own name for the container, "k8s_<ctr>_<pod>_<ns>_<uid>_<attempt>"
// (podman pkg/annotations/annotations.go `Name`, set in cri-o
// SpecAddAnnotations from container.SetNameAndID): the runtime name, in the
// same form cri-dockerd gives Docker containers (cri-dockerd core/naming.go).
constexpr char kCrioName[] = "io.kubernetes.cri-o.Name";

// nerdctl's human-friendly name (nerdctl pkg/labels/labels.go `Name` =
// "nerdctl/" + "name"). nerdctl sets it as a containerd container label and
// copies all container labels into the OCI annotations
// (PropagateContainerdLabelsToOCIAnnotations in pkg/cmd/container/create.go).
constexpr char kNerdctlName[] = "nerdctl/name";

// ---------------------------------------------------------------------------
// Small helpers.

// Ids end up in a URL path and in a file path: accept only the characters
// runtimes generate (hex for all of them) so "../" or "?" cannot steer either.
bool IsSafeId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
           c == '-' || c == '.';
  });
}

// Error strings become log lines: one line of printable text, bounded (a
// 64-hex bundle path alone is 150 characters, so the bound is generous).
std::string OneLine(std::string text) {
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  constexpr size_t kMaxLen = 400;
  if (text.size() > kMaxLen) text = text.substr(0, kMaxLen) + "...";
  return text;
}

std::string StringField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Label values are kept forever and recorded into captures; real ones are
// short, while annotations can carry whole documents (kubectl's
// last-applied-configuration, CRI-O's io.kubernetes.cri-o.Annotations copy
// of all of them). Longer values are dropped.
constexpr size_t kMaxLabelValueBytes = 1024;

// Docker labels and OCI annotations are string maps; anything else in them is
// skipped rather than failing the whole lookup.
Labels StringMap(const nlohmann::json& value) {
  Labels out;
  if (!value.is_object()) return out;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) continue;
    const auto& text = v.get_ref<const std::string&>();
    if (text.size() <= kMaxLabelValueBytes) out.emplace(key, text);
  }
  return out;
}

std::string ValueOf(const Labels& labels, const char* key) {
  const auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

// Fills pod/ns/k8s_container from the three keys a runtime uses, keeping any
// value already set.
void FillKubernetes(const Labels& labels, const char* pod_key,
                    const char* ns_key, const char* container_key,
                    ContainerMetadata* meta) {
  if (meta->pod.empty()) meta->pod = ValueOf(labels, pod_key);
  if (meta->ns.empty()) meta->ns = ValueOf(labels, ns_key);
  if (meta->k8s_container.empty()) {
    meta->k8s_container = ValueOf(labels, container_key);
  }
}

bool HasIdentity(const ContainerMetadata& meta) {
  return !meta.name.empty() || !meta.pod.empty() || !meta.k8s_container.empty();
}

// ---------------------------------------------------------------------------
// Docker Engine API.

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

// Reads one inspect document (Docker Engine API ContainerInspectResponse;
// podman's compat handler returns the same shape).
std::optional<ContainerMetadata> ParseInspect(const std::string& body,
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
    auto meta = ParseInspect(response.body, &parse_error);
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

// ---------------------------------------------------------------------------
// OCI bundles.

// config.json files are tens of KiB (CRI-O copies every pod annotation in);
// a bigger file is not a runtime spec.
constexpr off_t kMaxConfigBytes = 16 << 20;

enum class ReadStatus { kOk, kMissing, kError };

// Whole-file read with errno kept apart: a missing file means "not this
// runtime's container", any other failure is worth reporting.
ReadStatus ReadConfig(const std::string& path, std::string* content,
                      std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return ReadStatus::kMissing;
    *error = fmt::format("open {}: {}", path, std::strerror(errno));
    return ReadStatus::kError;
  }
  content->clear();
  char buf[16384];
  ReadStatus status = ReadStatus::kOk;
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = fmt::format("read {}: {}", path, std::strerror(errno));
      status = ReadStatus::kError;
      break;
    }
    if (n == 0) break;
    content->append(buf, static_cast<size_t>(n));
    if (content->size() > static_cast<size_t>(kMaxConfigBytes)) {
      *error = fmt::format("{}: larger than {} bytes", path, kMaxConfigBytes);
      status = ReadStatus::kError;
      break;
    }
  }
  ::close(fd);
  return status;
}

// Names of the subdirectories of `dir`, sorted; empty if `dir` is missing.
bool ListDirs(const std::string& dir, std::vector<std::string>* names,
              std::string* error) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return true;
    *error = fmt::format("opendir {}: {}", dir, std::strerror(errno));
    return false;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) names->push_back(name);
  }
  ::closedir(d);
  std::sort(names->begin(), names->end());
  return true;
}

// Metadata from a runtime spec's annotations. All three annotation families
// are tried: only one is present in any real bundle.
std::optional<ContainerMetadata> ParseBundle(const std::string& content,
                                             const std::string& source,
                                             std::string* error) {
  const nlohmann::json doc = nlohmann::json::parse(content, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    *error = "not a JSON object";
    return std::nullopt;
  }
  ContainerMetadata meta;
  meta.source = source;
  const auto annotations = doc.find("annotations");
  if (annotations != doc.end()) meta.labels = StringMap(*annotations);
  FillKubernetes(meta.labels, kCriSandboxName, kCriSandboxNamespace,
                 kCriContainerName, &meta);
  FillKubernetes(meta.labels, kKubeletPodName, kKubeletPodNamespace,
                 kKubeletContainerName, &meta);
  meta.name = ValueOf(meta.labels, kNerdctlName);
  if (meta.name.empty()) meta.name = ValueOf(meta.labels, kCrioName);
  return meta;
}

class OciBundleClient final : public RuntimeClient {
 public:
  explicit OciBundleClient(std::string run_dir) : run_dir_(std::move(run_dir)) {
    while (run_dir_.size() > 1 && run_dir_.back() == '/') run_dir_.pop_back();
  }

  std::optional<ContainerMetadata> Lookup(const ContainerIdentity& id,
                                          std::string* error) override {
    try {
      return LookupOrThrow(id, error);
    } catch (const std::exception& e) {
      *error = OneLine(fmt::format("oci-bundle: {}", e.what()));
      return std::nullopt;
    }
  }

  std::string Name() const override { return "oci-bundle"; }

 private:
  struct Candidate {
    std::string path;
    std::string source;
  };

  std::optional<ContainerMetadata> LookupOrThrow(const ContainerIdentity& id,
                                                 std::string* error) {
    if (!IsSafeId(id.container_id)) {
      *error = OneLine(fmt::format("oci-bundle: invalid container id \"{}\"",
                                   id.container_id));
      return std::nullopt;
    }
    std::vector<Candidate> candidates;
    std::string problem;
    if (!AddCandidates(id.container_id, &candidates, &problem)) {
      *error = OneLine("oci-bundle: " + problem);
      return std::nullopt;
    }
    for (const Candidate& c : candidates) {
      std::string content;
      const ReadStatus status = ReadConfig(c.path, &content, &problem);
      if (status == ReadStatus::kMissing) continue;
      if (status == ReadStatus::kError) {
        *error = OneLine("oci-bundle: " + problem);
        return std::nullopt;
      }
      auto meta = ParseBundle(content, c.source, &problem);
      if (!meta) {
        *error = OneLine(fmt::format("oci-bundle: {}: {}", c.path, problem));
        return std::nullopt;
      }
      // A bundle without names (dockerd's "moby" namespace, plain podman)
      // says nothing: let another client answer rather than pin emptiness.
      if (HasIdentity(*meta)) return meta;
    }
    return std::nullopt;
  }

  // Every place a runtime may have put this container's config.json.
  bool AddCandidates(const std::string& cid, std::vector<Candidate>* out,
                     std::string* problem) const {
    // containerd's v2 shims: <state>/<namespace>/<id>/config.json, state
    // being /run/containerd/io.containerd.runtime.v2.task (containerd
    // core/runtime/v2/bundle.go NewBundle: Path = filepath.Join(state, ns,
    // id), spec written to oci.ConfigFilename). CRI uses namespace "k8s.io",
    // dockerd "moby", nerdctl and ctr "default"; any may exist.
    const std::string task_root =
        run_dir_ + "/containerd/io.containerd.runtime.v2.task";
    std::vector<std::string> namespaces;
    if (!ListDirs(task_root, &namespaces, problem)) return false;
    for (const std::string& ns : namespaces) {
      out->push_back({fmt::format("{}/{}/{}/config.json", task_root, ns, cid),
                      "containerd-bundle"});
    }
    // containers/storage: CRI-O saves the spec into the container's RunDir,
    // /run/containers/storage/overlay-containers/<id>/userdata (cri-o
    // server/container_create.go: specgen.SaveToFile(filepath.Join(
    // containerInfo.RunDir, "config.json"))); root podman uses the same dir.
    out->push_back({fmt::format("{}/containers/storage/overlay-containers/{}/"
                                "userdata/config.json",
                                run_dir_, cid),
                    "containers-storage-bundle"});
    return true;
  }

  std::string run_dir_;
};

// ---------------------------------------------------------------------------
// Resolver helpers.

struct Outcome {
  std::optional<ContainerMetadata> metadata;
  // Each client asked: its Name() and its error ("" when it answered or
  // did not know the container).
  std::vector<std::pair<std::string, std::string>> asked;
};

// Asks the clients in order until one answers. `stopping` is checked before
// each client so a destructor waits for at most the client already running.
Outcome AskClients(const std::vector<std::unique_ptr<RuntimeClient>>& clients,
                   const ContainerIdentity& id,
                   const std::function<bool()>& stopping) {
  Outcome out;
  for (const auto& client : clients) {
    if (stopping()) break;
    std::string error;
    std::optional<ContainerMetadata> meta;
    try {
      meta = client->Lookup(id, &error);
    } catch (const std::exception& e) {  // a client bug must not end the
      error = e.what();                  // worker thread (std::terminate)
    } catch (...) {
      error = "unknown exception";
    }
    out.asked.emplace_back(client->Name(), error);
    if (meta) {
      out.metadata = std::move(meta);
      break;
    }
  }
  return out;
}

}  // namespace

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

std::optional<ContainerMetadata> ParseDockerInspect(const std::string& body,
                                                    std::string* error) {
  return ParseInspect(body, error);
}

std::optional<ContainerMetadata> ParseOciBundle(const std::string& content,
                                                const std::string& source,
                                                std::string* error) {
  return ParseBundle(content, source, error);
}

std::unique_ptr<RuntimeClient> MakeDockerApiClient(
    std::string socket_path, std::chrono::milliseconds timeout) {
  InitCurlOnce();
  return std::make_unique<DockerApiClient>(std::move(socket_path), timeout);
}

std::unique_ptr<RuntimeClient> MakeOciBundleClient(std::string run_dir) {
  return std::make_unique<OciBundleClient>(std::move(run_dir));
}

MetadataResolver::MetadataResolver(
    std::vector<std::unique_ptr<RuntimeClient>> clients, Options options)
    : clients_(std::move(clients)), options_(options) {
  worker_ = StartWorkerThread("container metadata", [this] { Work(); });
}

MetadataResolver::~MetadataResolver() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  // A lookup in progress returns within ~50 ms instead of its timeout.
  for (const auto& client : clients_) client->Cancel();
  cv_.notify_all();
  idle_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::optional<ContainerMetadata> MetadataResolver::Get(
    const ContainerIdentity& id) {
  if (!id.InContainer()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  Entry& entry = cache_[id.container_id];
  entry.last_used = now;
  if (entry.metadata) return entry.metadata;
  if (!entry.queued && !stop_ && now >= entry.next_try) {
    entry.queued = true;
    queue_.push_back(id);
    cv_.notify_one();
  }
  return std::nullopt;
}

void MetadataResolver::Announce(const std::string& container_id,
                                std::optional<ContainerMetadata> said) {
  if (container_id.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = cache_[container_id];
  entry.last_used = std::chrono::steady_clock::now();
  if (said && HasIdentity(*said)) entry.said = std::move(said);
  if (entry.metadata || entry.queued || stop_) return;
  // Ahead of the queue: this container may live for a second only. A
  // lookup that failed before (asked before the runtime knew it) is retried.
  entry.queued = true;
  ContainerIdentity id;
  id.container_id = container_id;
  queue_.push_front(std::move(id));
  cv_.notify_one();
}

std::map<std::string, uint64_t> MetadataResolver::Errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

uint64_t MetadataResolver::Evicted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evicted_;
}

size_t MetadataResolver::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

void MetadataResolver::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return stop_ || (queue_.empty() && !busy_); });
}

void MetadataResolver::TrimLocked(std::chrono::steady_clock::time_point now) {
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>>
      idle;
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (it->second.queued) {
      ++it;  // the worker will write into it
    } else if (now - it->second.last_used >= options_.retention) {
      it = cache_.erase(it);
    } else {
      if (cache_.size() > options_.capacity) {
        idle.emplace_back(it->second.last_used, it->first);
      }
      ++it;
    }
  }
  if (cache_.size() <= options_.capacity) return;
  std::sort(idle.begin(), idle.end());
  for (const auto& [used, id] : idle) {
    if (cache_.size() <= options_.capacity) break;
    cache_.erase(id);
    ++evicted_;
  }
}

void MetadataResolver::Work() {
  constexpr auto kTrimEvery = std::chrono::seconds(1);
  const auto stopping = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  };
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, kTrimEvery, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_trim_ || cache_.size() > options_.capacity) {
      TrimLocked(now);
      next_trim_ = now + kTrimEvery;
    }
    if (queue_.empty()) continue;
    const ContainerIdentity id = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();  // clients may block for their whole timeout
    Outcome outcome = AskClients(clients_, id, stopping);
    lock.lock();
    for (const auto& [name, error] : outcome.asked) {
      if (!error.empty()) ++errors_[name];
      // Counted every time, written once per different error (and again
      // after the client answers).
      Log().WriteOnChange(LogLevel::kWarn, "runtime " + name, error);
    }
    Entry& entry = cache_[id.container_id];
    entry.queued = false;
    if (!outcome.metadata && entry.said) {
      // Gone before it could be asked: what its announcement said stands.
      outcome.metadata = entry.said;
    }
    if (outcome.metadata) {
      entry.metadata = std::move(outcome.metadata);  // pinned from now on
      entry.said.reset();
    } else {
      entry.next_try = std::chrono::steady_clock::now() + options_.retry_after;
    }
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
  busy_ = false;
  idle_cv_.notify_all();
}

}  // namespace gpuq

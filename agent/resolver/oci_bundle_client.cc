// The OCI bundle client: finds the config.json containerd or CRI-O wrote for
// a container under the host's /run and reads its annotations.
#include "resolver/oci_bundle_client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "resolver/runtime_json.h"

namespace gpuq {

// The label names and readers every runtime client shares.
using namespace runtime_json;

// Metadata from a runtime spec's annotations. All three annotation families
// are tried: only one is present in any real bundle.
std::optional<ContainerMetadata> ParseOciBundle(const std::string& content,
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

namespace {

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
      auto meta = ParseOciBundle(content, c.source, &problem);
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

}  // namespace

std::unique_ptr<RuntimeClient> MakeOciBundleClient(std::string run_dir) {
  return std::make_unique<OciBundleClient>(std::move(run_dir));
}

}  // namespace gpuq

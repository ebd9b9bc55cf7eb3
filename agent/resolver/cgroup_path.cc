// Container identity from a cgroup path. Every shape accepted here is one a
// container runtime or kubelet really creates; anything else is the host.
// Plain string_view scanning: this runs once per newly seen cgroup, and
// std::regex would cost more than the rest of the attribution.
#include "resolver/cgroup_path.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuq {
namespace {

// Container ids of docker, podman, CRI-O and containerd's CRI plugin are 32
// random bytes printed as lowercase hex (moby/pkg/stringid, containers/storage,
// containerd's util.GenerateID).
constexpr std::size_t kContainerIdLength = 64;
// Kubelet derives static pods' UIDs from an MD5 of the manifest, printed as
// lowercase hex without dashes (pkg/kubelet/config/common.go).
constexpr std::size_t kStaticPodUidLength = 32;
// Dashed UUID: 8-4-4-4-12.
constexpr std::size_t kUuidLength = 36;

constexpr std::string_view kScopeSuffix = ".scope";
constexpr std::string_view kSliceSuffix = ".slice";
// cgroup v2 marks removed cgroups this way in /proc/<pid>/cgroup.
constexpr std::string_view kDeletedSuffix = " (deleted)";

bool IsLowerHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool IsAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

bool IsLowerHexString(std::string_view s) {
  for (char c : s) {
    if (!IsLowerHex(c)) return false;
  }
  return !s.empty();
}

bool IsContainerId(std::string_view s) {
  return s.size() == kContainerIdLength && IsLowerHexString(s);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

// A lowercase UUID whose four group separators are `sep`: '-' as the API
// prints it (cgroupfs driver), '_' after systemd unit-name escaping.
bool IsUuid(std::string_view s, char sep) {
  if (s.size() != kUuidLength) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool separator_slot = i == 8 || i == 13 || i == 18 || i == 23;
    if (separator_slot ? s[i] != sep : !IsLowerHex(s[i])) return false;
  }
  return true;
}

// The pod UID in its dashed API form, if `uid` is one written with `sep`.
std::optional<std::string> NormalizePodUid(std::string_view uid, char sep) {
  if (uid.size() == kStaticPodUidLength && IsLowerHexString(uid)) {
    return std::string(uid);
  }
  if (!IsUuid(uid, sep)) return std::nullopt;
  std::string dashed(uid);
  for (char& c : dashed) {
    if (c == sep) c = '-';
  }
  return dashed;
}

// The UID of a kubelet pod cgroup:
//  - systemd driver: `kubepods[-<qos>]-pod<uid>.slice`, the UID's dashes
//    escaped to '_' (systemd reserves '-' for slice nesting), possibly with
//    a prefix from --cgroup-root (kind: `kubelet-kubepods-...`);
//  - cgroupfs driver: `pod<uid>` below a `kubepods` cgroup
//    (`/kubepods/<qos>/pod<uid>` or `/kubepods/pod<uid>` for Guaranteed).
std::optional<std::string> PodUidOf(std::string_view component,
                                    bool under_kubepods) {
  if (EndsWith(component, kSliceSuffix)) {
    std::string_view stem =
        component.substr(0, component.size() - kSliceSuffix.size());
    if (stem.find("kubepods") == std::string_view::npos) return std::nullopt;
    const std::size_t pos = stem.rfind("-pod");
    if (pos == std::string_view::npos) return std::nullopt;
    return NormalizePodUid(stem.substr(pos + 4), '_');
  }
  if (under_kubepods && StartsWith(component, "pod")) {
    return NormalizePodUid(component.substr(3), '-');
  }
  return std::nullopt;
}

// A containerd namespace name as containerd's identifiers.Validate accepts
// it: dot-separated labels of alphanumerics joined by runs of '-'.
bool IsContainerdNamespace(std::string_view s) {
  constexpr std::size_t kMaxLength = 76;
  if (s.empty() || s.size() > kMaxLength) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (std::size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    const char prev = s[i - 1];
    if (IsAlnum(c)) continue;
    if (c == '-' && (IsAlnum(prev) || prev == '-')) continue;
    if (c == '.' && IsAlnum(prev)) continue;
    return false;
  }
  return true;
}

// systemd unit names are valid containerd identifiers too, but no runtime
// puts a bare container id directly below one (and kubelet's `kubepods` is
// not a containerd namespace); rejecting them keeps `/<ns>/<id>` strict.
bool IsPlainContainerdParent(std::string_view ns) {
  if (!IsContainerdNamespace(ns) || ns == "kubepods") return false;
  for (std::string_view unit_suffix :
       {".slice", ".scope", ".service", ".mount", ".socket"}) {
    if (EndsWith(ns, unit_suffix)) return false;
  }
  return true;
}

struct Match {
  std::string_view id;
  std::string_view runtime;
  bool cgroupfs_libpod = false;  // podman's cgroupfs form (no .scope)
};

// `<prefix><id>.scope` (systemd driver: the runtime asks systemd for a
// transient scope unit) or `<prefix><id>` (cgroupfs driver).
struct PrefixRule {
  std::string_view prefix;
  std::string_view runtime;
  bool cgroupfs_form;  // whether the runtime also uses `<prefix><id>`
};

constexpr PrefixRule kPrefixRules[] = {
    // dockerd (and cri-dockerd) with the systemd driver. Its cgroupfs driver
    // uses a bare id, matched below.
    {"docker-", "docker", false},
    // podman: systemd `libpod-<id>.scope` (root and rootless),
    // cgroupfs `/libpod_parent/libpod-<id>`. The monitor's
    // `libpod-conmon-<id>.scope` fails the id check.
    {"libpod-", "podman", true},
    // CRI-O: systemd `crio-<id>.scope`; cgroupfs `<parent>/crio-<id>`
    // (internal/config/cgmgr: CrioPrefix + "-" + id). The monitor's
    // `crio-conmon-<id>[.scope]` fails the id check.
    {"crio-", "cri-o", true},
    // containerd's CRI plugin with SystemdCgroup=true: runc turns the
    // "slice:cri-containerd:<id>" cgroupsPath into this scope.
    {"cri-containerd-", "containerd", false},
    // nerdctl (plain containerd) with the systemd driver.
    {"nerdctl-", "containerd", false},
};

std::optional<Match> MatchPrefixed(std::string_view component) {
  for (const PrefixRule& rule : kPrefixRules) {
    if (!StartsWith(component, rule.prefix)) continue;
    std::string_view rest = component.substr(rule.prefix.size());
    const bool scope = EndsWith(rest, kScopeSuffix);
    if (scope) rest.remove_suffix(kScopeSuffix.size());
    if (!scope && !rule.cgroupfs_form) continue;
    if (!IsContainerId(rest)) continue;
    return Match{rest, rule.runtime, !scope && rule.runtime == "podman"};
  }
  return std::nullopt;
}

// runc's cgroupfs driver handed a systemd-style cgroupsPath
// ("<slice>:<prefix>:<id>", when containerd/CRI-O and runc disagree on the
// driver) creates it literally, below the runtime's own cgroup:
//   /system.slice/containerd.service/
//       kubepods-burstable-pod<uid>.slice:cri-containerd:<id>
// (kubernetes/kubernetes#106514, containerd/containerd#4900).
std::optional<Match> MatchSystemdTriple(std::string_view component,
                                        std::optional<std::string>* pod_uid) {
  const std::size_t first = component.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t last = component.rfind(':');
  if (last == first) return std::nullopt;
  const std::string_view slice = component.substr(0, first);
  const std::string_view prefix = component.substr(first + 1, last - first - 1);
  const std::string_view id = component.substr(last + 1);
  if (!IsContainerId(id)) return std::nullopt;
  std::string_view runtime;
  if (prefix == "cri-containerd") {
    runtime = "containerd";
  } else if (prefix == "crio") {
    runtime = "cri-o";
  } else {
    return std::nullopt;
  }
  *pod_uid = PodUidOf(slice, /*under_kubepods=*/false);
  return Match{id, runtime};
}

// A bare 64-hex component is a container only where a runtime puts one:
//  - `/docker/<id>`: dockerd's cgroupfs driver (default cgroup parent
//    "/docker"; v1 hierarchies and v2 alike);
//  - `.../pod<uid>/<id>`: containerd's CRI plugin under kubelet's cgroupfs
//    driver (dockershim used the same shape; reported as containerd);
//  - `/<namespace>/<id>`: plain containerd (ctr, nerdctl with cgroupfs)
//    names the cgroup after the containerd namespace.
std::optional<Match> MatchBare(std::string_view component,
                               std::string_view parent, std::size_t index,
                               bool parent_is_pod) {
  if (!IsContainerId(component)) return std::nullopt;
  if (parent == "docker") return Match{component, "docker"};
  if (parent_is_pod) return Match{component, "containerd"};
  if (index == 1 && IsPlainContainerdParent(parent)) {
    return Match{component, "containerd"};
  }
  return std::nullopt;
}

std::vector<std::string_view> SplitComponents(std::string_view path) {
  std::vector<std::string_view> components;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) components.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return components;
}

}  // namespace

ContainerIdentity ParseCgroupPath(std::string_view path) {
  ContainerIdentity identity;
  if (EndsWith(path, kDeletedSuffix)) path.remove_suffix(kDeletedSuffix.size());
  if (path.empty() || path.front() != '/') return identity;

  const std::vector<std::string_view> components = SplitComponents(path);
  std::optional<std::string> pod_uid;
  bool under_kubepods = false;
  bool parent_is_pod = false;
  // Left to right: the first container component is the outermost one, the
  // container the host's runtime knows; anything below it (init.scope,
  // podman's `container` sub-cgroup, docker-in-docker) belongs to it.
  for (std::size_t i = 0; i < components.size(); ++i) {
    const std::string_view component = components[i];
    const std::string_view parent = i > 0 ? components[i - 1] : "";
    std::optional<std::string> triple_pod_uid;
    std::optional<Match> match = MatchSystemdTriple(component, &triple_pod_uid);
    if (match && triple_pod_uid && !pod_uid) pod_uid = triple_pod_uid;
    if (!match) match = MatchPrefixed(component);
    if (!match) match = MatchBare(component, parent, i, parent_is_pod);
    if (match) {
      // Early podman releases put conmon, under cgroupfs, in
      // `<parent>/libpod-<id>/conmon`: the monitor, not the container.
      const bool old_conmon = match->cgroupfs_libpod &&
                              i + 1 < components.size() &&
                              components[i + 1] == "conmon";
      if (!old_conmon) {
        identity.container_id = std::string(match->id);
        identity.runtime = std::string(match->runtime);
      }
      break;
    }
    std::optional<std::string> uid = PodUidOf(component, under_kubepods);
    parent_is_pod = uid.has_value();
    if (uid && !pod_uid) pod_uid = std::move(uid);
    if (component.find("kubepods") != std::string_view::npos) {
      under_kubepods = true;
    }
  }
  // Also set without a container: the pod's own slice, a conmon beside it.
  if (pod_uid) identity.pod_uid = std::move(*pod_uid);
  return identity;
}

}  // namespace gpuq

// cgroup path -> container identity, by the naming conventions of each
// container runtime and cgroup driver. Pure string work, no I/O.
#pragma once

#include <string>
#include <string_view>

namespace gpuq {

/// What a cgroup path says about the container a process runs in.
struct ContainerIdentity {
  std::string container_id;  ///< full id as the runtime names it; "" = host
  std::string
      runtime;  ///< "docker", "containerd", "cri-o", "podman"; "" = host
  std::string pod_uid;  ///< Kubernetes pod UID (dashed form), "" if none

  bool InContainer() const { return !container_id.empty(); }
  /// The `container` label value for now: the first 12 characters of the id.
  std::string ShortId() const { return container_id.substr(0, 12); }
};

/// Parses a cgroup v2 path relative to the hierarchy root (as in the `0::`
/// line of /proc/<pid>/cgroup), or a v1 path of the same shape. Nested
/// cgroups below a container's cgroup belong to that (outermost) container.
/// Paths of no known runtime give an empty identity (a host process).
ContainerIdentity ParseCgroupPath(std::string_view path);

}  // namespace gpuq

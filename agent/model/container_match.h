// `record --container NAME|ID`: does a container match what the user typed?
// The same names the `container` label and gpuq_container_info show: the
// runtime's name, the Kubernetes container name, the full id or its short
// (12-character) form, or any longer prefix of the id.
#pragma once

#include <optional>
#include <string>

#include "resolver/cgroup_path.h"
#include "resolver/container_metadata.h"

namespace gpuq {

/// true/false when it can be told now; nullopt while the container's names
/// may still arrive from the runtime (`names_pending`) and its id does not
/// match. Host processes never match.
std::optional<bool> MatchesContainer(
    const std::string& wanted, const ContainerIdentity& identity,
    const std::optional<ContainerMetadata>& metadata, bool names_pending);

}  // namespace gpuq

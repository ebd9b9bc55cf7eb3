// OCI bundles as a source of container names and labels: the runtime spec
// (config.json) that containerd and CRI-O keep on the host, read for its
// annotations.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "resolver/container_metadata.h"

namespace gpuq {

/// Reads OCI bundle annotations: containerd keeps
/// <run>/containerd/io.containerd.runtime.v2.task/<ns>/<id>/config.json,
/// CRI-O <run>/containers/storage/overlay-containers/<id>/userdata/
/// config.json. `run_dir` is the host's /run. (podman keeps its spec under
/// /var/lib/containers and without names in it: ask its API instead.)
std::unique_ptr<RuntimeClient> MakeOciBundleClient(std::string run_dir);

/// What the client reads, without the I/O (the fuzzing harness of tests/fuzz
/// calls it): an OCI runtime spec's annotations (`source` names the runtime).
/// nullopt with *error (one clause) when the document is not a JSON object.
std::optional<ContainerMetadata> ParseOciBundle(const std::string& content,
                                                const std::string& source,
                                                std::string* error);

}  // namespace gpuq

// The Docker Engine API as a source of container names and labels: its
// inspect endpoint (a RuntimeClient) and its events stream. dockerd and
// `podman system service` both serve it over a unix socket.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "resolver/container_metadata.h"

namespace gpuq {

/// Docker Engine API client (GET /containers/<id>/json) over a unix socket.
/// Works against dockerd and `podman system service`.
std::unique_ptr<RuntimeClient> MakeDockerApiClient(
    std::string socket_path, std::chrono::milliseconds timeout);

/// One line of a Docker Engine API events stream (GET /events, dockerd and
/// podman's compat API): true for a container event, with the container's
/// id, the action ("create", "start", ...) and what the event itself says
/// about it (name, and the container's labels, which Docker puts among the
/// actor's attributes; source "docker-events").
bool ParseDockerEvent(const std::string& line, std::string* container_id,
                      std::string* action, ContainerMetadata* said);

/// What the client reads, without the I/O (the fuzzing harness of tests/fuzz
/// calls it): a Docker Engine API inspect document (GET
/// /containers/<id>/json). nullopt with *error (one clause) when the document
/// is not a JSON object.
std::optional<ContainerMetadata> ParseDockerInspect(const std::string& body,
                                                    std::string* error);

}  // namespace gpuq

// ContainerMetadata <-> the JSON payload of GPUQ_EV_CONTAINER_META records,
// so a capture replays with the names the runtime gave when it was recorded.
#pragma once

#include <optional>
#include <string>

#include "resolver/container_metadata.h"

namespace gpuq {

/// At most GPUQ_CONTAINER_META_MAX bytes, so the record reads back: beyond
/// that, labels are left out (the largest first), then names over 1 KiB.
std::string MetadataToJson(const ContainerMetadata& metadata);
/// nullopt if `json` is not an object of the documented shape.
std::optional<ContainerMetadata> MetadataFromJson(const std::string& json);

}  // namespace gpuq

// ContainerMetadata <-> the JSON payload of GPUQ_EV_CONTAINER_META records,
// so a capture replays with the names the runtime gave when it was recorded.
#pragma once

#include <optional>
#include <string>

#include "resolver/container_metadata.h"

namespace gpuq {

std::string MetadataToJson(const ContainerMetadata& metadata);
/// nullopt if `json` is not an object of the documented shape.
std::optional<ContainerMetadata> MetadataFromJson(const std::string& json);

}  // namespace gpuq

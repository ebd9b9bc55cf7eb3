#include "model/container_match.h"

namespace gpuq {

std::optional<bool> MatchesContainer(
    const std::string& wanted, const ContainerIdentity& identity,
    const std::optional<ContainerMetadata>& metadata, bool names_pending) {
  if (!identity.InContainer() || wanted.empty()) return false;
  const std::string& id = identity.container_id;
  // The short id is 12 characters: a shorter prefix is too likely to be
  // someone else's container.
  if (id == wanted ||
      (wanted.size() >= 12 && id.compare(0, wanted.size(), wanted) == 0)) {
    return true;
  }
  if (metadata) {
    return metadata->name == wanted || metadata->k8s_container == wanted;
  }
  if (names_pending) return std::nullopt;
  return false;
}

}  // namespace gpuq

#include "model/snapshot.h"

#include <set>

namespace gpuq {

const SeriesLabels& Snapshot::LabelsOf(uint64_t cgroup_id) const {
  static const SeriesLabels kUnresolved{kUnresolvedContainer, "", "", {}};
  auto it = labels.find(cgroup_id);
  return it != labels.end() ? it->second : kUnresolved;
}

void LabelSnapshot(Snapshot* s, ContainerLabeling* labeling) {
  s->extra_label_names = labeling->ExtraLabelNames();
  std::set<std::string> listed;
  for (const auto& [cgroup, a] : s->attributions) {
    const std::optional<ContainerMetadata> metadata =
        a.identity.InContainer() ? labeling->Metadata(a.identity)
                                 : std::nullopt;
    const SeriesLabels labels = labeling->Labels(a, metadata);
    s->labels.emplace(cgroup, labels);
    if (!a.identity.InContainer() || labels.container == kFoldedContainer ||
        !listed.insert(a.identity.container_id).second) {
      continue;
    }
    s->containers.push_back({labels, a.identity.container_id,
                             metadata ? metadata->name : "", a.identity.runtime,
                             a.identity.pod_uid});
  }
  s->containers_folded = labeling->Folded();
}

}  // namespace gpuq

#include "model/container_labeling.h"

#include <utility>

namespace gpuq {
namespace {

// "label_" + the runtime label with every character Prometheus does not allow
// in a label name replaced by '_' (as kube-state-metrics does).
std::string ExtraLabelName(const std::string& runtime_label) {
  std::string name = "label_";
  for (char c : runtime_label) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_';
    name += ok ? c : '_';
  }
  return name;
}

}  // namespace

ContainerLabeling::ContainerLabeling(size_t max_containers,
                                     std::vector<std::string> label_allowlist,
                                     MetadataResolver* metadata)
    : max_containers_(max_containers),
      label_allowlist_(std::move(label_allowlist)),
      metadata_(metadata) {}

void ContainerLabeling::Admit(const Attribution& a) {
  if (!a.identity.InContainer()) return;
  auto [it, inserted] = admitted_.try_emplace(a.identity.container_id, false);
  if (!inserted) return;
  if (admitted_count_ < max_containers_) {
    it->second = true;
    ++admitted_count_;
  }
}

void ContainerLabeling::Forget(const std::string& container_id) {
  auto admitted = admitted_.find(container_id);
  if (admitted == admitted_.end()) return;
  if (admitted->second) --admitted_count_;
  admitted_.erase(admitted);
}

void ContainerLabeling::Carry(const std::string& container_id,
                              ContainerMetadata metadata) {
  carried_[container_id] = std::move(metadata);
}

std::optional<ContainerMetadata> ContainerLabeling::Metadata(
    const ContainerIdentity& id) {
  auto carried = carried_.find(id.container_id);
  if (carried != carried_.end()) return carried->second;
  if (metadata_ == nullptr) return std::nullopt;
  return metadata_->Get(id);  // never blocks
}

SeriesLabels ContainerLabeling::Labels(
    const Attribution& a,
    const std::optional<ContainerMetadata>& metadata) const {
  SeriesLabels l{a.container, "", "", {}};
  l.extra.resize(label_allowlist_.size());
  if (!a.identity.InContainer()) return l;
  auto admitted = admitted_.find(a.identity.container_id);
  if (admitted != admitted_.end() && !admitted->second) {
    l.container = kFoldedContainer;
    return l;
  }
  if (!metadata) return l;  // the short id until the runtime answers
  if (!metadata->pod.empty()) {
    // Kubernetes: the container name is only unique within its pod.
    l.pod = metadata->pod;
    l.ns = metadata->ns;
    if (!metadata->k8s_container.empty()) l.container = metadata->k8s_container;
  } else if (!metadata->name.empty()) {
    l.container = metadata->name;
  }
  for (size_t i = 0; i < label_allowlist_.size(); ++i) {
    auto it = metadata->labels.find(label_allowlist_[i]);
    if (it != metadata->labels.end()) l.extra[i] = it->second;
  }
  return l;
}

uint64_t ContainerLabeling::Folded() const {
  uint64_t folded = 0;
  for (const auto& [id, own] : admitted_) folded += own ? 0 : 1;
  return folded;
}

std::vector<std::string> ContainerLabeling::ExtraLabelNames() const {
  std::vector<std::string> names;
  for (const std::string& label : label_allowlist_) {
    names.push_back(ExtraLabelName(label));
  }
  return names;
}

}  // namespace gpuq

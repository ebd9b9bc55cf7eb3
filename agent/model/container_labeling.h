// Which containers get series of their own, and what their series are
// labelled: the per-container cap (--max-containers: later containers fold
// into kFoldedContainer until a slot frees up), the runtime's names (or
// those a capture carries) and the allowlisted runtime labels. The pipeline
// holds one under its lock; nothing here is thread-safe by itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "resolver/attributor.h"
#include "resolver/container_metadata.h"

namespace gpuq {

/// The per-container labels of one cgroup's series.
struct SeriesLabels {
  std::string container;  ///< name, Kubernetes container name, short id, "",
                          ///< "unresolved" or kFoldedContainer
  std::string pod;
  std::string ns;
  std::vector<std::string> extra;  ///< values of ExtraLabelNames()
};

/// `container` label of series folded by the per-container cap.
inline constexpr const char* kFoldedContainer = "_other";

class ContainerLabeling {
 public:
  /// `metadata` (names from the container runtime) may be null: ids only,
  /// and what a capture carries. Must outlive this.
  ContainerLabeling(size_t max_containers,
                    std::vector<std::string> label_allowlist,
                    MetadataResolver* metadata);

  /// A container's first event: it gets series of its own while there is
  /// room under the cap, else it folds; either way for as long as it lives.
  void Admit(const Attribution& a);
  /// The container is gone (every cgroup of it retired): its slot frees up.
  void Forget(const std::string& container_id);
  /// Names a capture carries for a container (replay).
  void Carry(const std::string& container_id, ContainerMetadata metadata);

  /// What is known of the container's names: carried, else the runtime's
  /// answer (never blocks: the first call asks, later ones read the answer).
  std::optional<ContainerMetadata> Metadata(const ContainerIdentity& id);
  /// The labels of series attributed to `a`, with its metadata.
  SeriesLabels Labels(const Attribution& a,
                      const std::optional<ContainerMetadata>& metadata) const;

  /// Containers folded now.
  uint64_t Folded() const;
  /// Label names of the allowlisted runtime labels ("label_<sanitized>").
  std::vector<std::string> ExtraLabelNames() const;

 private:
  size_t max_containers_;
  std::vector<std::string> label_allowlist_;
  MetadataResolver* metadata_;
  /// Container id -> true (own series) or false (folded), pinned.
  /// Hashed: every kernel event admits its container (Pipeline).
  std::unordered_map<std::string, bool> admitted_;
  size_t admitted_count_ = 0;
  std::unordered_map<std::string, ContainerMetadata> carried_;
};

}  // namespace gpuq

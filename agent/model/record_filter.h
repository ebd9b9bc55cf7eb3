// `record --container NAME`: which of the pipeline's records reach the
// capture. Attribution decides: a container's records are written once its
// names say whether it is the wanted one (MatchesContainer); until then they
// are held (at most kHeldRecordsMax records or kHeldFor). The GPU topology
// and runlist operations without an owner are always written; host
// processes and unresolved cgroups never.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "resolver/attributor.h"
#include "resolver/container_metadata.h"
#include "sources/capture.h"
#include "sources/event.h"

namespace gpuq {

/// Not thread-safe: the pipeline calls it under its lock.
class RecordFilter {
 public:
  /// Who a record's cgroup belongs to (pinned attribution).
  using Attribute = std::function<const Attribution&(uint64_t cgroup_id)>;
  /// A container's names, if known yet (never blocks).
  using Names =
      std::function<std::optional<ContainerMetadata>(const ContainerIdentity&)>;

  /// `writer` must outlive the filter. `names_may_come`: a runtime is asked
  /// for names (live mode), so an unnamed container's records may wait.
  RecordFilter(CaptureWriter* writer, std::string wanted, Attribute attribute,
               Names names, bool names_may_come);

  /// Writes `event` now, holds it, or drops it.
  void Write(const Event& event);
  /// Decides every held record (undecided ones are dropped) and writes those
  /// of the wanted container. After the last record.
  void Finish() { ReleaseHeld(/*final=*/true); }
  /// Records of the wanted container's processes written so far (cgroup
  /// paths and names not counted).
  uint64_t ContainerRecords() const { return container_records_; }

  static constexpr size_t kHeldRecordsMax = 65536;
  static constexpr std::chrono::seconds kHeldFor{10};

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    Clock::time_point since;
    ContainerIdentity identity;
    std::vector<Event> events;
    bool has_event = false;  ///< a record other than a cgroup path or name
  };
  /// Whether a container's records are kept (nullopt: not known yet).
  std::optional<bool> Verdict(const ContainerIdentity& id, bool may_wait);
  /// Writes or drops the held records of containers decided now; `final`:
  /// decides every one.
  void ReleaseHeld(bool final);
  void Flush(const Held& held, bool keep);

  CaptureWriter* writer_;
  std::string wanted_;
  Attribute attribute_;
  Names names_;
  bool names_may_come_;
  std::map<std::string, bool> verdicts_;  ///< by container id
  std::map<std::string, Held> held_;      ///< by container id
  uint64_t container_records_ = 0;
};

}  // namespace gpuq

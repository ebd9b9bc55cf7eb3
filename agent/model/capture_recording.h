// What `record` writes beside the events the pipeline applies: each
// attributed cgroup's path once and each container's runtime names once
// (also names that arrive after the container's events), every record
// through `record --container`'s filter (model/record_filter.h) when one is
// set, so a replay attributes and names what the live run did.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "model/record_filter.h"
#include "resolver/attributor.h"
#include "sources/capture.h"
#include "sources/event.h"

namespace gpuq {

/// Not thread-safe: the pipeline calls it under its lock.
class CaptureRecording {
 public:
  /// `names_may_come`: a runtime is asked for names (live mode).
  CaptureRecording(RecordFilter::Attribute attribute, RecordFilter::Names names,
                   bool names_may_come);

  /// Records to `writer` from now on (it must outlive this).
  void SetWriter(CaptureWriter* writer);
  /// Hands what the writer holds to the file (a compressed capture: as
  /// complete blocks), so a recorder killed now loses nothing written.
  void Flush();
  /// Records only container `wanted`'s processes (RecordFilter).
  void OnlyContainer(std::string wanted);

  /// Writes one record (nothing when not recording).
  void Write(const Event& event);
  /// A kernel event's cgroup was attributed as `a`: its path and its
  /// container's names are written the first time (names when known).
  void Attributed(uint64_t cgroup_id, const Attribution& a);
  /// A capture being replayed carries this cgroup's path / container's
  /// names already: not written again.
  void PathCarried(uint64_t cgroup_id) { paths_.insert(cgroup_id); }
  void NamesCarried(const std::string& container_id) {
    names_written_.insert(container_id);
  }
  /// Writes the names that arrived since their container's first event.
  void WriteLateNames();
  /// Decides the filter's held records (after the last one).
  void Finish();
  /// The wanted container's records written so far (RecordFilter).
  uint64_t ContainerRecords() const;

 private:
  void MakeFilter();
  void WriteNames(uint64_t cgroup_id, const Attribution& a);

  RecordFilter::Attribute attribute_;
  RecordFilter::Names names_;
  bool names_may_come_;
  CaptureWriter* writer_ = nullptr;
  std::string wanted_;  ///< "" = every container
  /// `record --container`'s; null: every record is written.
  std::unique_ptr<RecordFilter> filter_;
  std::set<uint64_t> paths_;             ///< cgroups whose path is written
  std::set<std::string> names_written_;  ///< container ids
  /// Attributed cgroups whose container's names are not written yet.
  std::set<uint64_t> names_pending_;
};

}  // namespace gpuq

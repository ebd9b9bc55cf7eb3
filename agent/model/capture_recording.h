// What `record` writes beside the events the pipeline applies: each
// attributed cgroup's path once and each container's runtime names once
// (also names that arrive after the container's events), every record
// through `record --container`'s filter (model/record_filter.h) when one is
// set, so a replay attributes and names what the live run did.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "model/model.h"
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
  /// Starts a recording of a pipeline already running (the recording API):
  /// records to `writer` (it must outlive End()), only container `wanted`'s
  /// when not empty, every cgroup path and container's names written anew,
  /// and each doorbell's counts written as counted from now
  /// (`doorbell_counts`: Model::DoorbellCounts() at the start).
  void Begin(
      CaptureWriter* writer, std::string wanted,
      std::map<std::pair<uint32_t, uint64_t>, DoorbellSeries> doorbell_counts);
  /// Ends it: the filter's held records decided (Finish()), then nothing is
  /// written any more. The writer is the caller's to close.
  void End();
  /// Whether records are being written.
  bool Recording() const { return writer_ != nullptr; }
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
  /// Writes `event` through the filter, if any.
  void Put(const Event& event);
  void WriteNames(uint64_t cgroup_id, const Attribution& a);

  /// A doorbell count record as counted from Begin(): the counts it had
  /// then subtracted (a count below them means the kernel's entry was
  /// recreated, and counts from zero: written as it is).
  gpuq_doorbell_count_record SinceBegin(const gpuq_doorbell_count_record& r);

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
  /// Begin()'s doorbell counts, by (tgid, handle).
  std::map<std::pair<uint32_t, uint64_t>, DoorbellSeries> doorbells_at_begin_;
};

}  // namespace gpuq

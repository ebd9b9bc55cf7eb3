#include "model/capture_recording.h"

#include <utility>

#include "common/clock.h"
#include "resolver/container_metadata_json.h"

namespace gpuq {

CaptureRecording::CaptureRecording(RecordFilter::Attribute attribute,
                                   RecordFilter::Names names,
                                   bool names_may_come)
    : attribute_(std::move(attribute)),
      names_(std::move(names)),
      names_may_come_(names_may_come) {}

void CaptureRecording::SetWriter(CaptureWriter* writer) {
  writer_ = writer;
  MakeFilter();
}

void CaptureRecording::Begin(
    CaptureWriter* writer, std::string wanted,
    std::map<std::pair<uint32_t, uint64_t>, DoorbellSeries> doorbell_counts) {
  paths_.clear();
  names_written_.clear();
  names_pending_.clear();
  doorbells_at_begin_ = std::move(doorbell_counts);
  filter_.reset();
  wanted_ = std::move(wanted);
  writer_ = writer;
  MakeFilter();
}

void CaptureRecording::End() {
  Finish();
  filter_.reset();
  writer_ = nullptr;
  wanted_.clear();
  doorbells_at_begin_.clear();
}

gpuq_doorbell_count_record CaptureRecording::SinceBegin(
    const gpuq_doorbell_count_record& r) {
  auto it = doorbells_at_begin_.find({r.hdr.tgid, r.doorbell_handle});
  if (it == doorbells_at_begin_.end()) return r;
  const DoorbellTally now = DoorbellTally::Of(r);
  if (now.FellBelow(it->second)) {
    doorbells_at_begin_.erase(it);
    return r;
  }
  gpuq_doorbell_count_record out = r;
  now.Since(it->second).WriteTo(&out);
  return out;
}

void CaptureRecording::Flush() {
  // A failure is kept by the writer and told by its Close().
  if (writer_ != nullptr) (void)writer_->Flush();
}

void CaptureRecording::OnlyContainer(std::string wanted) {
  wanted_ = std::move(wanted);
  MakeFilter();
}

void CaptureRecording::MakeFilter() {
  // Once both the writer and the container are given (in either order):
  // never a capture of every container.
  if (writer_ == nullptr || wanted_.empty()) return;
  filter_ = std::make_unique<RecordFilter>(writer_, wanted_, attribute_, names_,
                                           names_may_come_);
}

void CaptureRecording::Write(const Event& event) {
  if (writer_ == nullptr) return;
  const auto* count = doorbells_at_begin_.empty()
                          ? nullptr
                          : std::get_if<gpuq_doorbell_count_record>(&event);
  if (count != nullptr) {
    Put(SinceBegin(*count));
  } else {
    Put(event);
  }
}

void CaptureRecording::Put(const Event& event) {
  if (filter_ != nullptr) {
    filter_->Write(event);
  } else {
    writer_->Write(event);
  }
}

void CaptureRecording::Attributed(uint64_t cgroup_id, const Attribution& a) {
  if (writer_ == nullptr || cgroup_id == 0) return;
  if (paths_.insert(cgroup_id).second && a.resolved) {
    gpuq_event_header hdr{};
    hdr.type = GPUQ_EV_CGROUP_PATH;
    hdr.cgroup_id = cgroup_id;
    hdr.ts_ns = MonotonicNowNs();
    Write(CgroupPathRecord{hdr, a.cgroup_path});
  }
  WriteNames(cgroup_id, a);
}

void CaptureRecording::WriteNames(uint64_t cgroup_id, const Attribution& a) {
  if (!a.identity.InContainer()) return;
  if (names_written_.count(a.identity.container_id) != 0) return;
  const auto names = names_(a.identity);
  if (!names) {  // not known yet: a later event or WriteLateNames
    names_pending_.insert(cgroup_id);
    return;
  }
  names_written_.insert(a.identity.container_id);
  names_pending_.erase(cgroup_id);
  gpuq_event_header hdr{};
  hdr.type = GPUQ_EV_CONTAINER_META;
  hdr.cgroup_id = cgroup_id;
  hdr.ts_ns = MonotonicNowNs();
  Write(ContainerMetaRecord{hdr, MetadataToJson(*names)});
}

void CaptureRecording::WriteLateNames() {
  if (writer_ == nullptr || names_pending_.empty()) return;
  const std::set<uint64_t> pending = names_pending_;
  for (uint64_t cgroup_id : pending) {
    const Attribution& a = attribute_(cgroup_id);
    if (names_written_.count(a.identity.container_id) != 0) {
      names_pending_.erase(cgroup_id);
      continue;
    }
    WriteNames(cgroup_id, a);
  }
}

void CaptureRecording::Finish() {
  if (filter_ != nullptr) filter_->Finish();
}

uint64_t CaptureRecording::ContainerRecords() const {
  return filter_ != nullptr ? filter_->ContainerRecords() : 0;
}

}  // namespace gpuq

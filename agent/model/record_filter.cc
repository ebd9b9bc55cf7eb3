#include "model/record_filter.h"

#include <utility>
#include <variant>

#include "model/container_match.h"

namespace gpuq {
namespace {

bool IsNaming(const Event& e) {
  return std::holds_alternative<CgroupPathRecord>(e) ||
         std::holds_alternative<ContainerMetaRecord>(e);
}

}  // namespace

RecordFilter::RecordFilter(CaptureWriter* writer, std::string wanted,
                           Attribute attribute, Names names,
                           bool names_may_come)
    : writer_(writer),
      wanted_(std::move(wanted)),
      attribute_(std::move(attribute)),
      names_(std::move(names)),
      names_may_come_(names_may_come) {}

std::optional<bool> RecordFilter::Verdict(const ContainerIdentity& id,
                                          bool may_wait) {
  auto known = verdicts_.find(id.container_id);
  if (known != verdicts_.end()) return known->second;
  const auto verdict = MatchesContainer(wanted_, id, names_(id), may_wait);
  if (verdict) verdicts_[id.container_id] = *verdict;
  return verdict;
}

void RecordFilter::Flush(const Held& held, bool keep) {
  if (!keep) return;
  for (const Event& e : held.events) {
    writer_->Write(e);
    if (!IsNaming(e)) ++container_records_;
  }
}

void RecordFilter::ReleaseHeld(bool final) {
  const auto now = Clock::now();
  for (auto it = held_.begin(); it != held_.end();) {
    Held& held = it->second;
    std::optional<bool> verdict;
    auto known = verdicts_.find(it->first);
    if (known != verdicts_.end()) {
      verdict = known->second;
    } else if (held.has_event) {
      // Names may still come, within bounds: else what is known decides.
      const bool may_wait = !final && names_may_come_ &&
                            held.events.size() < kHeldRecordsMax &&
                            now - held.since < kHeldFor;
      verdict = Verdict(held.identity, may_wait);
      if (!verdict.has_value()) {
        ++it;  // still waiting for the container's names
        continue;
      }
    } else if (!final) {
      ++it;  // cgroup paths and names wait for the container's first event
      continue;
    } else {
      verdict = false;  // no event of this container was ever recorded
    }
    Flush(held, *verdict);
    it = held_.erase(it);
  }
}

void RecordFilter::Write(const Event& event) {
  if (!held_.empty()) ReleaseHeld(/*final=*/false);
  const uint64_t cgroup = Header(event).cgroup_id;
  if (std::holds_alternative<gpuq_gpu_info_record>(event) ||
      std::holds_alternative<gpuq_source_drops_record>(event) ||
      (cgroup == 0 && std::holds_alternative<gpuq_runlist_event>(event))) {
    // Topology, GPU-wide preemptions and what the source lost (any of it
    // may have been the container's) stay.
    writer_->Write(event);
    return;
  }
  const Attribution& a = attribute_(cgroup);
  if (!a.identity.InContainer()) return;  // host, unresolved, no owner
  const std::string& id = a.identity.container_id;
  const bool naming = IsNaming(event);
  // A cgroup path or name comes before the container's first event (and,
  // in a replay, before its names): it waits for that event's verdict.
  std::optional<bool> verdict;
  auto known = verdicts_.find(id);
  if (known != verdicts_.end()) {
    verdict = known->second;
  } else if (!naming) {
    verdict = Verdict(a.identity, names_may_come_);
  }
  auto held = held_.find(id);
  if (!verdict) {
    if (held == held_.end()) {
      held = held_.emplace(id, Held{Clock::now(), a.identity, {}, false}).first;
    }
    held->second.events.push_back(event);
    held->second.has_event = held->second.has_event || !naming;
    return;
  }
  if (held != held_.end()) {  // in order: what waited, then this record
    Flush(held->second, *verdict);
    held_.erase(held);
  }
  if (!*verdict) return;
  if (!naming) ++container_records_;
  writer_->Write(event);
}

}  // namespace gpuq

#include "model/oversubscription.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuq {

const char* OversubscriptionReasonLabel(OversubscriptionReason reason) {
  switch (reason) {
    case OversubscriptionReason::kProcesses:
      return "processes";
    case OversubscriptionReason::kComputeQueues:
      return "compute_queues";
    case OversubscriptionReason::kGwsQueues:
      return "gws_queues";
    case OversubscriptionReason::kXnackConflict:
      return "xnack_conflict";
    case OversubscriptionReason::kOther:
      break;
  }
  return "other";
}

const char* RunlistEntryKindLabel(RunlistEntryKind kind) {
  switch (kind) {
    case RunlistEntryKind::kProcesses:
      return "processes";
    case RunlistEntryKind::kComputeQueues:
      return "compute_queues";
    case RunlistEntryKind::kGwsQueues:
      break;
  }
  return "gws_queues";
}

std::array<bool, kOversubscriptionReasons> ReasonsOf(const RunlistShape& s) {
  std::array<bool, kOversubscriptionReasons> out{};
  bool any = false;
  for (size_t k = 0; k < kRunlistEntryKinds; ++k) {
    // A limit of 0 was not read: it explains nothing.
    if (s.limits[k] != 0 && s.entries[k] > s.limits[k]) {
      out[k] = true;  // RunlistEntryKind k = OversubscriptionReason k
      any = true;
    }
  }
  if (s.xnack_conflict) {
    out[static_cast<size_t>(OversubscriptionReason::kXnackConflict)] = true;
    any = true;
  }
  out[static_cast<size_t>(OversubscriptionReason::kOther)] = !any;
  return out;
}

std::string OversubscribedBecause(const RunlistShape& shape) {
  const auto reasons = ReasonsOf(shape);
  std::string out;
  for (size_t k = 0; k < kRunlistEntryKinds; ++k) {
    if (!reasons[k]) continue;
    out += fmt::format("{}{} {}/{}", out.empty() ? "" : ", ",
                       RunlistEntryKindLabel(static_cast<RunlistEntryKind>(k)),
                       shape.entries[k], shape.limits[k]);
  }
  if (reasons[static_cast<size_t>(OversubscriptionReason::kXnackConflict)]) {
    out += fmt::format(
        "{}{}", out.empty() ? "" : ", ",
        OversubscriptionReasonLabel(OversubscriptionReason::kXnackConflict));
  }
  return out.empty()
             ? OversubscriptionReasonLabel(OversubscriptionReason::kOther)
             : out;
}

namespace {

void CloseWindow(uint32_t gpu_id, uint64_t end_ns, OversubscriptionSeries* s,
                 const OversubscriptionWindowSink& sink) {
  if (s->open_since_ns == 0) return;
  const uint64_t end = std::max(end_ns, s->open_since_ns);
  s->oversubscribed_ns += end - s->open_since_ns;
  if (sink) sink(gpu_id, s->open_since_ns, end, s->open_shape);
  s->open_since_ns = 0;
}

}  // namespace

void OnRunlistForOversubscription(
    const gpuq_runlist_event& e,
    std::map<uint32_t, OversubscriptionSeries>* series,
    const OversubscriptionWindowSink& sink) {
  if (e.op == GPUQ_RUNLIST_UNMAP) {
    // The runlist is off the GPU from the unmap's start, whatever it
    // returned (a hung unmap ends in a reset that drops it too).
    auto it = series->find(e.gpu_id);
    if (it == series->end()) return;
    const uint64_t start =
        e.hdr.ts_ns > e.duration_ns ? e.hdr.ts_ns - e.duration_ns : e.hdr.ts_ns;
    CloseWindow(e.gpu_id, start, &it->second, sink);
    return;
  }
  if (e.op != GPUQ_RUNLIST_MAP ||
      (e.flags & GPUQ_RUNLIST_F_RUNLIST_READ) == 0) {
    return;
  }
  OversubscriptionSeries& s = (*series)[e.gpu_id];
  RunlistShape shape;
  shape.oversubscribed =
      e.ret == 0 && (e.flags & GPUQ_RUNLIST_F_OVERSUBSCRIBED) != 0;
  shape.xnack_conflict =
      shape.oversubscribed && (e.flags & GPUQ_RUNLIST_F_XNACK_CONFLICT) != 0;
  shape.entries = {e.processes, e.compute_queues, e.gws_queues};
  shape.limits = {e.process_limit, e.compute_queue_limit, 1};
  // A map while a runlist is already up (amdkfd returns early on
  // active_runlist) changes nothing: its window stays open.
  if (shape.oversubscribed && s.open_since_ns == 0) {
    ++s.oversubscribed_maps;
    const auto reasons = ReasonsOf(shape);
    for (size_t r = 0; r < kOversubscriptionReasons; ++r) {
      if (reasons[r]) ++s.maps_by_reason[r];
    }
    s.open_since_ns = e.hdr.ts_ns;
    s.open_shape = shape;
  } else if (!shape.oversubscribed) {
    CloseWindow(e.gpu_id, e.hdr.ts_ns, &s, sink);
  }
  s.shape = shape;
}

}  // namespace gpuq

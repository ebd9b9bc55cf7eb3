// Model::StateAsRecords and Model::DoorbellCounts: the model's state written
// as the records a capture starting now needs (the recording API).
#include <algorithm>
#include <cstring>

#include "model/model.h"

namespace gpuq {

std::vector<Event> Model::StateAsRecords(uint64_t ts_ns) const {
  std::vector<Event> out;
  for (const auto& [gpu_id, record] : gpu_records_) {
    gpuq_gpu_info_record r = record;
    r.hdr.ts_ns = ts_ns;
    out.emplace_back(r);
  }
  std::vector<const QueueState*> live;
  live.reserve(queues_.size());
  for (const auto& [key, q] : queues_) live.push_back(&q);
  std::sort(live.begin(), live.end(),
            [](const QueueState* a, const QueueState* b) {
              return a->serial < b->serial;
            });
  for (const QueueState* q : live) {
    gpuq_queue_create_event e{};
    e.hdr.type = GPUQ_EV_QUEUE_CREATE;
    e.hdr.size = sizeof(e);
    e.hdr.tgid = q->tgid;
    e.hdr.ts_ns = ts_ns;
    e.hdr.cgroup_id = q->cgroup_id;
    e.hdr.process_key = q->process_key;
    e.gpu_id = q->gpu_id;
    e.queue_id = q->queue_id;
    e.queue_type = q->queue_type;
    e.queue_format = q->queue_format;
    e.ring_address = q->ring_address;
    e.ring_size = q->ring_size;
    e.read_ptr = q->read_ptr;
    e.write_ptr = q->write_ptr;
    e.priority = q->priority;
    e.percentage = q->percentage;
    // Seeded: present when the capture starts, not created in it (no
    // create is counted, as for a queue found in sysfs at start), even one
    // reconciliation recovered before it.
    e.flags = (q->flags | GPUQ_CREATE_F_SEEDED) & ~GPUQ_CREATE_F_RECOVERED;
    if (auto p = processes_.find(q->process_key); p != processes_.end()) {
      std::strncpy(e.comm, p->second.comm.c_str(), sizeof(e.comm) - 1);
    }
    e.doorbell_handle = q->doorbell_handle;
    // StepWriteIndex counts a ROCr queue's first sample from this: the
    // packets up to the last read were counted before the capture began.
    e.write_index_at_create =
        q->sampled ? q->write_index : q->write_index_at_create;
    out.emplace_back(e);
    if (!q->seeded || q->updated) {
      // Its priority is known (a seeded queue's is not, Model::ClassesOf):
      // said the way an AMDKFD_IOC_UPDATE_QUEUE says it.
      gpuq_queue_update_event update{};
      update.hdr = e.hdr;
      update.hdr.type = GPUQ_EV_QUEUE_UPDATE;
      update.hdr.size = sizeof(update);
      update.gpu_id = q->gpu_id;
      update.queue_id = q->queue_id;
      update.ring_address = q->ring_address;
      update.ring_size = static_cast<uint32_t>(q->ring_size);
      update.percentage = q->percentage;
      update.priority = q->priority;
      out.emplace_back(update);
    }
    if (q->last_read != QueueState::LastRead::kNone) {
      // The last read: readable or not, pending packets as then (a
      // readable one counts nothing, its index being the baseline above).
      gpuq_queue_sample_record sample{};
      sample.hdr = e.hdr;
      sample.hdr.type = GPUQ_EV_QUEUE_SAMPLE;
      sample.hdr.size = sizeof(sample);
      sample.gpu_id = q->gpu_id;
      sample.queue_id = q->queue_id;
      sample.write_ptr = q->write_ptr;
      if (q->readable()) {
        sample.write_index = q->write_index;
        sample.read_index = q->read_index;
      } else {
        sample.flags = GPUQ_SAMPLE_F_UNREADABLE;
      }
      out.emplace_back(sample);
    }
    if (q->cu_mask_record != nullptr) {
      gpuq_queue_cu_mask_event mask = *q->cu_mask_record;
      mask.hdr.ts_ns = ts_ns;
      out.emplace_back(mask);
    }
  }
  // After the creates that made each process known.
  std::vector<const ProcessState*> with_knobs;
  for (const auto& [key, p] : processes_) {
    if (p.knobs) with_knobs.push_back(&p);
  }
  std::sort(with_knobs.begin(), with_knobs.end(),
            [](const ProcessState* a, const ProcessState* b) {
              return a->process_key < b->process_key;
            });
  for (const ProcessState* p : with_knobs) {
    gpuq_process_knobs_record knobs = *p->knobs;
    knobs.hdr.ts_ns = ts_ns;
    out.emplace_back(knobs);
  }
  return out;
}

Model::Unrecorded Model::Unrecordable() const {
  Unrecorded out;
  out.held_off = preemption_.HeldOff();
  out.evictions = pending_evictions_.size();
  for (const auto& [gpu, series] : series_.oversubscription) {
    if (series.shape.entries != decltype(series.shape.entries){} ||
        series.open_since_ns != 0) {
      ++out.runlist_shapes;
    }
  }
  return out;
}

std::map<std::pair<uint32_t, uint64_t>, DoorbellSeries> Model::DoorbellCounts()
    const {
  std::map<std::pair<uint32_t, uint64_t>, DoorbellSeries> out;
  for (const auto& [key, doorbell] : doorbells_) {
    if (doorbell.kept) out[key] = doorbell.counts;
  }
  return out;
}

}  // namespace gpuq

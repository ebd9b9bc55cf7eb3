#include "submissions/queue_sampler.h"

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/log.h"
#include "submissions/process_environ.h"

namespace gpuq {

QueueSampler::QueueSampler(Options options)
    : clock_(options.clock ? std::move(options.clock) : MonotonicNowNs),
      reader_(options.paths, options.access),
      procfs_(std::move(options.paths.procfs)) {}

SampleRoundStats QueueSampler::Sample(const std::vector<SampleTarget>& targets,
                                      const Sink& sink) {
  SampleRoundStats stats;
  stats.queues = targets.size();
  // Group by owner process, keeping the pipeline's order within one.
  order_.resize(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
    return targets[a].owner.tgid < targets[b].owner.tgid;
  });

  size_t begin = 0;
  while (begin < order_.size()) {
    const uint32_t tgid = targets[order_[begin]].owner.tgid;
    size_t end = begin;
    ranges_.clear();
    slots_.clear();
    size_t bytes = 0;
    auto add = [&](uint64_t addr, uint32_t len) {
      ranges_.push_back({addr, len});
      bytes += len;
    };
    while (end < order_.size() && targets[order_[end]].owner.tgid == tgid) {
      const SampleTarget& t = targets[order_[end]];
      Slot slot{};
      slot.write_range = ranges_.size();
      slot.write_offset = bytes;
      if (t.read_ptr > t.write_ptr && t.read_ptr - t.write_ptr <= kMaxSpan) {
        const uint64_t gap = t.read_ptr - t.write_ptr;
        slot.read_range = slot.write_range;
        slot.read_offset = bytes + gap;
        add(t.write_ptr, static_cast<uint32_t>(gap + sizeof(uint64_t)));
      } else {
        add(t.write_ptr, sizeof(uint64_t));
        slot.read_range = ranges_.size();
        slot.read_offset = bytes;
        add(t.read_ptr, sizeof(uint64_t));
      }
      slots_.push_back(slot);
      ++end;
    }
    // Both ends of the read are recorded: the model holds a read to the
    // queues that existed before it began (SampleReadsQueue).
    const uint64_t begin_ns = clock_();
    reader_.Read(tgid, ranges_, &data_, &ok_);
    const uint64_t now = clock_();
    ++stats.processes;
    bool read_any = false;
    for (size_t k = begin; k < end; ++k) {
      const SampleTarget& t = targets[order_[k]];
      const Slot& slot = slots_[k - begin];
      gpuq_queue_sample_record r{};
      r.hdr = t.owner;
      r.hdr.type = GPUQ_EV_QUEUE_SAMPLE;
      r.hdr.size = sizeof(r);
      r.hdr.ts_ns = now;
      r.gpu_id = t.gpu_id;
      r.queue_id = t.queue_id;
      r.write_ptr = t.write_ptr;
      r.read_begin_ns = begin_ns;
      if (ok_[slot.write_range] && ok_[slot.read_range]) {
        std::memcpy(&r.write_index, data_.data() + slot.write_offset,
                    sizeof(uint64_t));
        std::memcpy(&r.read_index, data_.data() + slot.read_offset,
                    sizeof(uint64_t));
        read_any = true;
      } else {
        r.flags = GPUQ_SAMPLE_F_UNREADABLE;
        ++stats.unreadable;
        if (reader_.last_denied()) {
          r.flags |= GPUQ_SAMPLE_F_DENIED;
          ++stats.denied;
        }
      }
      sink(Event{r});
    }
    EmitKnobs(targets[order_[begin]].owner, read_any, now, sink);
    begin = end;
  }
  knobs_read_.swap(knobs_read_now_);
  knobs_read_now_.clear();
  // Said once while it lasts (every round would repeat it), and again
  // after a round that read a queue and was denied none.
  if (stats.denied > 0) {
    Log().WriteOnChange(
        LogLevel::kWarn, "sampler denied",
        "queue sampling denied: reading another process's queue indexes "
        "needs ptrace access to it (CAP_SYS_PTRACE, and Yama's ptrace_scope "
        "below 3); their submissions are not counted "
        "(gpuq_queue_samples_total{result=\"denied\"})");
  } else if (stats.queues > stats.unreadable) {
    Log().WriteOnChange(LogLevel::kWarn, "sampler denied", "");
  }
  return stats;
}

void QueueSampler::EmitKnobs(const gpuq_event_header& owner, bool read_any,
                             uint64_t now, const Sink& sink) {
  if (knobs_read_.count(owner.process_key) != 0) {
    knobs_read_now_.insert(owner.process_key);
    return;
  }
  // Its memory read: the same ptrace access reads its environment.
  gpuq_process_knobs_record r{};
  if (!read_any || !ReadRuntimeKnobs(procfs_, owner.tgid, &r)) return;
  r.hdr = owner;
  r.hdr.type = GPUQ_EV_PROCESS_KNOBS;
  r.hdr.size = sizeof(r);
  r.hdr.ts_ns = now;
  knobs_read_now_.insert(owner.process_key);
  sink(Event{r});
}

}  // namespace gpuq

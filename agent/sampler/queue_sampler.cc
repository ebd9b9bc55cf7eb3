#include "sampler/queue_sampler.h"

#include <time.h>

#include <algorithm>

namespace gpuq {

uint64_t MonotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

QueueSampler::QueueSampler(Options options)
    : clock_(options.clock ? std::move(options.clock) : MonotonicNowNs),
      reader_(std::move(options.paths), options.access) {}

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
    addrs_.clear();
    while (end < order_.size() && targets[order_[end]].owner.tgid == tgid) {
      const SampleTarget& t = targets[order_[end]];
      addrs_.push_back(t.write_ptr);
      addrs_.push_back(t.read_ptr);
      ++end;
    }
    reader_.Read(tgid, addrs_, &values_, &ok_);
    const uint64_t now = clock_();
    ++stats.processes;
    for (size_t k = begin; k < end; ++k) {
      const SampleTarget& t = targets[order_[k]];
      const size_t w = 2 * (k - begin);
      gpuq_queue_sample_record r{};
      r.hdr = t.owner;
      r.hdr.type = GPUQ_EV_QUEUE_SAMPLE;
      r.hdr.size = sizeof(r);
      r.hdr.ts_ns = now;
      r.gpu_id = t.gpu_id;
      r.queue_id = t.queue_id;
      if (ok_[w] && ok_[w + 1]) {
        r.write_index = values_[w];
        r.read_index = values_[w + 1];
      } else {
        r.flags = GPUQ_SAMPLE_F_UNREADABLE;
        ++stats.unreadable;
      }
      sink(Event{r});
    }
    begin = end;
  }
  return stats;
}

}  // namespace gpuq

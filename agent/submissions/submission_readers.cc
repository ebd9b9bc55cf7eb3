#include "submissions/submission_readers.h"

#include "submissions/doorbell_poller.h"
#include "submissions/queue_sampler.h"

namespace gpuq {

SubmissionReaders::SubmissionReaders(const SubmissionOptions& options,
                                     SubmissionSinks sinks,
                                     std::vector<std::string>* warnings)
    : sinks_(std::move(sinks)),
      period_(options.sample_interval.count() > 0 ? options.sample_interval
                                                  : std::chrono::seconds(1)) {
  if (options.sample_interval.count() > 0) {
    QueueSampler::Options s;
    s.paths = options.paths;
    sampler_ = std::make_unique<QueueSampler>(std::move(s));
  }
  if (options.doorbells != DoorbellMode::kUprobe) return;
  doorbells_asked_ = true;
  DoorbellPoller::Options d;
  d.paths = options.paths;
  d.libraries = options.hsa_runtimes;
  std::string error;
  poller_ = DoorbellPoller::Open(d, &error);
  if (poller_ == nullptr) {
    warnings->push_back(error + "; doorbells are not counted");
    sinks_.doorbell_probes(DoorbellPoller::NotAttached(error));
    return;
  }
  sinks_.doorbell_probes(poller_->Probes());
}

SubmissionReaders::~SubmissionReaders() = default;

void SubmissionReaders::Round() {
  if (sampler_ != nullptr) sampler_->Sample(sinks_.targets(), sinks_.handle);
  if (poller_ == nullptr) return;
  poller_->SyncKnown(sinks_.known_doorbells());
  if (++rounds_ % kRescanEvery == 0) {
    poller_->Rescan();
    sinks_.doorbell_probes(poller_->Probes());
  } else if (poller_->ScanQueueOwners() > 0) {
    sinks_.doorbell_probes(poller_->Probes());
  }
  poller_->Poll(sinks_.find_doorbell, sinks_.handle);
  if (sinks_.doorbell_map_full)
    sinks_.doorbell_map_full(poller_->MapFullDrops());
}

}  // namespace gpuq

#include "sources/bpf_source.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "common/log.h"
#include "loader/percpu_sum.h"

namespace gpuq {

BpfEventSource::BpfEventSource(int events_fd, int drops_fd,
                               std::vector<int> prog_fds)
    : drops_fd_(drops_fd),
      prog_fds_(std::move(prog_fds)),
      last_prog_skipped_(
          std::make_unique<std::atomic<uint64_t>[]>(prog_fds_.size())) {
  for (int fd : prog_fds_) {
    bpf_prog_info info;
    std::memset(&info, 0, sizeof(info));
    __u32 len = sizeof(info);
    prog_names_.push_back(bpf_obj_get_info_by_fd(fd, &info, &len) == 0
                              ? std::string(info.name)
                              : fmt::format("fd{}", fd));
  }
  rb_ = ring_buffer__new(events_fd, &BpfEventSource::OnRecord, this, nullptr);
  if (rb_ == nullptr) {
    error_ = fmt::format("cannot open the events ring buffer: {}",
                         std::strerror(errno));
  }
}

BpfEventSource::~BpfEventSource() {
  if (rb_ != nullptr) ring_buffer__free(rb_);
}

bool DecodeKernelRecord(const void* data, size_t size, Event* out) {
  size_t consumed = 0;
  const DecodeStatus status = Decode(data, size, out, &consumed);
  if (status == DecodeStatus::kOk) return true;
  gpuq_event_header hdr{};
  if (size >= sizeof(hdr)) std::memcpy(&hdr, data, sizeof(hdr));
  Log().Write(
      LogLevel::kWarn,
      fmt::format("a kernel record did not decode ({}: type {}, "
                  "size {} in a {}-byte record), counted in "
                  "gpuq_events_dropped_total{{reason=\"decode_error\"}}",
                  DecodeStatusName(status), hdr.type, hdr.size, size));
  return false;
}

int BpfEventSource::OnRecord(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfEventSource*>(ctx);
  Event event;
  if (DecodeKernelRecord(data, size, &event)) {
    self->pending_.push_back(std::move(event));
  } else {
    self->decode_errors_.fetch_add(1);
  }
  return 0;
}

NextStatus BpfEventSource::Next(Event* out, std::chrono::milliseconds timeout) {
  if (rb_ == nullptr) return NextStatus::kError;
  if (pending_.empty()) {
    const int n = ring_buffer__poll(rb_, static_cast<int>(timeout.count()));
    if (n < 0 && n != -EINTR) {
      error_ = fmt::format("polling the events ring buffer failed: {}",
                           std::strerror(-n));
      return NextStatus::kError;
    }
  }
  if (pending_.empty()) return NextStatus::kTimeout;
  *out = std::move(pending_.front());
  pending_.pop_front();
  return NextStatus::kOk;
}

SourceDrops BpfEventSource::Drops() const {
  SourceDrops drops;
  drops.decode_error = decode_errors_.load();
  auto sum = [&](uint32_t reason) {
    return SumPerCpu(drops_fd_, reason, &last_drops_[reason], "drop");
  };
  drops.ringbuf_full = sum(GPUQ_DROP_RINGBUF_FULL);
  drops.map_full = sum(GPUQ_DROP_MAP_FULL);
  drops.kfd_exit_skipped = sum(GPUQ_DROP_KFD_EXIT_SKIPPED);
  drops.args_unreadable = sum(GPUQ_DROP_ARGS_UNREADABLE);
  for (size_t i = 0; i < prog_fds_.size(); ++i) {
    bpf_prog_info info;
    std::memset(&info, 0, sizeof(info));
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(prog_fds_[i], &info, &len) == 0) {
      last_prog_skipped_[i].store(info.recursion_misses);
    } else {
      Log().Write(LogLevel::kWarn,
                  fmt::format("cannot read a program's skipped runs: {}; its "
                              "last value stays counted",
                              std::strerror(errno)));
    }
    // A failed read keeps the program's last value: the sum never goes back.
    const uint64_t skipped = last_prog_skipped_[i].load();
    drops.prog_skipped += skipped;
    drops.prog_skipped_by_program.push_back({prog_names_[i], skipped});
  }
  return drops;
}

}  // namespace gpuq

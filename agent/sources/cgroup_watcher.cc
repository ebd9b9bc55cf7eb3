#include "sources/cgroup_watcher.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <gpuq/cgroup_watch.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cgroup_watch.skel.h"
#include "common/worker_thread.h"
#include "loader/percpu_sum.h"

namespace gpuq {
namespace {

constexpr auto kPollSlice = std::chrono::milliseconds(100);
constexpr auto kExpireEvery = std::chrono::seconds(1);

}  // namespace

std::vector<ProbeStatus> CgroupWatcher::Probes(bool attached,
                                               const std::string& detail) {
  // Raw tracepoints: the `tracepoint` tier's kind of hook, on every kernel.
  const std::string tier = attached ? "tracepoint" : "none";
  return {{"cgroup_mkdir", "cgroup:cgroup_mkdir", "raw_tp", attached, detail,
           "cgroup", tier},
          {"cgroup_rmdir", "cgroup:cgroup_rmdir", "raw_tp", attached, detail,
           "cgroup", tier}};
}

std::unique_ptr<CgroupWatcher> CgroupWatcher::Start(LearnedCgroups* learned,
                                                    std::string* error) {
  std::unique_ptr<CgroupWatcher> w(new CgroupWatcher());
  w->learned_ = learned;
  w->skel_ = cgroup_watch_bpf__open_and_load();
  if (w->skel_ == nullptr) {
    *error = fmt::format("cgroup watcher: loading bpf/cgroup_watch failed: {}",
                         std::strerror(errno));
    return nullptr;
  }
  const int err = cgroup_watch_bpf__attach(w->skel_);
  if (err != 0) {
    *error = fmt::format(
        "cgroup watcher: attaching to the cgroup_mkdir/cgroup_rmdir raw "
        "tracepoints failed: {}",
        std::strerror(-err));
    return nullptr;
  }
  w->rb_ = ring_buffer__new(bpf_map__fd(w->skel_->maps.cgroup_events),
                            &CgroupWatcher::OnRecord, w.get(), nullptr);
  if (w->rb_ == nullptr) {
    *error = fmt::format("cgroup watcher: cannot open its ring buffer: {}",
                         std::strerror(errno));
    return nullptr;
  }
  w->worker_ =
      StartWorkerThread("cgroup watcher", [raw = w.get()] { raw->Work(); });
  return w;
}

CgroupWatcher::~CgroupWatcher() {
  stop_ = true;
  if (worker_.joinable()) worker_.join();
  if (rb_ != nullptr) ring_buffer__free(rb_);
  if (skel_ != nullptr) cgroup_watch_bpf__destroy(skel_);
}

int CgroupWatcher::OnRecord(void* ctx, void* data, size_t size) {
  auto* self = static_cast<CgroupWatcher*>(ctx);
  if (size < sizeof(gpuq_cgroup_watch_record)) return 0;
  gpuq_cgroup_watch_record rec;
  std::memcpy(&rec, data, sizeof(rec));
  const auto now = LearnedCgroups::Clock::now();
  if (rec.kind == GPUQ_CGROUP_MKDIR) {
    const size_t len = std::min<size_t>(rec.path_len, sizeof(rec.path));
    const std::string path(rec.path, strnlen(rec.path, len));
    if (!path.empty()) self->learned_->Created(rec.cgroup_id, path, now);
  } else if (rec.kind == GPUQ_CGROUP_RMDIR) {
    self->learned_->Removed(rec.cgroup_id, now);
  }
  return 0;
}

uint64_t CgroupWatcher::KernelLosses() const {
  return SumPerCpu(bpf_map__fd(skel_->maps.cgroup_drops),
                   GPUQ_CGROUP_DROP_RINGBUF_FULL, &last_losses_,
                   "cgroup event loss");
}

void CgroupWatcher::Work() {
  auto next_expire = std::chrono::steady_clock::now() + kExpireEvery;
  while (!stop_.load()) {
    // EINTR and transient errors: try again on the next slice.
    ring_buffer__poll(rb_, static_cast<int>(kPollSlice.count()));
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_expire) {
      learned_->Expire(now);
      learned_->SetLost(KernelLosses());
      next_expire = now + kExpireEvery;
    }
  }
}

}  // namespace gpuq

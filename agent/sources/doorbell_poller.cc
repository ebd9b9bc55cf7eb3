#include "sources/doorbell_poller.h"

namespace gpuq {

// Placeholder so the agent links while the poller is written; Open refuses.
std::unique_ptr<DoorbellPoller> DoorbellPoller::Open(const Options&,
                                                     std::string* error) {
  *error = "--doorbells=uprobe is not implemented yet";
  return nullptr;
}

DoorbellPoller::~DoorbellPoller() = default;
void DoorbellPoller::Rescan() {}
void DoorbellPoller::SyncKnown(
    const std::vector<std::pair<uint32_t, uint64_t>>&) {}
void DoorbellPoller::Poll(
    const std::function<std::optional<DoorbellOwner>(uint32_t, uint64_t)>&,
    const std::function<void(const Event&)>&) {}
std::vector<ProbeStatus> DoorbellPoller::Probes() const { return {}; }
uint64_t DoorbellPoller::MapFullDrops() const { return 0; }
bool DoorbellPoller::ProcessAlive(uint32_t) const { return false; }

}  // namespace gpuq

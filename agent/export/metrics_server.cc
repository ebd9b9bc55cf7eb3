#include "export/metrics_server.h"

#include <fmt/format.h>

#include <exception>

namespace gpuq {

std::unique_ptr<MetricsServer> MetricsServer::Start(
    const std::string& listen_address,
    std::shared_ptr<prometheus::Collectable> collectable, std::string* error) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  try {
    // One worker thread: scrapes are rare and Collect() is cheap.
    server->exposer_ = std::make_unique<prometheus::Exposer>(listen_address, 1);
  } catch (const std::exception& e) {
    *error = fmt::format(
        "cannot listen on {} ({}): is another process using the port? Pick "
        "another with --web.listen-address",
        listen_address, e.what());
    return nullptr;
  }
  server->collectable_ = std::move(collectable);
  server->exposer_->RegisterCollectable(server->collectable_);
  return server;
}

int MetricsServer::Port() const {
  const auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace gpuq

// /metrics over HTTP (prometheus-cpp's civetweb Exposer).
#pragma once

#include <prometheus/exposer.h>

#include <memory>
#include <string>

#include "export/collector.h"

namespace gpuq {

/// Thread-safety: construct and destroy on one thread; civetweb threads call
/// the collectable.
class MetricsServer {
 public:
  /// Binds `listen_address` ("host:port"; port 0 picks a free one) and
  /// serves `collectable` at /metrics. Returns nullptr with *error set to
  /// one line when the address cannot be bound.
  static std::unique_ptr<MetricsServer> Start(
      const std::string& listen_address,
      std::shared_ptr<prometheus::Collectable> collectable, std::string* error);

  /// The port actually bound.
  int Port() const;

 private:
  MetricsServer() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Collectable> collectable_;
};

}  // namespace gpuq

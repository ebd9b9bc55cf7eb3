// /metrics over HTTP (prometheus-cpp's civetweb Exposer).
#pragma once

#include <prometheus/exposer.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "export/collector.h"
#include "export/tls/civetweb_tls.h"
#include "export/web_config.h"

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
  /// The same, with HTTP basic auth on /metrics when `web` has users (a
  /// request without valid credentials gets 401), and HTTPS instead of HTTP
  /// when `web.tls` is set.
  static std::unique_ptr<MetricsServer> Start(
      const std::string& listen_address, const WebConfig& web,
      std::shared_ptr<prometheus::Collectable> collectable, std::string* error);

  /// The port actually bound.
  int Port() const;

  /// Stops serving: returns once civetweb's threads are gone, promptly (see
  /// metrics_server.cc). The destructor calls it.
  ~MetricsServer();

 private:
  MetricsServer() = default;
  bool CheckPassword(const std::string& user, const std::string& password);

  WebConfig web_;
  std::mutex auth_mutex_;  ///< guards verified_
  /// user -> the last password that matched its hash: bcrypt is slow on
  /// purpose, and a scraper sends the same credentials every time.
  std::map<std::string, std::string> verified_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  /// Where a connection reaches the listener (loopback for a wildcard).
  std::string wake_host_;
  std::shared_ptr<prometheus::Collectable> collectable_;
};

}  // namespace gpuq

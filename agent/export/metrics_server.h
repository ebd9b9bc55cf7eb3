// /metrics over HTTP (prometheus-cpp's civetweb Exposer), with a landing
// page at / and /healthz on the same listener (docs/operations.md).
#pragma once

#include <prometheus/exposer.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "export/collector.h"
#include "export/health.h"
#include "export/recording_api.h"
#include "export/tls/civetweb_tls.h"
#include "export/web_config.h"

struct mg_connection;
struct mg_context;

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
  /// The same, with HTTP basic auth on /metrics and / when `web` has users
  /// (a request without valid credentials gets 401), and HTTPS instead of
  /// HTTP when `web.tls` is set. /healthz answers what `health` says (null:
  /// "ok"), over HTTPS too but without basic auth: probes rarely carry
  /// credentials, and it tells no more than up or down and why.
  /// `recordings`, when set, answers /api/v1/recordings (behind the same
  /// basic auth as /metrics); it must outlive the server.
  static std::unique_ptr<MetricsServer> Start(
      const std::string& listen_address, const WebConfig& web,
      std::shared_ptr<prometheus::Collectable> collectable, std::string* error,
      HealthCheck health = nullptr, RecordingApi* recordings = nullptr);

  /// The port actually bound.
  int Port() const;

  /// Stops serving: returns once civetweb's threads are gone, promptly (see
  /// metrics_server.cc).
  ~MetricsServer();

 private:
  MetricsServer() = default;
  /// Stops civetweb, promptly; exposer_ must be set.
  void Stop();
  bool CheckPassword(const std::string& user, const std::string& password);
  /// civetweb's begin_request: answers / and /healthz of the server whose
  /// context `conn` belongs to; 0 for any other path (civetweb goes on to
  /// /metrics' handler, or 404).
  static int BeginRequest(mg_connection* conn);
  /// civetweb's init_context: maps the context to the server being started.
  static void InitContext(const mg_context* ctx);
  int Serve(mg_connection* conn);
  /// Answers a request of the recording API (authorized already).
  int ServeApi(mg_connection* conn, const std::string& path);
  /// The request's basic-auth credentials are those of a user in `web_`
  /// (true when there are no users).
  bool Authorized(mg_connection* conn);

  WebConfig web_;       ///< set before civetweb starts, then read-only
  HealthCheck health_;  ///< the same
  RecordingApi* recordings_ = nullptr;  ///< the same
  std::mutex auth_mutex_;               ///< guards verified_
  /// user -> the last password that matched its hash: bcrypt is slow on
  /// purpose, and a scraper sends the same credentials every time.
  std::map<std::string, std::string> verified_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  /// Where a connection reaches the listener (loopback for a wildcard).
  std::string wake_host_;
  std::shared_ptr<prometheus::Collectable> collectable_;
};

}  // namespace gpuq

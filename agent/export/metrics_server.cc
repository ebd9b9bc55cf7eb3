#include "export/metrics_server.h"

#include <CivetServer.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace gpuq {
namespace {

/// Connections served at once (civetweb worker threads). Each idle peer
/// holds one for at most kRequestTimeoutMs, so up to kServerThreads - 1
/// idle or half-sent connections cannot delay a scrape; more only delay it
/// by the timeout per batch. Idle workers cost a stack of virtual memory.
constexpr int kServerThreads = 128;
/// How long a connection may take to send its request.
constexpr int kRequestTimeoutMs = 2000;

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::string& s = a.size() == b.size() ? b : a;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ s[i]);
  }
  return diff == 0;
}

// civetweb calls init_ssl with its own user data (the CivetServer), so the
// TLS settings of the one server that uses them, and why they failed, live
// here.
std::mutex g_tls_mu;
std::optional<TlsConfig> g_tls;
std::string g_tls_error;

int InitSsl(void* ssl_ctx, void* /*user_data*/) {
  std::lock_guard<std::mutex> lock(g_tls_mu);
  g_tls_error = "no TLS settings";
  if (!g_tls || !ConfigureTlsContext(ssl_ctx, *g_tls, &g_tls_error)) {
    // civetweb then refuses to start, and its exception blames the port:
    // Start() says this instead.
    return -1;
  }
  g_tls_error.clear();
  return 1;  // configured: civetweb must not look for ssl_certificate
}

// Why the TLS setup of the server being started failed; "" if it did not.
std::string TakeTlsError() {
  std::lock_guard<std::mutex> lock(g_tls_mu);
  return std::exchange(g_tls_error, "");
}

}  // namespace

namespace {

// The host a local connection reaches a listener on `listen_address` by.
std::string WakeHost(const std::string& listen_address) {
  const auto colon = listen_address.rfind(':');
  std::string host =
      colon == std::string::npos ? "" : listen_address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    return host == "::" ? "::1" : host;
  }
  return host.empty() || host == "0.0.0.0" ? "127.0.0.1" : host;
}

// Opens and closes one TCP connection to host:port (errors ignored).
void Knock(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) !=
      0) {
    return;
  }
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    connect(fd, res->ai_addr, res->ai_addrlen);
    close(fd);
  }
  freeaddrinfo(res);
}

}  // namespace

std::unique_ptr<MetricsServer> MetricsServer::Start(
    const std::string& listen_address,
    std::shared_ptr<prometheus::Collectable> collectable, std::string* error) {
  return Start(listen_address, WebConfig{}, std::move(collectable), error);
}

std::unique_ptr<MetricsServer> MetricsServer::Start(
    const std::string& listen_address, const WebConfig& web,
    std::shared_ptr<prometheus::Collectable> collectable, std::string* error) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  if (web.tls) {
    std::string tls_error;
    if (!LoadCivetwebTlsShims(&tls_error)) {
      *error = tls_error;
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(g_tls_mu);
    g_tls = web.tls;
    g_tls_error.clear();
  }
  try {
    // civetweb serves each connection on one worker thread until the
    // request is read or request_timeout_ms passes (default 30 s). With one
    // worker, a single idle or half-sent connection blinded every scrape
    // for 30 s (Prometheus gives up after 10 s). Several workers and a
    // short request timeout keep a normal scrape answering while idle
    // peers are timed out: a scrape request arrives at once.
    std::vector<std::string> options{
        "listening_ports",    listen_address + (web.tls ? "s" : ""),
        "num_threads",        std::to_string(kServerThreads),
        "request_timeout_ms", std::to_string(kRequestTimeoutMs)};
    if (web.tls) {
      // civetweb copies the callbacks at start.
      CivetCallbacks callbacks;
      callbacks.init_ssl = InitSsl;
      server->exposer_ =
          std::make_unique<prometheus::Exposer>(std::move(options), &callbacks);
    } else {
      server->exposer_ =
          std::make_unique<prometheus::Exposer>(std::move(options));
    }
  } catch (const std::exception& e) {
    // civetweb runs init_ssl within its start, on this thread: a TLS file
    // that vanished or changed after the config was checked ends here.
    if (std::string tls_error = TakeTlsError(); !tls_error.empty()) {
      *error =
          fmt::format("cannot serve TLS on {}: {}", listen_address, tls_error);
      return nullptr;
    }
    *error = fmt::format(
        "cannot listen on {} ({}): is another process using the port? Pick "
        "another with --web.listen-address",
        listen_address, e.what());
    return nullptr;
  }
  if (!web.basic_auth_users.empty()) {
    // Before the collectable: gpuq series are never served without auth.
    server->web_ = web;
    MetricsServer* self = server.get();  // the exposer dies before *self
    server->exposer_->RegisterAuth(
        [self](const std::string& user, const std::string& password) {
          return self->CheckPassword(user, password);
        },
        "gpuq-agent", "/metrics");
  }
  server->wake_host_ = WakeHost(listen_address);
  server->collectable_ = std::move(collectable);
  server->exposer_->RegisterCollectable(server->collectable_);
  return server;
}

bool MetricsServer::CheckPassword(const std::string& user,
                                  const std::string& password) {
  // Unknown users cost a bcrypt too: response times do not reveal names.
  static const std::string kDummy =
      "$2b$10$gpuqagentdummysaltxxx.uNRYnAFiXAIdAKYICkJ5clIa5DLQJv2";
  if (password.find('\0') != std::string::npos) return false;
  const auto it = web_.basic_auth_users.find(user);
  const std::string& hash =
      it != web_.basic_auth_users.end() ? it->second : kDummy;
  {
    std::lock_guard<std::mutex> lock(auth_mutex_);
    const auto seen = verified_.find(user);
    if (it != web_.basic_auth_users.end() && seen != verified_.end() &&
        ConstantTimeEquals(seen->second, password)) {
      return true;
    }
  }
  const auto crypted = Crypt(password, hash);
  const bool ok = it != web_.basic_auth_users.end() && crypted &&
                  ConstantTimeEquals(*crypted, hash);
  if (ok) {
    std::lock_guard<std::mutex> lock(auth_mutex_);
    verified_[user] = password;
  }
  return ok;
}

MetricsServer::~MetricsServer() {
  if (exposer_ == nullptr) return;
  // civetweb's master thread polls its listening sockets in quanta of 2 s
  // (SOCKET_TIMEOUT_QUANTUM) and sees mg_stop()'s flag only after one, so a
  // plain stop takes up to 2 s. A connection wakes its poll at once: knock
  // every 10 ms until the exposer (mg_stop) is gone. Workers are woken by
  // mg_stop itself (no keep-alive: a worker never idles on a connection).
  const int port = Port();
  std::atomic<bool> stopped{false};
  std::thread knocker([&] {
    while (!stopped.load()) {
      Knock(wake_host_, port);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  exposer_.reset();
  stopped.store(true);
  knocker.join();
}

int MetricsServer::Port() const {
  const auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace gpuq

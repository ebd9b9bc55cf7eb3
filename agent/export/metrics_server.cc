#include "export/metrics_server.h"

#include <CivetServer.h>
#include <civetweb.h>
#include <fmt/format.h>
#include <netdb.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "export/listen_error.h"

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

// civetweb calls begin_request with the connection alone: each server's
// context is mapped to it when civetweb starts it (init_context, on the
// thread in Start(), which holds g_start_mu meanwhile).
std::mutex g_start_mu;
MetricsServer* g_starting = nullptr;  // guarded by g_start_mu
std::mutex g_servers_mu;
std::map<const mg_context*, MetricsServer*> g_servers;  // by g_servers_mu

// A small page like the exporters' (node_exporter's): what this is and
// where the endpoints are. Relative links, so a proxy that serves the agent
// under a path prefix still leads to them.
const std::string& LandingPage() {
  static const std::string page = fmt::format(
      R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>gpuq-agent</title>
</head>
<body>
<h1>gpuq-agent</h1>
<p>Per-container visibility of AMD GPU hardware queues (amdkfd), version {}.</p>
<ul>
<li><a href="metrics">Metrics</a>: the Prometheus exposition</li>
<li><a href="healthz">Health</a>: ok, or 503 and why</li>
</ul>
</body>
</html>
)",
      GPUQ_VERSION);
  return page;
}

// Base64 (RFC 4648, with padding) as basic auth carries it; nullopt when
// `text` is not.
std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(c)) < 0) {
        return std::nullopt;  // a letter after '=', or not base64
      }
    }
    const unsigned bits = (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) |
                          (unsigned(v[2]) << 6) | unsigned(v[3]);
    out += static_cast<char>((bits >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(bits & 0xff);
  }
  return out;
}

bool IsHead(mg_connection* conn) {
  return std::strcmp(mg_get_request_info(conn)->request_method, "HEAD") == 0;
}

// A whole response; no keep-alive (the server's connections never idle).
int Respond(mg_connection* conn, int status, const char* reason,
            const char* content_type, const std::string& body,
            const std::string& extra_headers = "") {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
            status, reason, content_type, body.size(), extra_headers.c_str());
  if (!IsHead(conn)) mg_write(conn, body.data(), body.size());
  return status;
}

constexpr const char* kText = "text/plain; charset=utf-8";

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
    std::shared_ptr<prometheus::Collectable> collectable, std::string* error,
    HealthCheck health, RecordingApi* recordings) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  // Before civetweb starts: its threads read them from the first request.
  server->web_ = web;
  server->health_ = std::move(health);
  server->recordings_ = recordings;
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
    // civetweb copies the callbacks at start.
    CivetCallbacks callbacks;
    callbacks.begin_request = BeginRequest;
    callbacks.init_context = InitContext;
    if (web.tls) callbacks.init_ssl = InitSsl;
    std::lock_guard<std::mutex> starting(g_start_mu);
    g_starting = server.get();
    server->exposer_ =
        std::make_unique<prometheus::Exposer>(std::move(options), &callbacks);
  } catch (const std::exception&) {
    // civetweb runs init_ssl within its start, on this thread: a TLS file
    // that vanished or changed after the config was checked ends here.
    if (std::string tls_error = TakeTlsError(); !tls_error.empty()) {
      *error =
          fmt::format("cannot serve TLS on {}: {}", listen_address, tls_error);
      return nullptr;
    }
    // civetweb's exception says only that its server did not start.
    *error = ListenError(listen_address);
    return nullptr;
  }
  if (!web.basic_auth_users.empty()) {
    // Before the collectable: gpuq series are never served without auth.
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

void MetricsServer::InitContext(const mg_context* ctx) {
  std::lock_guard<std::mutex> lock(g_servers_mu);
  g_servers[ctx] = g_starting;
}

int MetricsServer::BeginRequest(mg_connection* conn) {
  MetricsServer* server = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_servers_mu);
    const auto it = g_servers.find(mg_get_context(conn));
    if (it != g_servers.end()) server = it->second;
  }
  if (server == nullptr) return 0;
  // Nothing may be thrown into civetweb's C frames.
  try {
    return server->Serve(conn);
  } catch (...) {
    mg_printf(conn,
              "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n"
              "Connection: close\r\n\r\n");
    return 500;
  }
}

int MetricsServer::Serve(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  // local_uri: decoded, without the query string.
  const std::string_view path =
      request->local_uri != nullptr ? request->local_uri : "";
  if (recordings_ != nullptr && RecordingApi::Handles(std::string(path))) {
    if (!Authorized(conn)) {
      return Respond(conn, 401, "Unauthorized", kText, "Unauthorized\n",
                     "WWW-Authenticate: Basic realm=\"gpuq-agent\"\r\n");
    }
    return ServeApi(conn, std::string(path));
  }
  if (path != "/" && path != "/healthz") return 0;
  // The landing page is behind the same basic auth as /metrics (as the
  // exporter toolkit protects every path); /healthz is not (metrics_server.h).
  if (path == "/" && !Authorized(conn)) {
    return Respond(conn, 401, "Unauthorized", kText, "Unauthorized\n",
                   "WWW-Authenticate: Basic realm=\"gpuq-agent\"\r\n");
  }
  if (std::strcmp(request->request_method, "GET") != 0 && !IsHead(conn)) {
    return Respond(conn, 405, "Method Not Allowed", kText,
                   "Method Not Allowed\n", "Allow: GET, HEAD\r\n");
  }
  if (path == "/") {
    return Respond(conn, 200, "OK", "text/html; charset=utf-8", LandingPage());
  }
  const HealthStatus health = health_ ? health_() : HealthStatus{true, ""};
  if (health.ok) return Respond(conn, 200, "OK", kText, "ok\n");
  return Respond(conn, 503, "Service Unavailable", kText,
                 OneLine(health.reason) + "\n");
}

namespace {

// The query string's parameters, decoded (a repeated name: the last).
std::map<std::string, std::string> QueryParameters(const char* query) {
  std::map<std::string, std::string> out;
  if (query == nullptr) return out;
  std::string_view rest(query);
  auto decode = [](std::string_view text) {
    std::string buffer(text.size() + 1, '\0');
    const int n = mg_url_decode(text.data(), static_cast<int>(text.size()),
                                buffer.data(), static_cast<int>(buffer.size()),
                                /*is_form_url_encoded=*/1);
    buffer.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return buffer;
  };
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? "" : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    out[decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : decode(pair.substr(eq + 1));
  }
  return out;
}

const char* Reason(int status) {
  const char* text = mg_get_response_code_text(nullptr, status);
  return text != nullptr ? text : "";
}

// Sends `path`'s bytes as the response; a client that goes away ends it.
int SendFile(mg_connection* conn, const ApiResponse& response) {
  std::unique_ptr<std::FILE, decltype(&std::fclose)> file(
      std::fopen(response.file.c_str(), "rbe"), std::fclose);
  struct stat st {};
  if (file == nullptr || fstat(fileno(file.get()), &st) != 0) {
    return Respond(conn, 500, Reason(500), kText,
                   fmt::format("cannot read {}: {}\n", response.file,
                               std::strerror(errno)));
  }
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            "Content-Length: %lld\r\nContent-Disposition: attachment; "
            "filename=\"%s\"\r\nCache-Control: no-store\r\n"
            "Connection: close\r\n\r\n",
            static_cast<long long>(st.st_size), response.download_name.c_str());
  if (IsHead(conn)) return 200;
  std::vector<char> chunk(1 << 16);
  off_t left = st.st_size;  // the size announced, even if the file grew
  while (left > 0) {
    const size_t want = std::min(chunk.size(), static_cast<size_t>(left));
    const size_t got = std::fread(chunk.data(), 1, want, file.get());
    if (got == 0) break;
    if (mg_write(conn, chunk.data(), got) <= 0) break;  // the client left
    left -= static_cast<off_t>(got);
  }
  return 200;
}

}  // namespace

int MetricsServer::ServeApi(mg_connection* conn, const std::string& path) {
  const mg_request_info* request = mg_get_request_info(conn);
  ApiRequest api{request->request_method, path,
                 QueryParameters(request->query_string)};
  const ApiResponse response = recordings_->Handle(api);
  if (!response.file.empty()) return SendFile(conn, response);
  return Respond(conn, response.status, Reason(response.status),
                 "application/json", response.body, response.extra_headers);
}

bool MetricsServer::Authorized(mg_connection* conn) {
  if (web_.basic_auth_users.empty()) return true;
  const char* header = mg_get_header(conn, "Authorization");
  if (header == nullptr || strncasecmp(header, "Basic ", 6) != 0) {
    return false;
  }
  std::string_view encoded(header + 6);
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  const std::optional<std::string> decoded = DecodeBase64(encoded);
  const size_t colon = decoded ? decoded->find(':') : std::string::npos;
  if (colon == std::string::npos) return false;
  return CheckPassword(decoded->substr(0, colon), decoded->substr(colon + 1));
}

MetricsServer::~MetricsServer() {
  if (exposer_ != nullptr) Stop();
  // civetweb's threads are gone (or never started): none can look this
  // server up any more. A start that failed may have mapped it too.
  std::lock_guard<std::mutex> lock(g_servers_mu);
  for (auto it = g_servers.begin(); it != g_servers.end();) {
    it = it->second == this ? g_servers.erase(it) : std::next(it);
  }
}

void MetricsServer::Stop() {
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

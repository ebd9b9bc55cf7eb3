#include "export/metrics_server.h"

#include <CivetServer.h>
#include <crypt.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "common/bounded_read.h"
#include "common/log.h"

namespace gpuq {
namespace {

/// Connections served at once (civetweb worker threads). Each idle peer
/// holds one for at most kRequestTimeoutMs, so up to kServerThreads - 1
/// idle or half-sent connections cannot delay a scrape; more only delay it
/// by the timeout per batch. Idle workers cost a stack of virtual memory.
constexpr int kServerThreads = 128;
/// How long a connection may take to send its request.
constexpr int kRequestTimeoutMs = 2000;
/// The largest bcrypt cost accepted: htpasswd -B's own maximum.
constexpr int kMaxBcryptCost = 17;
/// The web config and each TLS file it names: far more than any real one.
constexpr uint64_t kMaxWebConfigBytes = 1 << 20;

/// crypt(3) of `password` with the salt and cost of `hash`; nullopt when
/// libcrypt refuses the hash. bcrypt comes from libxcrypt's crypt_rn
/// (libcrypt1: priority "required" in Debian, so on every host and in the
/// runtime image). Linked, not dlopen()ed: the dependency is then one the
/// linker, dpkg and the Dockerfile's runtime package list all see.
std::optional<std::string> Crypt(const std::string& password,
                                 const std::string& hash) {
  // 32 KiB of scratch: on the heap, not on a civetweb worker's stack.
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(),
                             static_cast<int>(sizeof(crypt_data)));
  if (out == nullptr || out[0] == '*') return std::nullopt;
  return std::string(out);
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::string& s = a.size() == b.size() ? b : a;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ s[i]);
  }
  return diff == 0;
}

/// Strips YAML quotes from a scalar ('it''s', "plain"); false with *problem
/// set for what this subset does not read.
bool Unquote(std::string* s, std::string* problem) {
  if (s->empty() || (s->front() != '\'' && s->front() != '"')) return true;
  const char q = s->front();
  if (s->size() < 2 || s->back() != q) {
    *problem = "unterminated quoted scalar";
    return false;
  }
  *s = s->substr(1, s->size() - 2);
  if (q == '"' && s->find('\\') != std::string::npos) {
    *problem = "escape sequences in double-quoted scalars are not supported";
    return false;
  }
  if (q == '\'') *s = std::regex_replace(*s, std::regex("''"), "'");
  return true;
}

/// One line of the block-YAML subset: `<indent>key: value`.
struct YamlLine {
  size_t indent = 0;
  std::string key;
  std::string value;  ///< unquoted; empty when a block follows
};

/// Parses `raw` into *out; false with *problem set, or with an empty key for
/// a blank or comment-only line.
bool ParseYamlLine(const std::string& raw, YamlLine* out,
                   std::string* problem) {
  *out = YamlLine{};
  size_t indent = 0;
  while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) {
    if (raw[indent] == '\t') {
      *problem = "tabs cannot indent YAML";
      return false;
    }
    ++indent;
  }
  // Drop a comment: '#' at the start or after a blank, outside quotes.
  std::string text;
  char quote = 0;
  for (size_t i = indent; i < raw.size(); ++i) {
    const char c = raw[i];
    if (quote == 0 && c == '#' && (i == indent || raw[i - 1] == ' ')) break;
    if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
    } else if (c == quote) {
      quote = 0;
    }
    text += c;
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.pop_back();
  if (text.empty() || text == "---") return true;
  const size_t colon = text.find(": ");
  const bool trailing = text.back() == ':';
  if (colon == std::string::npos && !trailing) {
    *problem = fmt::format("'{}' is not 'key: value'", text);
    return false;
  }
  out->indent = indent;
  out->key = colon != std::string::npos ? text.substr(0, colon)
                                        : text.substr(0, text.size() - 1);
  std::string value =
      colon != std::string::npos ? text.substr(colon + 2) : std::string();
  while (!value.empty() && value.front() == ' ') value.erase(0, 1);
  if (value == "~" || value == "null" || value == "{}") value.clear();
  if (!Unquote(&value, problem) || !Unquote(&out->key, problem)) return false;
  out->value = value;
  if (out->key.empty()) {
    *problem = "empty key";
    return false;
  }
  return true;
}

/// One `key: value` line of tls_server_config into *tls.
bool ReadTlsKey(const YamlLine& y, const std::string& base_dir, TlsConfig* tls,
                std::string* problem) {
  auto file = [&](std::string* out) {
    if (y.value.empty()) {
      *problem = y.key + " is empty";
      return false;
    }
    *out = y.value.front() == '/' ? y.value : base_dir + "/" + y.value;
    return true;
  };
  if (y.key == "cert_file") return file(&tls->cert_file);
  if (y.key == "key_file") return file(&tls->key_file);
  if (y.key == "client_ca_file") return file(&tls->client_ca_file);
  if (y.key == "client_auth_type") {
    tls->client_auth_type = y.value;
    return true;
  }
  if (y.key == "min_version") {
    tls->min_version = y.value;
    return true;
  }
  if (y.key == "cert" || y.key == "key") {
    *problem = fmt::format(
        "inline '{}' is not supported: use cert_file and key_file", y.key);
    return false;
  }
  *problem = fmt::format(
      "'{}' is not supported (supported: cert_file, key_file, "
      "client_auth_type, client_ca_file, min_version)",
      y.key);
  return false;
}

// civetweb calls init_ssl with its own user data (the CivetServer), so the
// TLS settings of the one server that uses them live here.
std::mutex g_tls_mu;
std::optional<TlsConfig> g_tls;

int InitSsl(void* ssl_ctx, void* /*user_data*/) {
  std::lock_guard<std::mutex> lock(g_tls_mu);
  std::string error = "no TLS settings";
  if (!g_tls || !ConfigureTlsContext(ssl_ctx, *g_tls, &error)) {
    // civetweb then refuses to start; its own message does not say why.
    Log().Write(LogLevel::kError, "TLS: " + error);
    return -1;
  }
  return 1;  // configured: civetweb must not look for ssl_certificate
}

}  // namespace

bool LoadWebConfig(const std::string& path, WebConfig* config,
                   std::string* error) {
  *config = WebConfig{};
  // A FIFO or a device named here must not hang or exhaust the agent.
  std::string text, problem;
  if (!ReadRegularFile(path, kMaxWebConfigBytes, &text, &problem)) {
    *error = fmt::format("--web.config.file {}: {}", path, problem);
    return false;
  }
  std::istringstream in(text);
  // Hashes as htpasswd -B, Go's x/crypto/bcrypt and Python's crypt write.
  static const std::regex kBcrypt(R"(\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53})");
  const size_t slash = path.rfind('/');
  const std::string base_dir =
      slash == std::string::npos ? std::string(".") : path.substr(0, slash);
  std::string section, line;
  size_t user_indent = 0;
  int tls_line = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    auto fail = [&](const std::string& what) {
      *error = fmt::format("--web.config.file {}:{}: {}", path, number, what);
      return false;
    };
    YamlLine y;
    if (!ParseYamlLine(line, &y, &problem)) return fail(problem);
    if (y.key.empty()) continue;
    if (y.indent == 0) {
      section = y.key;
      if (section == "http_server_config") {
        return fail("http_server_config is not supported");
      }
      if (section != "basic_auth_users" && section != "tls_server_config") {
        return fail(
            fmt::format("unknown key '{}' (supported: basic_auth_users, "
                        "tls_server_config)",
                        section));
      }
      if (!y.value.empty()) {
        return fail(section + " must be a block of 'key: value' lines");
      }
      if (section == "tls_server_config") {
        if (config->tls) return fail("tls_server_config appears twice");
        config->tls.emplace();
        tls_line = number;
      }
      user_indent = 0;
      continue;
    }
    if (section.empty()) return fail("indented line outside any key");
    if (user_indent == 0) user_indent = y.indent;
    if (y.indent != user_indent) {
      return fail(section +
                  " entries must be 'key: value' lines at one indentation");
    }
    if (section == "tls_server_config") {
      if (!ReadTlsKey(y, base_dir, &*config->tls, &problem)) {
        return fail("tls_server_config: " + problem);
      }
      continue;
    }
    if (!std::regex_match(y.value, kBcrypt)) {
      return fail(fmt::format(
          "the hash of user '{}' is not bcrypt (make one with: htpasswd "
          "-nBC 10 {} | cut -d: -f2)",
          y.key, y.key));
    }
    // Each check takes 2^cost rounds, at load and for every new or wrong
    // password: beyond htpasswd -B's largest cost (17, seconds per check)
    // one hash would hold the agent at start for hours (cost 31: days) and
    // let a few wrong passwords occupy every connection worker.
    int cost = 0;  // two digits: the pattern above says so
    std::from_chars(y.value.data() + 4, y.value.data() + 6, cost);
    if (cost > kMaxBcryptCost) {
      return fail(fmt::format(
          "the hash of user '{}' has bcrypt cost {}, above {} (each check "
          "takes 2^cost rounds; make one with: htpasswd -nBC 10 {} | cut "
          "-d: -f2)",
          y.key, cost, kMaxBcryptCost, y.key));
    }
    if (!Crypt("", y.value)) {
      return fail(fmt::format(
          "cannot check bcrypt hashes: libcrypt.so.1 (libxcrypt) refused "
          "the hash of user '{}'",
          y.key));
    }
    if (!config->basic_auth_users.emplace(y.key, y.value).second) {
      return fail(fmt::format("user '{}' appears twice", y.key));
    }
  }
  if (config->tls) {
    const TlsConfig& tls = *config->tls;
    if (tls.cert_file.empty() || tls.key_file.empty()) {
      *error = fmt::format(
          "--web.config.file {}:{}: tls_server_config needs cert_file and "
          "key_file",
          path, tls_line);
      return false;
    }
    std::string tls_error;
    if (!CheckTlsConfig(tls, &tls_error)) {
      *error =
          fmt::format("--web.config.file {}:{}: {}", path, tls_line, tls_error);
      return false;
    }
  }
  return true;
}

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

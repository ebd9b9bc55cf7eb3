#include "export/metrics_server.h"

#include <CivetServer.h>
#include <crypt.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>  // YAML::DeepRecursion: not in yaml.h
#include <yaml-cpp/yaml.h>

#include <atomic>
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

/// The text of a scalar, empty for a null (`key:`, `key: ~`); nullopt for a
/// sequence or a mapping.
std::optional<std::string> ScalarText(const YAML::Node& node) {
  if (node.IsNull()) return std::string();
  if (node.IsScalar()) return node.Scalar();
  return std::nullopt;
}

/// The 1-based line a node starts on (its key's, for a mapping entry).
int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

/// A mapping key as text; false with *problem set unless a non-empty scalar.
bool KeyText(const YAML::Node& key, std::string* out, std::string* problem) {
  if (!key.IsNull() && !key.IsScalar()) {
    *problem = "a key must be a plain string, not a list or mapping";
    return false;
  }
  *out = key.IsScalar() ? key.Scalar() : std::string();
  if (out->empty()) {
    *problem = "empty key";
    return false;
  }
  return true;
}

/// One `key: value` entry of tls_server_config into *tls.
bool ReadTlsKey(const std::string& key, const YAML::Node& node,
                const std::string& base_dir, TlsConfig* tls,
                std::string* problem) {
  const std::optional<std::string> text = ScalarText(node);
  auto value = [&](std::string* out) {
    if (!text) {
      *problem = key + " must be one value, not a list or mapping";
      return false;
    }
    *out = *text;
    return true;
  };
  auto file = [&](std::string* out) {
    std::string v;
    if (!value(&v)) return false;
    if (v.empty()) {
      *problem = key + " is empty";
      return false;
    }
    *out = v.front() == '/' ? v : base_dir + "/" + v;
    return true;
  };
  if (key == "cert_file") return file(&tls->cert_file);
  if (key == "key_file") return file(&tls->key_file);
  if (key == "client_ca_file") return file(&tls->client_ca_file);
  if (key == "client_auth_type") return value(&tls->client_auth_type);
  if (key == "min_version") return value(&tls->min_version);
  if (key == "cert" || key == "key") {
    *problem = fmt::format(
        "inline '{}' is not supported: use cert_file and key_file", key);
    return false;
  }
  *problem = fmt::format(
      "'{}' is not supported (supported: cert_file, key_file, "
      "client_auth_type, client_ca_file, min_version)",
      key);
  return false;
}

// civetweb calls init_ssl with its own user data (the CivetServer), so the
// TLS settings of the one server that uses them live here.
std::mutex g_tls_mu;
std::optional<TlsConfig> g_tls;

int InitSsl(void* ssl_ctx, void* /*user_data*/) {
  std::lock_guard<std::mutex> lock(g_tls_mu);
  std::string error;
  if (!g_tls || !ConfigureTlsContext(ssl_ctx, *g_tls, &error)) return -1;
  return 1;  // configured: civetweb must not look for ssl_certificate
}

bool ReadWebConfig(const std::string& path, WebConfig* config,
                   std::string* error) {
  *config = WebConfig{};
  // A FIFO or a device named here must not hang or exhaust the agent.
  std::string text, problem;
  if (!ReadRegularFile(path, kMaxWebConfigBytes, &text, &problem)) {
    *error = fmt::format("--web.config.file {}: {}", path, problem);
    return false;
  }
  auto fail = [&](int number, const std::string& what) {
    *error = fmt::format("--web.config.file {}:{}: {}", path, number, what);
    return false;
  };
  // yaml-cpp calls a tab-indented line an "illegal map value": say what it
  // is (YAML forbids tabs in indentation). Control characters, which YAML
  // forbids too, are refused before yaml-cpp sees them: 0.7.0 builds nodes
  // without end on some text with a NUL byte (the web config fuzzer found a
  // 79-byte file that took 2 GiB in seconds).
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const size_t text_start = line.find_first_not_of(" \t");
    if (line.substr(0, text_start).find('\t') != std::string::npos) {
      return fail(number, "tabs cannot indent YAML");
    }
    for (const char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t' && c != '\r') || u == 0x7f) {
        return fail(number,
                    fmt::format("control character 0x{:02x}: YAML allows none",
                                static_cast<unsigned>(u)));
      }
    }
  }
  // The YAML itself is read by yaml-cpp (Debian's libyaml-cpp0.7): quoting,
  // escapes, comments and documents as the exporter-toolkit's Go parser reads
  // them, which a line-by-line subset parser did not.
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    // Its message is a bare "bad file".
    return fail(e.mark.line + 1,
                fmt::format("nested more than {} levels deep", e.depth()));
  } catch (const YAML::Exception& e) {
    // yaml-cpp's words (ErrorMsg), except for its only way of saying a
    // quoted scalar never ends.
    const std::string what = e.msg == YAML::ErrorMsg::EOF_IN_SCALAR
                                 ? "unterminated quoted scalar"
                                 : e.msg;
    if (e.mark.is_null()) {
      *error = fmt::format("--web.config.file {}: {}", path, what);
      return false;
    }
    return fail(e.mark.line + 1, what);
  }
  // Hashes as htpasswd -B, Go's x/crypto/bcrypt and Python's crypt write.
  static const std::regex kBcrypt(R"(\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53})");
  const size_t slash = path.rfind('/');
  const std::string base_dir =
      slash == std::string::npos ? std::string(".") : path.substr(0, slash);
  int tls_line = 0;
  // Several documents (`---`) read as one, as they always have.
  for (const YAML::Node& doc : docs) {
    if (doc.IsNull()) continue;  // empty, or only comments
    if (doc.IsScalar()) {
      return fail(LineOf(doc),
                  fmt::format("'{}' is not 'key: value'", doc.Scalar()));
    }
    if (!doc.IsMap() || doc.Style() == YAML::EmitterStyle::Flow) {
      return fail(LineOf(doc),
                  "the top level must be a block of 'key: value' lines");
    }
    for (const auto& top : doc) {
      const int number = LineOf(top.first);
      if (top.first.Mark().column != 0) {
        return fail(number, "indented line outside any key");
      }
      std::string section;
      if (!KeyText(top.first, &section, &problem)) return fail(number, problem);
      if (section == "http_server_config") {
        return fail(number, "http_server_config is not supported");
      }
      if (section != "basic_auth_users" && section != "tls_server_config") {
        return fail(number, fmt::format("unknown key '{}' (supported: "
                                        "basic_auth_users, tls_server_config)",
                                        section));
      }
      // `key:`, `key: ~` and `key: {}` are empty blocks.
      const YAML::Node& block = top.second;
      const bool empty = ScalarText(block).value_or("x").empty() ||
                         (block.IsMap() && block.size() == 0);
      if (!empty &&
          (!block.IsMap() || block.Style() == YAML::EmitterStyle::Flow)) {
        return fail(number, section + " must be a block of 'key: value' lines");
      }
      if (section == "tls_server_config") {
        if (config->tls) return fail(number, "tls_server_config appears twice");
        config->tls.emplace();
        tls_line = number;
      }
      if (empty) continue;
      for (const auto& entry : block) {
        const int entry_line = LineOf(entry.first);
        std::string name;
        if (!KeyText(entry.first, &name, &problem)) {
          return fail(entry_line, problem);
        }
        if (section == "tls_server_config") {
          if (!ReadTlsKey(name, entry.second, base_dir, &*config->tls,
                          &problem)) {
            return fail(entry_line, "tls_server_config: " + problem);
          }
          continue;
        }
        if (entry.second.IsMap()) {
          return fail(entry_line,
                      section +
                          " entries must be 'key: value' lines at one "
                          "indentation");
        }
        const std::string hash = ScalarText(entry.second).value_or("");
        if (!std::regex_match(hash, kBcrypt)) {
          return fail(entry_line,
                      fmt::format("the hash of user '{}' is not bcrypt (make "
                                  "one with: htpasswd -nBC 10 {} | cut -d: "
                                  "-f2)",
                                  name, name));
        }
        // Each check takes 2^cost rounds, at load and for every new or
        // wrong password: beyond htpasswd -B's largest cost (17, seconds
        // per check) one hash would hold the agent at start for hours (cost
        // 31: days) and let a few wrong passwords occupy every connection
        // worker.
        int cost = 0;  // two digits: the pattern above says so
        std::from_chars(hash.data() + 4, hash.data() + 6, cost);
        if (cost > kMaxBcryptCost) {
          return fail(
              entry_line,
              fmt::format("the hash of user '{}' has bcrypt cost {}, above {} "
                          "(each check takes 2^cost rounds; make one with: "
                          "htpasswd -nBC 10 {} | cut -d: -f2)",
                          name, cost, kMaxBcryptCost, name));
        }
        if (!Crypt("", hash)) {
          return fail(entry_line,
                      fmt::format("cannot check bcrypt hashes: libcrypt.so.1 "
                                  "(libxcrypt) refused the hash of user '{}'",
                                  name));
        }
        if (!config->basic_auth_users.emplace(name, hash).second) {
          return fail(entry_line, fmt::format("user '{}' appears twice", name));
        }
      }
    }
  }
  if (config->tls) {
    const TlsConfig& tls = *config->tls;
    if (tls.cert_file.empty() || tls.key_file.empty()) {
      return fail(tls_line, "tls_server_config needs cert_file and key_file");
    }
    std::string tls_error;
    if (!CheckTlsConfig(tls, &tls_error)) return fail(tls_line, tls_error);
  }
  return true;
}

}  // namespace

bool LoadWebConfig(const std::string& path, WebConfig* config,
                   std::string* error) {
  if (ReadWebConfig(path, config, error)) return true;
  // One line, whatever the names and paths in it hold: YAML's escapes and
  // quoted scalars can put a newline in a key or a file name.
  for (size_t at = 0; (at = error->find('\n', at)) != std::string::npos;) {
    error->replace(at, 1, "\\n");
    at += 2;
  }
  return false;
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

#include "export/web_config.h"

#include <crypt.h>
#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <regex>
#include <set>

#include "common/bounded_read.h"
#include "common/log.h"

namespace gpuq {
namespace {

/// The largest bcrypt cost accepted: htpasswd -B's own maximum.
constexpr int kMaxBcryptCost = 17;
/// The web config: far more than any real one. LibYAML's memory grows with
/// the input at most linearly (tests/fuzz/web_config_fuzzer).
constexpr uint64_t kMaxWebConfigBytes = 1 << 20;

/// LibYAML's event parser over a string: one event at a time, each freed
/// before the next, so nothing beyond the parser's own state is held.
class YamlEvents {
 public:
  explicit YamlEvents(const std::string& text) : text_(text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(
        &parser_, reinterpret_cast<const unsigned char*>(text.data()),
        text.size());
  }
  ~YamlEvents() {
    Release();
    yaml_parser_delete(&parser_);
  }
  YamlEvents(const YamlEvents&) = delete;
  YamlEvents& operator=(const YamlEvents&) = delete;

  /// The next event; false with *problem and *line set where the text is
  /// not YAML (LibYAML's own words).
  bool Next(std::string* problem, size_t* line) {
    Release();
    if (yaml_parser_parse(&parser_, &event_) == 0) {
      // The reader (encoding, control characters) gives a byte offset; the
      // scanner and parser a mark.
      const bool reader = parser_.error == YAML_READER_ERROR;
      const size_t at =
          std::min(reader ? parser_.problem_offset : parser_.problem_mark.index,
                   text_.size());
      *line = reader
                  ? 1 + static_cast<size_t>(std::count(
                            text_.begin(),
                            text_.begin() + static_cast<ptrdiff_t>(at), '\n'))
                  : parser_.problem_mark.line + 1;
      const std::string what =
          parser_.problem != nullptr ? parser_.problem : "a syntax error";
      if (parser_.error == YAML_MEMORY_ERROR) {
        *problem = "out of memory";
      } else if (at < text_.size() && text_[at] == '\t') {
        *problem = fmt::format("tabs cannot indent YAML (LibYAML: {})", what);
      } else {
        *problem = fmt::format("not YAML: {}", what);
        if (parser_.context != nullptr) {
          *problem += fmt::format(" ({})", parser_.context);
        }
      }
      return false;
    }
    held_ = true;
    *line = event_.start_mark.line + 1;
    return true;
  }
  yaml_event_type_t Type() const { return event_.type; }
  /// The text of a scalar event.
  std::string Scalar() const {
    return std::string(reinterpret_cast<const char*>(event_.data.scalar.value),
                       event_.data.scalar.length);
  }
  /// A plain scalar YAML 1.1 reads as null ("", ~, null).
  bool IsNull() const {
    if (event_.type != YAML_SCALAR_EVENT ||
        event_.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
      return false;
    }
    const std::string s = Scalar();
    return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
  }

 private:
  void Release() {
    if (held_) yaml_event_delete(&event_);
    held_ = false;
  }
  const std::string& text_;
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool held_ = false;
};

/// Walks the document, filling *config; false with *error and *line set.
class WebConfigReader {
 public:
  WebConfigReader(const std::string& text, std::string base_dir,
                  WebConfig* config)
      : events_(text), base_dir_(std::move(base_dir)), config_(config) {}

  bool Read() {
    if (!Next() || !Expect(YAML_STREAM_START_EVENT, "a YAML stream")) {
      return false;
    }
    if (!Next()) return false;
    if (events_.Type() == YAML_STREAM_END_EVENT) return true;  // empty
    if (!Expect(YAML_DOCUMENT_START_EVENT, "a YAML document") || !Next()) {
      return false;
    }
    if (events_.IsNull()) {  // "---" alone
      if (!Next()) return false;
    } else if (events_.Type() == YAML_MAPPING_START_EVENT) {
      if (!ReadTopLevel()) return false;
    } else {
      return Fail(
          "the web config must be a mapping (basic_auth_users, "
          "tls_server_config)");
    }
    if (!Expect(YAML_DOCUMENT_END_EVENT, "the end of the document") ||
        !Next()) {
      return false;
    }
    if (events_.Type() != YAML_STREAM_END_EVENT) {
      return Fail("a second YAML document: the web config is one");
    }
    return true;
  }

  const std::string& error() const { return error_; }
  size_t line() const { return line_; }
  size_t tls_line() const { return tls_line_; }

 private:
  bool Next() {
    if (!events_.Next(&error_, &line_)) return false;
    if (events_.Type() == YAML_ALIAS_EVENT) {
      return Fail("YAML aliases are not supported");
    }
    return true;
  }
  bool Fail(std::string what) {
    error_ = std::move(what);
    return false;
  }
  bool Expect(yaml_event_type_t type, const char* what) {
    return events_.Type() == type || Fail(fmt::format("expected {}", what));
  }

  /// A mapping's next key: true with *key, or true with *end at its end.
  bool NextKey(const std::string& where, std::string* key, bool* end) {
    if (!Next()) return false;
    *end = events_.Type() == YAML_MAPPING_END_EVENT;
    if (*end) return true;
    if (events_.Type() != YAML_SCALAR_EVENT) {
      return Fail(where + ": keys must be plain names");
    }
    *key = events_.Scalar();
    return true;
  }

  /// After a key: its value as a string in *value ("" for null); false
  /// (with the error set) when it is a mapping or a sequence.
  bool ScalarValue(const std::string& what, std::string* value) {
    if (!Next()) return false;
    if (events_.Type() != YAML_SCALAR_EVENT) {
      return Fail(what + " must be a string");
    }
    *value = events_.IsNull() ? "" : events_.Scalar();
    return true;
  }

  bool ReadTopLevel() {
    for (;;) {
      std::string key;
      bool end = false;
      if (!NextKey("the web config", &key, &end)) return false;
      if (end) return Next();
      if (key == "http_server_config") {
        return Fail("http_server_config is not supported");
      }
      if (key != "basic_auth_users" && key != "tls_server_config") {
        return Fail(
            fmt::format("unknown key '{}' (supported: basic_auth_users, "
                        "tls_server_config)",
                        key));
      }
      if (!seen_.insert(key).second) return Fail(key + " appears twice");
      const size_t key_line = line_;
      if (!Next()) return false;
      if (events_.IsNull()) continue;  // no users, or no TLS settings
      if (events_.Type() != YAML_MAPPING_START_EVENT) {
        return Fail(key + " must be a mapping of 'key: value'");
      }
      if (key == "tls_server_config") {
        tls_line_ = key_line;
        config_->tls.emplace();
        if (!ReadTls()) return false;
      } else if (!ReadUsers()) {
        return false;
      }
    }
  }

  bool ReadUsers() {
    // Hashes as htpasswd -B, Go's x/crypto/bcrypt and Python's crypt write.
    static const std::regex kBcrypt(R"(\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53})");
    for (;;) {
      std::string user, hash;
      bool end = false;
      if (!NextKey("basic_auth_users", &user, &end)) return false;
      if (end) return true;
      const size_t user_line = line_;
      if (!ScalarValue(fmt::format("the hash of user '{}'", user), &hash)) {
        return false;
      }
      if (!std::regex_match(hash, kBcrypt)) {
        return Fail(fmt::format(
            "the hash of user '{}' is not bcrypt (make one with: htpasswd "
            "-nBC 10 {} | cut -d: -f2)",
            user, user));
      }
      // Each check takes 2^cost rounds, at load and for every new or wrong
      // password: beyond htpasswd -B's largest cost (17, seconds per check)
      // one hash would hold the agent at start for hours (cost 31: days)
      // and let a few wrong passwords occupy every connection worker.
      int cost = 0;  // two digits: the pattern above says so
      std::from_chars(hash.data() + 4, hash.data() + 6, cost);
      if (cost > kMaxBcryptCost) {
        return Fail(fmt::format(
            "the hash of user '{}' has bcrypt cost {}, above {} (each check "
            "takes 2^cost rounds; make one with: htpasswd -nBC 10 {} | cut "
            "-d: -f2)",
            user, cost, kMaxBcryptCost, user));
      }
      if (!Crypt("", hash)) {
        return Fail(fmt::format(
            "cannot check bcrypt hashes: libcrypt.so.1 (libxcrypt) refused "
            "the hash of user '{}'",
            user));
      }
      if (!config_->basic_auth_users.emplace(user, hash).second) {
        line_ = user_line;
        return Fail(fmt::format("user '{}' appears twice", user));
      }
    }
  }

  bool ReadTls() {
    TlsConfig& tls = *config_->tls;
    std::set<std::string> seen;
    for (;;) {
      std::string key, value;
      bool end = false;
      if (!NextKey("tls_server_config", &key, &end)) return false;
      if (end) return true;
      std::string* field = nullptr;
      bool is_file = false;
      if (key == "cert_file" || key == "key_file" || key == "client_ca_file") {
        field = key == "cert_file"  ? &tls.cert_file
                : key == "key_file" ? &tls.key_file
                                    : &tls.client_ca_file;
        is_file = true;
      } else if (key == "client_auth_type") {
        field = &tls.client_auth_type;
      } else if (key == "min_version") {
        field = &tls.min_version;
      } else if (key == "cert" || key == "key") {
        return Fail(fmt::format(
            "tls_server_config: inline '{}' is not supported: use cert_file "
            "and key_file",
            key));
      } else {
        return Fail(fmt::format(
            "tls_server_config: '{}' is not supported (supported: "
            "cert_file, key_file, client_auth_type, client_ca_file, "
            "min_version)",
            key));
      }
      if (!seen.insert(key).second) {
        return Fail("tls_server_config: " + key + " appears twice");
      }
      if (!ScalarValue("tls_server_config: " + key, &value)) return false;
      if (is_file && value.empty()) {
        return Fail("tls_server_config: " + key + " is empty");
      }
      *field =
          is_file && value.front() != '/' ? base_dir_ + "/" + value : value;
    }
  }

  YamlEvents events_;
  std::string base_dir_;
  WebConfig* config_;
  std::set<std::string> seen_;
  std::string error_;
  size_t line_ = 1;
  size_t tls_line_ = 1;
};

}  // namespace

std::optional<std::string> Crypt(const std::string& password,
                                 const std::string& hash) {
  // bcrypt comes from libxcrypt's crypt_rn (libcrypt1: priority "required"
  // in Debian, so on every host and in the runtime image). Linked, not
  // dlopen()ed: the dependency is then one the linker, dpkg and the
  // Dockerfile's runtime package list all see. 32 KiB of scratch: on the
  // heap, not on a civetweb worker's stack.
  auto data = std::make_unique<crypt_data>();
  const char* out = crypt_rn(password.c_str(), hash.c_str(), data.get(),
                             static_cast<int>(sizeof(crypt_data)));
  if (out == nullptr || out[0] == '*') return std::nullopt;
  return std::string(out);
}

bool LoadWebConfig(const std::string& path, WebConfig* config,
                   std::string* error) {
  *config = WebConfig{};
  // A FIFO or a device named here must not hang or exhaust the agent.
  std::string text, problem;
  if (!ReadRegularFile(path, kMaxWebConfigBytes, &text, &problem)) {
    *error = fmt::format("--web.config.file {}: {}", path, problem);
    return false;
  }
  const size_t slash = path.rfind('/');
  const std::string base_dir =
      slash == std::string::npos ? std::string(".") : path.substr(0, slash);
  WebConfigReader reader(text, base_dir, config);
  if (!reader.Read()) {
    // A key or user name may span lines (a multi-line plain scalar): the
    // refusal stays one line.
    *error = OneLine(fmt::format("--web.config.file {}:{}: {}", path,
                                 reader.line(), reader.error()));
    *config = WebConfig{};
    return false;
  }
  if (config->tls) {
    const TlsConfig& tls = *config->tls;
    std::string tls_error = "tls_server_config needs cert_file and key_file";
    if (tls.cert_file.empty() || tls.key_file.empty() ||
        !CheckTlsConfig(tls, &tls_error)) {
      *error = fmt::format("--web.config.file {}:{}: {}", path,
                           reader.tls_line(), tls_error);
      *config = WebConfig{};
      return false;
    }
  }
  return true;
}

}  // namespace gpuq

// --web.config.file: the subset of the Prometheus exporter-toolkit web
// configuration gpuq-agent supports, read with LibYAML's event parser.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "export/tls/civetweb_tls.h"

namespace gpuq {

/// What --web.config.file asks for.
struct WebConfig {
  /// user name -> bcrypt hash ($2a$, $2b$ or $2y$, as htpasswd -B writes).
  std::map<std::string, std::string> basic_auth_users;
  /// Serve HTTPS only (no plain-HTTP listener) when set.
  std::optional<TlsConfig> tls;
};

/// Reads a web config file: one YAML document, a mapping with the
/// exporter-toolkit keys `basic_auth_users` (a mapping of user name to
/// bcrypt hash) and `tls_server_config` (cert_file, key_file,
/// client_auth_type, client_ca_file, min_version; relative paths are
/// relative to the config file, as exporter-toolkit reads them). Refuses
/// http_server_config, the TLS keys civetweb cannot honour (cipher_suites,
/// ...), unknown or repeated keys, hashes that are not bcrypt or cost more
/// than htpasswd allows, TLS files OpenSSL rejects, YAML aliases, and what
/// is not YAML. Returns false with *error set to one line naming the file
/// and line.
bool LoadWebConfig(const std::string& path, WebConfig* config,
                   std::string* error);

/// crypt(3) of `password` with the salt and cost of bcrypt `hash`; nullopt
/// when libcrypt refuses the hash.
std::optional<std::string> Crypt(const std::string& password,
                                 const std::string& hash);

}  // namespace gpuq

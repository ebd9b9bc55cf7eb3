// Makes Debian 12's civetweb serve TLS with OpenSSL 3.
//
// civetweb 1.15+dfsg-4 opens "libssl.so" and "libcrypto.so" with dlopen() on
// the first TLS listener and looks its functions up by name. It is built for
// the OpenSSL 1.1 API, and OpenSSL 3's libssl.so.3 no longer exports
// SSL_get_peer_certificate, so civetweb calls a null pointer on the first TLS
// connection (seen as "0x0 in ?? () from libcivetweb.so.1"). The runtime
// image also has no "libssl.so" symlink (that is libssl-dev's).
//
// The agent ships two small shims (civetweb_lib{ssl,crypto}_shim.c) whose
// SONAMEs are "libssl.so" and "libcrypto.so". Once loaded, glibc's dlopen()
// of those names returns them (ld.so matches a loaded object's DT_SONAME
// before searching the file system), and dlsym() on them searches their
// dependencies libssl.so.3/libcrypto.so.3, plus the one function the libssl
// shim adds.
#pragma once

#include <string>
#include <vector>

namespace gpuq {

/// tls_server_config of an exporter-toolkit web config, the subset served.
struct TlsConfig {
  std::string cert_file;  ///< PEM, leaf first, then any intermediates
  std::string key_file;   ///< PEM private key of the leaf
  /// NoClientCert, RequestClientCert, RequireAnyClientCert,
  /// VerifyClientCertIfGiven or RequireAndVerifyClientCert (Go's names).
  std::string client_auth_type = "NoClientCert";
  std::string client_ca_file;         ///< PEM; needed by the two *Verify* types
  std::string min_version = "TLS12";  ///< TLS10, TLS11, TLS12 or TLS13
};

/// Checks `tls` the way the server will use it (files readable, the key
/// matches the certificate, CA file parses) on a scratch context. Returns
/// false with *error set to one line.
bool CheckTlsConfig(const TlsConfig& tls, std::string* error);

/// Configures civetweb's SSL_CTX (`ssl_ctx`) for `tls`: certificate chain,
/// key, minimum version, client verification.
bool ConfigureTlsContext(void* ssl_ctx, const TlsConfig& tls,
                         std::string* error);

/// Where the shims are looked for: the agent binary's directory, then
/// <binary dir>/../lib/gpuq-agent (the install and image layout).
std::vector<std::string> CivetwebTlsShimDirs();

/// Loads both shims (once per process; they stay loaded). Returns false with
/// *error set to one line naming what is missing.
bool LoadCivetwebTlsShims(std::string* error);

}  // namespace gpuq

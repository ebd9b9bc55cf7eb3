#include "export/tls/civetweb_tls.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <utility>
#include <vector>

#include "common/bounded_read.h"

namespace gpuq {
namespace {

/// A certificate, key or CA bundle: far more than any real one.
constexpr uint64_t kMaxTlsFileBytes = 1 << 20;

constexpr const char* kSslShim = "libgpuq-civetweb-ssl.so";
constexpr const char* kCryptoShim = "libgpuq-civetweb-crypto.so";

std::string ExecutableDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool LoadOne(const char* name, std::string* error) {
  std::vector<std::string> tried;
  for (const std::string& dir : CivetwebTlsShimDirs()) {
    const std::string path = dir + "/" + name;
    if (access(path.c_str(), R_OK) != 0) {
      tried.push_back(path);
      continue;
    }
    // Never closed: civetweb keeps the handles it gets for these SONAMEs.
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
      *error = fmt::format("TLS: cannot load {}: {}", path, dlerror());
      return false;
    }
    return true;
  }
  *error = fmt::format(
      "TLS: {} is not installed next to the agent (tried {}); it ships with "
      "gpuq-agent (cmake --install, or the image's /usr/local/lib/gpuq-agent)",
      name, fmt::join(tried, ", "));
  return false;
}

/// The last OpenSSL error as text (and the queue cleared).
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

int MinVersion(const std::string& name) {
  if (name == "TLS10") return TLS1_VERSION;
  if (name == "TLS11") return TLS1_1_VERSION;
  if (name == "TLS12") return TLS1_2_VERSION;
  if (name == "TLS13") return TLS1_3_VERSION;
  return 0;
}

// Go's crypto/tls ClientAuthType as OpenSSL verify flags. OpenSSL's
// SSL_VERIFY_PEER both requests a certificate and verifies one that is
// sent, so "request/require any (unverified)" accept every chain through
// the callback below.
int AcceptAnyCertificate(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) {
  return 1;
}

}  // namespace

bool ConfigureTlsContext(void* ssl_ctx, const TlsConfig& tls,
                         std::string* error) {
  auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  // OpenSSL opens these files itself and would block on a FIFO or read a
  // device forever: only regular files of a sane size reach it.
  const std::pair<const char*, const std::string*> files[] = {
      {"cert_file", &tls.cert_file},
      {"key_file", &tls.key_file},
      {"client_ca_file", &tls.client_ca_file}};
  for (const auto& [key, path] : files) {
    std::string what;
    if (!path->empty() && !CheckRegularFile(*path, kMaxTlsFileBytes, &what)) {
      *error = fmt::format("TLS {} {}: {}", key, *path, what);
      return false;
    }
  }
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1) {
    *error = fmt::format("TLS cert_file {}: {}", tls.cert_file, OpenSslError());
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, tls.key_file.c_str(),
                                  SSL_FILETYPE_PEM) != 1) {
    *error = fmt::format("TLS key_file {}: {}", tls.key_file, OpenSslError());
    return false;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    *error = fmt::format("TLS key_file {} does not match cert_file {}: {}",
                         tls.key_file, tls.cert_file, OpenSslError());
    return false;
  }
  const int min = MinVersion(tls.min_version);
  if (min == 0 || SSL_CTX_set_min_proto_version(ctx, min) != 1) {
    *error = fmt::format(
        "TLS min_version {}: not supported (TLS10, TLS11, "
        "TLS12, TLS13)",
        tls.min_version);
    return false;
  }
  // Sessions resumed under client verification must carry this id context,
  // or OpenSSL aborts the handshake that resumes them.
  static const unsigned char kSessionContext[] = "gpuq-agent";
  SSL_CTX_set_session_id_context(ctx, kSessionContext,
                                 sizeof(kSessionContext) - 1);
  const std::string& auth = tls.client_auth_type;
  if (auth == "NoClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return true;
  }
  if (!tls.client_ca_file.empty() &&
      SSL_CTX_load_verify_locations(ctx, tls.client_ca_file.c_str(), nullptr) !=
          1) {
    *error = fmt::format("TLS client_ca_file {}: {}", tls.client_ca_file,
                         OpenSslError());
    return false;
  }
  // No SSL_CTX_set_client_CA_list: with the CA names in its
  // CertificateRequest, Go clients (Prometheus 2.42) abort the handshake
  // with "local error: tls: unexpected message" (seen with Debian 12's
  // prometheus); clients send their configured certificate regardless.
  if (auth == "RequestClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAnyCertificate);
  } else if (auth == "RequireAnyClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       AcceptAnyCertificate);
  } else if (auth == "VerifyClientCertIfGiven") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  } else if (auth == "RequireAndVerifyClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
  } else {
    *error = fmt::format(
        "TLS client_auth_type {}: not one of NoClientCert, RequestClientCert, "
        "RequireAnyClientCert, VerifyClientCertIfGiven, "
        "RequireAndVerifyClientCert",
        auth);
    return false;
  }
  return true;
}

bool CheckTlsConfig(const TlsConfig& tls, std::string* error) {
  const bool verifies = tls.client_auth_type == "VerifyClientCertIfGiven" ||
                        tls.client_auth_type == "RequireAndVerifyClientCert";
  if (verifies && tls.client_ca_file.empty()) {
    *error = fmt::format("TLS client_auth_type {} needs client_ca_file",
                         tls.client_auth_type);
    return false;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    *error = "TLS: cannot create an OpenSSL context: " + OpenSslError();
    return false;
  }
  const bool ok = ConfigureTlsContext(ctx, tls, error);
  SSL_CTX_free(ctx);
  return ok;
}

std::vector<std::string> CivetwebTlsShimDirs() {
  const std::string dir = ExecutableDir();
  return {dir, dir + "/../lib/gpuq-agent"};
}

bool LoadCivetwebTlsShims(std::string* error) {
  static std::mutex mu;
  static bool loaded = false;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded) return true;
  // libcrypto first: the libssl shim's dependency pulls in libcrypto.so.3,
  // which is not the SONAME civetweb asks for.
  if (!LoadOne(kCryptoShim, error) || !LoadOne(kSslShim, error)) return false;
  loaded = true;
  return true;
}

}  // namespace gpuq

/*
 * Stands in for "libssl.so" when civetweb opens it, so TLS works with
 * OpenSSL 3 (see tls_shim.h for why and how it is loaded).
 *
 * Debian 12's civetweb 1.15+dfsg-4 is built for the OpenSSL 1.1 API and
 * resolves its OpenSSL functions with dlopen("libssl.so") + dlsym() at run
 * time. Of the 65 names it looks up, one is gone from OpenSSL 3's libssl.so.3:
 * SSL_get_peer_certificate became a macro for SSL_get1_peer_certificate
 * (OpenSSL 3.0, ssl.h, "deprecated in 3.0"). civetweb calls the null pointer
 * on the first TLS connection. This library has the SONAME "libssl.so" and
 * needs libssl.so.3: dlsym() on it finds everything else in libssl.so.3 (a
 * handle's lookup scope includes its dependencies), and this one function
 * here.
 */
#include <openssl/ssl.h>

/*
 * OpenSSL 1.1's SSL_get_peer_certificate returned a new reference that the
 * caller frees with X509_free (civetweb does), exactly what
 * SSL_get1_peer_certificate returns.
 */
__attribute__((visibility("default"))) X509* gpuq_shim_SSL_get_peer_certificate(
    const SSL* s) __asm__("SSL_get_peer_certificate");
X509* gpuq_shim_SSL_get_peer_certificate(const SSL* s) {
  return SSL_get1_peer_certificate(s);
}

// The portable build's libxcrypt shim. Debian 12's static libxcrypt (4.4.33)
// fills salts through its internal _crypt_get_random_bytes, built there on
// arc4random_buf, which glibc has only since 2.36; the portable binary is
// held to glibc 2.34 (RHEL 9). The agent only verifies bcrypt hashes
// (crypt_rn) and never makes a salt, but crypt.o, which it needs, refers to
// the function. This definition, linked before the archive, takes the
// place of libxcrypt's util-get-random-bytes.o with getrandom(2) (glibc
// 2.25), the source libxcrypt itself uses where arc4random_buf is missing.
#include <sys/random.h>

#include <cerrno>
#include <cstddef>

extern "C" bool _crypt_get_random_bytes(void* buf, size_t buflen) {
  auto* out = static_cast<unsigned char*>(buf);
  while (buflen > 0) {
    const ssize_t n = getrandom(out, buflen, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out += n;
    buflen -= static_cast<size_t>(n);
  }
  return true;
}

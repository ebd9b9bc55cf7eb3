// Why /metrics cannot be served on an address, in words: the HTTP library
// says only that its server did not start.
#pragma once

#include <string>

namespace gpuq {

/// One line saying why "host:port" cannot be listened on, found by binding
/// it as the server does: the address is in use (EADDRINUSE), binding the
/// port is not permitted (EACCES: a privileged port without
/// CAP_NET_BIND_SERVICE), the host is not one of this machine's
/// (EADDRNOTAVAIL) or does not resolve, or the system's reason; each with
/// what to do about it.
std::string ListenError(const std::string& listen_address);

}  // namespace gpuq

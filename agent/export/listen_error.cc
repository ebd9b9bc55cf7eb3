#include "export/listen_error.h"

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuq {

std::string ListenError(const std::string& listen_address) {
  // "host:port", "[v6]:port" or ":port" (options.cc checked the form).
  const size_t colon = listen_address.rfind(':');
  std::string host =
      colon == std::string::npos ? "" : listen_address.substr(0, colon);
  const std::string port = colon == std::string::npos
                               ? listen_address
                               : listen_address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string what = fmt::format("cannot listen on {}", listen_address);
  constexpr const char* kPick = "pick another with --web.listen-address";

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int gai = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                              port.c_str(), &hints, &found);
  if (gai != 0) {
    return fmt::format(
        "{}: {} does not resolve ({}); give an address of this host with "
        "--web.listen-address",
        what, host, gai_strerror(gai));
  }
  // The first address, as the server binds it (SO_REUSEADDR: a socket in
  // TIME_WAIT does not count as in use, a listening one does).
  int err = 0;
  const int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC,
                        found->ai_protocol);
  if (fd < 0) {
    err = errno;
  } else {
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, found->ai_addr, found->ai_addrlen) != 0) err = errno;
    close(fd);
  }
  freeaddrinfo(found);
  switch (err) {
    case EADDRINUSE:
      return fmt::format(
          "{}: the address is in use (another process listens on port {}); "
          "{}",
          what, port, kPick);
    case EACCES:
      return fmt::format(
          "{}: not permitted (port {} is privileged here: it needs root or "
          "CAP_NET_BIND_SERVICE); {}",
          what, port, kPick);
    case EADDRNOTAVAIL:
      return fmt::format(
          "{}: {} is not an address of this host; give one of its addresses "
          "(or 0.0.0.0) with --web.listen-address",
          what, host);
    case 0:
      // It binds now: it was freed meanwhile, or the server does not take
      // this form of address (it takes numeric ones).
      return fmt::format(
          "{}: the server did not start on it; give a numeric address "
          "(0.0.0.0:9464, 127.0.0.1:9464, [::1]:9464) with "
          "--web.listen-address",
          what);
    default:
      return fmt::format("{}: {}; {}", what, std::strerror(err), kPick);
  }
}

}  // namespace gpuq

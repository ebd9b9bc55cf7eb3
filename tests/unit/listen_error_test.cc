// Why an address cannot be listened on (export/listen_error.h): in use, not
// an address of this host, not resolvable; named, with what to do.
#include "export/listen_error.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace gpuq {
namespace {

TEST(ListenErrorTest, APortInUseSaysSo) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string where = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const std::string error = ListenError(where);
  close(fd);
  EXPECT_EQ(error.rfind("cannot listen on " + where +
                            ": the address is in use (another process "
                            "listens on port ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("--web.listen-address"), std::string::npos) << error;
}

TEST(ListenErrorTest, AnAddressOfNoHostSaysSo) {
  // 192.0.2.1 (TEST-NET-1, RFC 5737) is no host's.
  EXPECT_EQ(ListenError("192.0.2.1:9464"),
            "cannot listen on 192.0.2.1:9464: 192.0.2.1 is not an address of "
            "this host; give one of its addresses (or 0.0.0.0) with "
            "--web.listen-address");
}

TEST(ListenErrorTest, AHostThatDoesNotResolveSaysSo) {
  const std::string error = ListenError("nohost.invalid:9464");
  EXPECT_EQ(error.rfind("cannot listen on nohost.invalid:9464: nohost.invalid "
                        "does not resolve (",
                        0),
            0u)
      << error;
}

}  // namespace
}  // namespace gpuq

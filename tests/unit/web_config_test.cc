// --web.config.file (export/metrics_server.h, LoadWebConfig): the refusals
// the deploy tier's auth test does not reach without starting an agent.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "export/metrics_server.h"
#include "test_support.h"

namespace gpuq {
namespace {

// A cost-4 bcrypt hash (of "pw"), and the same salt and digest at other costs.
constexpr char kHash04[] =
    "$2b$04$Fw26oQWkaaCIYecgs80hWe9vBvY03SAs7CokhoR4u7dbcdFpLGoAa";

std::string WithCost(const std::string& cost) {
  std::string h = kHash04;
  return h.replace(4, 2, cost);
}

TEST(WebConfigTest, CheapBcryptHashLoads) {
  TempDir dir;
  dir.Write("web.yml",
            std::string("basic_auth_users:\n  prometheus: ") + kHash04 + "\n");
  WebConfig config;
  std::string error;
  ASSERT_TRUE(LoadWebConfig(dir.File("web.yml"), &config, &error)) << error;
  EXPECT_EQ(config.basic_auth_users.at("prometheus"), kHash04);
}

// Found reviewing the parser for tests/fuzz/web_config_fuzzer (a mutated
// cost stalls it): a cost-31 hash held LoadWebConfig (the agent's start) for
// days in its libxcrypt check, and every wrong password would cost as much.
// Refused at once, with the cost named.
TEST(WebConfigTest, BcryptCostAboveHtpasswdsMaximumIsRefused) {
  TempDir dir;
  for (const std::string cost : {"18", "31", "99"}) {
    dir.Write("web.yml",
              "basic_auth_users:\n  alice: " + WithCost(cost) + "\n");
    WebConfig config;
    std::string error;
    EXPECT_FALSE(LoadWebConfig(dir.File("web.yml"), &config, &error));
    EXPECT_EQ(error, "--web.config.file " + dir.File("web.yml") +
                         ":2: the hash of user 'alice' has bcrypt cost " +
                         cost +
                         ", above 17 (each check takes 2^cost rounds; make "
                         "one with: htpasswd -nBC 10 alice | cut -d: -f2)");
  }
}

}  // namespace
}  // namespace gpuq

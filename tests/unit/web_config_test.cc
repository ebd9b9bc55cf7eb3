// --web.config.file (export/web_config.h, LoadWebConfig, LibYAML's event
// parser): what YAML it reads, and the refusals the deploy tier's auth test
// does not reach without starting an agent.
#include "export/web_config.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

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

// What LibYAML reads that the hand-written block subset did not: flow
// mappings, double-quoted escapes, explicit document markers, null sections.
TEST(WebConfigTest, YamlBeyondTheBlockSubsetLoads) {
  TempDir dir;
  const std::string hash = kHash04;
  for (const std::string& text :
       {"basic_auth_users: {alice: '" + hash + "'}\n",
        "---\nbasic_auth_users:\n  \"al\\u0069ce\": \"" + hash + "\"\n...\n",
        "tls_server_config: ~\nbasic_auth_users:\n  alice: " + hash +
            "  # a comment\n"}) {
    dir.Write("web.yml", text);
    WebConfig config;
    std::string error;
    ASSERT_TRUE(LoadWebConfig(dir.File("web.yml"), &config, &error))
        << error << "\n"
        << text;
    EXPECT_EQ(config.basic_auth_users.size(), 1u) << text;
    EXPECT_EQ(config.basic_auth_users.at("alice"), hash) << text;
    EXPECT_FALSE(config.tls) << text;
  }
}

// Each refusal is one line naming the file and the line at fault, and
// leaves no half-read config behind.
TEST(WebConfigTest, RefusalsNameTheLine) {
  TempDir dir;
  const std::string hash = kHash04;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"basic_auth_users: &u\n  alice: " + hash + "\ntls_server_config: *u\n",
       ":3: YAML aliases are not supported"},
      {"basic_auth_users: {}\n---\nbasic_auth_users: {}\n",
       ":2: a second YAML document: the web config is one"},
      {"- basic_auth_users\n",
       ":1: the web config must be a mapping (basic_auth_users, "
       "tls_server_config)"},
      {"basic_auth_users:\n  alice: " + hash + "\nbasic_auth_users: {}\n",
       ":3: basic_auth_users appears twice"},
      {"basic_auth_users:\n  alice: [" + hash + "]\n",
       ":2: the hash of user 'alice' must be a string"},
      {"basic_auth_users:\n\talice: " + hash + "\n",
       ":2: tabs cannot indent YAML"},
      {"basic_auth_users:\n  alice: \"" + hash + "\n",
       ":3: not YAML: found unexpected end of stream"},
      {std::string("basic_auth_users:\n  al") + '\0' + "ice: x\n",
       ":2: not YAML: control characters are not allowed"},
      // Found by web_config_fuzzer: a flow mapping's plain key spanning
      // lines put a line break into the refusal.
      {"{bisa\n\n\nxy\n e: la}\n", ":1: unknown key 'bisa\\x0a"},
      {"tls_server_config:\n  cert_file: a\n  cert_file: b\n",
       ":3: tls_server_config: cert_file appears twice"},
      {"tls_server_config:\n  min_version: TLS13\n",
       ":1: tls_server_config needs cert_file and key_file"},
  };
  for (const auto& [text, want] : cases) {
    dir.Write("web.yml", text);
    WebConfig config;
    std::string error;
    EXPECT_FALSE(LoadWebConfig(dir.File("web.yml"), &config, &error)) << text;
    EXPECT_EQ(error.rfind("--web.config.file " + dir.File("web.yml") + want, 0),
              0u)
        << "got: " << error << "\nwant: ..." << want;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_TRUE(config.basic_auth_users.empty()) << text;
    EXPECT_FALSE(config.tls) << text;
  }
}

}  // namespace
}  // namespace gpuq

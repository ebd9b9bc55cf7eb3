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

// The file is read with yaml-cpp: the forms the deploy tier's auth test and
// the example file use still load, with quoted names and hashes.
TEST(WebConfigTest, QuotedNamesCommentsAndDocumentsLoad) {
  TempDir dir;
  const std::string h = kHash04;
  dir.Write("web.yml",
            "# web config\n---\nbasic_auth_users:\n  prometheus: " + h +
                "\n  alice: '" + h + "'   # quoted works too\n  \"bob\": " + h +
                "\n---\n# an empty document\n");
  WebConfig config;
  std::string error;
  ASSERT_TRUE(LoadWebConfig(dir.File("web.yml"), &config, &error)) << error;
  EXPECT_EQ(config.basic_auth_users.size(), 3u);
  EXPECT_EQ(config.basic_auth_users.at("alice"), h);
  EXPECT_EQ(config.basic_auth_users.at("bob"), h);
  EXPECT_FALSE(config.tls);
  for (const char* empty : {"", "# nothing\n", "basic_auth_users: {}\n",
                            "basic_auth_users: ~\n", "basic_auth_users:\n"}) {
    dir.Write("web.yml", empty);
    ASSERT_TRUE(LoadWebConfig(dir.File("web.yml"), &config, &error))
        << empty << ": " << error;
    EXPECT_TRUE(config.basic_auth_users.empty()) << empty;
  }
}

// What yaml-cpp reads differently from a line-by-line parser must still be
// refused with one line naming the file, the line and the problem.
TEST(WebConfigTest, RefusalsNameTheLineAndTheProblem) {
  TempDir dir;
  const std::string h = kHash04;
  const struct {
    std::string text;
    std::string error;  // after "--web.config.file <path>:"
  } cases[] = {
      {"basic_auth_users:\n  alice: s3cret\n",
       "2: the hash of user 'alice' is not bcrypt"},
      {"basic_auth_user:\n  alice: x\n", "1: unknown key 'basic_auth_user'"},
      {"# c\nhttp_server_config:\n  http2: false\n",
       "2: http_server_config is not supported"},
      {"basic_auth_users:\n\talice: " + h + "\n", "2: tabs cannot indent YAML"},
      // yaml-cpp 0.7 built nodes without end on this one (web config
      // fuzzer; tests/fuzz/regressions/web_config)
      {std::string(", webb con.f\xff\0ig\nbasic_auth_users: ~\n", 37),
       "1: control character 0x00: YAML allows none"},
      {"basic_auth_users:\n  alice: a\x01\n",
       "2: control character 0x01: YAML allows none"},
      {"basic_auth_users:\n  alice: " + h + "\n  alice: " + h + "\n",
       "3: user 'alice' appears twice"},
      {"basic_auth_users: {alice: " + h + "}\n",
       "1: basic_auth_users must be a block of 'key: value' lines"},
      {"basic_auth_users: alice\n",
       "1: basic_auth_users must be a block of 'key: value' lines"},
      {"basic_auth_users:\n  alice:\n    x: " + h + "\n",
       "2: basic_auth_users entries must be 'key: value' lines at one "
       "indentation"},
      {"basic_auth_users:\n  alice: '" + h, "2: unterminated quoted scalar"},
      {"  alice: x\n", "1: indented line outside any key"},
      {"foo\n", "1: 'foo' is not 'key: value'"},
      {"basic_auth_users:\n  '': " + h + "\n", "2: empty key"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n"
       "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
       "4: tls_server_config: 'cipher_suites' is not supported"},
      {"tls_server_config:\n  cert_file: a\n  key: secret\n",
       "3: tls_server_config: inline 'key' is not supported"},
      {"tls_server_config:\n  cert_file:\n",
       "2: tls_server_config: cert_file "
       "is empty"},
      {"tls_server_config:\n  cert_file: a\n",
       "1: tls_server_config needs cert_file and key_file"},
      {"tls_server_config:\n  cert_file: a\ntls_server_config:\n  key_file: "
       "b\n",
       "3: tls_server_config appears twice"},
  };
  for (const auto& c : cases) {
    dir.Write("web.yml", c.text);
    WebConfig config;
    std::string error;
    EXPECT_FALSE(LoadWebConfig(dir.File("web.yml"), &config, &error)) << c.text;
    EXPECT_EQ(
        error.rfind("--web.config.file " + dir.File("web.yml") + ":" + c.error,
                    0),
        0u)
        << c.text << "\n"
        << error;
  }
}

// YAML can put a newline in a name (escapes, quoted scalars over several
// lines); the error stays one line. Deep nesting is refused, not a crash.
// yaml-cpp 0.7 reads a quote left open before the last newline as running
// to the end of the file: refused all the same (not bcrypt, here).
TEST(WebConfigTest, RefusalsStayOneLine) {
  TempDir dir;
  for (const std::string& text :
       {std::string("basic_auth_users:\n  \"al\\nice\": x\n"),
        std::string("\"a\nb\": x\n"), std::string(100000, '['),
        "basic_auth_users:\n  alice: '" + std::string(kHash04) + "\n"}) {
    dir.Write("web.yml", text);
    WebConfig config;
    std::string error;
    EXPECT_FALSE(LoadWebConfig(dir.File("web.yml"), &config, &error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(error.rfind("--web.config.file " + dir.File("web.yml") + ":", 0),
              0u)
        << error;
  }
}

}  // namespace
}  // namespace gpuq

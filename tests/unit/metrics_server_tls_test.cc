// The TLS server's start (MetricsServer::Start with a web config's
// tls_server_config): a real civetweb TLS listener with the shims the agent
// loads (copied next to this binary, as they are installed next to the
// agent's), and the error when the TLS setup fails at start although the
// config was checked. Serving HTTPS to a client is the e2e tier's
// (http_abuse_test.sh) and the deploy tier's.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "export/metrics_server.h"
#include "export/web_config.h"
#include "test_support.h"

namespace gpuq {
namespace {

// Writes a self-signed P-256 certificate for 127.0.0.1 and its key.
bool WriteSelfSigned(const std::string& cert_path,
                     const std::string& key_path) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"),
                                                          EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  if (!key || !cert) return false;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return false;
  FILE* c = std::fopen(cert_path.c_str(), "w");
  FILE* k = std::fopen(key_path.c_str(), "w");
  const bool ok = c != nullptr && k != nullptr &&
                  PEM_write_X509(c, cert.get()) == 1 &&
                  PEM_write_PrivateKey(k, key.get(), nullptr, nullptr, 0,
                                       nullptr, nullptr) == 1;
  if (c != nullptr) std::fclose(c);
  if (k != nullptr) std::fclose(k);
  return ok;
}

class MetricsServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteSelfSigned(dir_.File("cert.pem"), dir_.File("key.pem")));
    dir_.Write("web.yml",
               "tls_server_config:\n  cert_file: cert.pem\n"
               "  key_file: key.pem\n");
    std::string error;
    ASSERT_TRUE(LoadWebConfig(dir_.File("web.yml"), &web_, &error)) << error;
    ASSERT_TRUE(web_.tls.has_value());
  }

  TempDir dir_;
  WebConfig web_;
  std::shared_ptr<prometheus::Collectable> nothing_ =
      std::make_shared<prometheus::Registry>();
};

TEST_F(MetricsServerTlsTest, ServesTlsWithTheCheckedFiles) {
  std::string error;
  auto server = MetricsServer::Start("127.0.0.1:0", web_, nothing_, &error);
  ASSERT_NE(server, nullptr) << error;
  EXPECT_GT(server->Port(), 0);
}

// The config was checked, then its certificate went (a rotation between
// the check and the start): the start fails with what TLS said, not with
// civetweb's guess that the port is taken.
TEST_F(MetricsServerTlsTest, ACertificateGoneAtStartIsTheError) {
  ASSERT_EQ(::unlink(dir_.File("cert.pem").c_str()), 0);
  std::string error;
  auto server = MetricsServer::Start("127.0.0.1:0", web_, nothing_, &error);
  EXPECT_EQ(server, nullptr);
  const std::string expected =
      "cannot serve TLS on 127.0.0.1:0: TLS cert_file " +
      dir_.File("cert.pem") + ": ";
  EXPECT_EQ(error.rfind(expected, 0), 0u) << error;
  EXPECT_EQ(error.find("another process"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  // The next start, with the files back, is not blamed for the last one.
  ASSERT_TRUE(WriteSelfSigned(dir_.File("cert.pem"), dir_.File("key.pem")));
  server = MetricsServer::Start("127.0.0.1:0", web_, nothing_, &error);
  EXPECT_NE(server, nullptr) << error;
}

// A port that is really taken still says so.
TEST_F(MetricsServerTlsTest, APortTakenIsStillThePort) {
  std::string error;
  auto first = MetricsServer::Start("127.0.0.1:0", web_, nothing_, &error);
  ASSERT_NE(first, nullptr) << error;
  const std::string address = "127.0.0.1:" + std::to_string(first->Port());
  auto second = MetricsServer::Start(address, web_, nothing_, &error);
  EXPECT_EQ(second, nullptr);
  EXPECT_NE(error.find("cannot listen on " + address), std::string::npos)
      << error;
}

}  // namespace
}  // namespace gpuq

// libFuzzer harness: the --web.config.file reader (export/web_config.cc,
// LibYAML's event parser and the exporter-toolkit keys) and the TLS checks
// it runs
// (export/tls). Input: the bytes of a web config file. It is written to a
// directory of its own, next to a certificate, key and CA that relative
// paths in the input can name (server.crt, server.key, ca.crt: copied from
// $GPUQ_FUZZ_TLS_DIR when set, see run_fuzzer.sh).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "export/metrics_server.h"

namespace {

std::string g_dir;

void RemoveDir() {
  std::error_code ignored;
  std::filesystem::remove_all(g_dir, ignored);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") +
                      "/gpuq-web-config-fuzz.XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  g_dir = templ;
  std::atexit(RemoveDir);
  if (const char* tls = std::getenv("GPUQ_FUZZ_TLS_DIR")) {
    for (const char* name : {"server.crt", "server.key", "ca.crt"}) {
      std::error_code ignored;
      std::filesystem::copy_file(std::string(tls) + "/" + name,
                                 g_dir + "/" + name, ignored);
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = g_dir + "/web.yml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
  }
  gpuq::WebConfig config;
  std::string error;
  if (!gpuq::LoadWebConfig(path, &config, &error)) {
    // One line, naming the file (main prints it as is).
    if (error.empty() || error.find('\n') != std::string::npos ||
        error.find(path) == std::string::npos) {
      std::fprintf(stderr, "bad error line: '%s'\n", error.c_str());
      std::abort();
    }
  }
  return 0;
}

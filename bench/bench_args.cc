#include "bench_args.h"

#include <CLI/CLI.hpp>

namespace gpuq::bench {

Args::Args(const std::string& description)
    : app_(std::make_unique<CLI::App>(description)) {}

Args::~Args() = default;

template <typename T>
void Args::Add(const std::string& name, T& value, const std::string& help) {
  app_->add_option(name, value, help);
}
template void Args::Add(const std::string&, int&, const std::string&);
template void Args::Add(const std::string&, long&, const std::string&);
template void Args::Add(const std::string&, uint32_t&, const std::string&);
template void Args::Add(const std::string&, size_t&, const std::string&);
template void Args::Add(const std::string&, std::string&, const std::string&);
template void Args::Add(const std::string&, std::vector<size_t>&,
                        const std::string&);

template <typename T>
void Args::Add(const std::string& name, T& value, T min, T max,
               const std::string& help) {
  app_->add_option(name, value, help)->check(CLI::Range(min, max));
}
template void Args::Add(const std::string&, int&, int, int, const std::string&);
template void Args::Add(const std::string&, size_t&, size_t, size_t,
                        const std::string&);

void Args::Flag(const std::string& name, bool& value, const std::string& help) {
  app_->add_flag(name, value, help);
}

std::optional<int> Args::Parse(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_->exit(e);
  }
  return std::nullopt;
}

}  // namespace gpuq::bench

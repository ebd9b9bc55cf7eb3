#include "bench_args.h"

#include <CLI/CLI.hpp>

namespace gpuq::bench {

Args::Args(const std::string& description)
    : app_(std::make_unique<CLI::App>(description)) {}

Args::~Args() = default;

void Args::Add(const std::string& name, int& value, const std::string& help) {
  app_->add_option(name, value, help);
}

void Args::Add(const std::string& name, long& value, const std::string& help) {
  app_->add_option(name, value, help);
}

void Args::Add(const std::string& name, uint32_t& value,
               const std::string& help) {
  app_->add_option(name, value, help);
}

void Args::Add(const std::string& name, size_t& value,
               const std::string& help) {
  app_->add_option(name, value, help);
}

void Args::Add(const std::string& name, std::string& value,
               const std::string& help) {
  app_->add_option(name, value, help);
}

void Args::Add(const std::string& name, std::vector<size_t>& values,
               const std::string& help) {
  app_->add_option(name, values, help);
}

void Args::Add(const std::string& name, int& value, int min, int max,
               const std::string& help) {
  app_->add_option(name, value, help)->check(CLI::Range(min, max));
}

void Args::Add(const std::string& name, size_t& value, size_t min, size_t max,
               const std::string& help) {
  app_->add_option(name, value, help)->check(CLI::Range(min, max));
}

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

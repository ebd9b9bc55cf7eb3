// A benchmark's command line: CLI11 behind a small interface, compiled once
// for every bench in bench_args.cc. CLI11 2.1 (Debian's libcli11-dev) is
// header-only, and each bench spent about 8 s of its 10-12 s compile on it
// (gcc 12, -O2): the suite builds every bench.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gpuq::bench {

class Args {
 public:
  explicit Args(const std::string& description);
  ~Args();
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;

  /// An option NAME ("--reps") that sets VALUE; its default is VALUE's value.
  /// For int, long, uint32_t, size_t (uint64_t too, LP64), std::string and
  /// std::vector<size_t>: bench_args.cc instantiates those.
  template <typename T>
  void Add(const std::string& name, T& value, const std::string& help = "");
  /// The same, refusing a value outside [MIN, MAX] (int and size_t).
  template <typename T>
  void Add(const std::string& name, T& value, T min, T max,
           const std::string& help = "");
  /// A flag NAME that sets VALUE to true.
  void Flag(const std::string& name, bool& value, const std::string& help);

  /// Parses the command line: nothing when the bench should run, else the
  /// exit status to leave with (0 after --help, which it printed; non-zero
  /// for a bad argument, whose message it printed), as CLI11_PARSE does.
  std::optional<int> Parse(int argc, char** argv);

 private:
  std::unique_ptr<CLI::App> app_;
};

}  // namespace gpuq::bench

#include "loader/percpu_sum.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/log.h"

namespace gpuq {

uint64_t SumPerCpu(int map_fd, uint32_t key, std::atomic<uint64_t>* last,
                   const char* what) {
  const int ncpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> values(ncpus > 0 ? static_cast<size_t>(ncpus) : 0);
  if (ncpus <= 0 || bpf_map_lookup_elem(map_fd, &key, values.data()) != 0) {
    const int err = ncpus <= 0 ? -ncpus : errno;
    Log().Write(LogLevel::kWarn,
                fmt::format("cannot read the kernel's {} counter {}: {}; its "
                            "last value stays exported",
                            what, key, std::strerror(err)));
    return last->load();
  }
  uint64_t total = 0;
  for (const uint64_t v : values) total += v;
  last->store(total);
  return total;
}

}  // namespace gpuq

#include "loader/custom_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuq {
namespace {

bool HasKfdTypes(const btf* b) {
  return btf__find_by_name_kind(b, "kfd_process", BTF_KIND_STRUCT) > 0 &&
         btf__find_by_name_kind(b, "queue", BTF_KIND_STRUCT) > 0;
}

// base's types, then split's own, in order: type ids stay what they were
// (libbpf's btf__add_btf refuses a split source).
btf* Flatten(const btf* base, const btf* split, std::string* error) {
  btf* flat = btf__new_empty();
  if (libbpf_get_error(flat) != 0 || btf__add_btf(flat, base) < 0) {
    *error = "cannot copy vmlinux BTF";
    return nullptr;
  }
  for (__u32 id = btf__type_cnt(base); id < btf__type_cnt(split); ++id) {
    if (btf__add_type(flat, split, btf__type_by_id(split, id)) < 0) {
      *error = fmt::format("cannot copy BTF type {}", id);
      btf__free(flat);
      return nullptr;
    }
  }
  return flat;
}

}  // namespace

bool PrepareCustomBtf(const std::string& file, const std::string& vmlinux_btf,
                      CustomBtf* out, std::string* error) {
  // Flat already: it describes task_struct on its own.
  btf* own = btf__parse(file.c_str(), nullptr);
  if (libbpf_get_error(own) == 0) {
    const bool flat =
        btf__find_by_name_kind(own, "task_struct", BTF_KIND_STRUCT) > 0;
    out->kfd_types = HasKfdTypes(own);
    btf__free(own);
    if (flat) {
      out->path = file;
      return true;
    }
  }
  btf* base = btf__parse(vmlinux_btf.c_str(), nullptr);
  if (libbpf_get_error(base) != 0) {
    *error = fmt::format(
        "--btf {}: not flat BTF, and {} cannot be read to "
        "resolve it as split BTF",
        file, vmlinux_btf);
    return false;
  }
  btf* split = btf__parse_split(file.c_str(), base);
  if (libbpf_get_error(split) != 0) {
    btf__free(base);
    *error = fmt::format(
        "--btf {}: neither flat BTF nor BTF split over this kernel's vmlinux "
        "(raw BTF, or an ELF file with a .BTF section)",
        file);
    return false;
  }
  out->kfd_types = HasKfdTypes(split);
  btf* flat = Flatten(base, split, error);
  btf__free(split);
  btf__free(base);
  if (flat == nullptr) {
    *error = "--btf " + file + ": " + *error;
    return false;
  }
  __u32 size = 0;
  const void* data = btf__raw_data(flat, &size);
  char path[] = "/tmp/gpuq-btf.XXXXXX";
  const int fd = mkstemp(path);
  bool ok = fd >= 0 && data != nullptr &&
            write(fd, data, size) == static_cast<ssize_t>(size);
  if (fd >= 0) close(fd);
  btf__free(flat);
  if (!ok) {
    if (fd >= 0) unlink(path);
    *error = fmt::format("--btf {}: cannot write the flattened BTF: {}", file,
                         std::strerror(errno));
    return false;
  }
  out->path = path;
  out->temporary = true;
  return true;
}

}  // namespace gpuq

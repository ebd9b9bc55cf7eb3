#include "submissions/doorbell_counter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <gelf.h>
#include <gpuq/doorbell_abi.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "common/clock.h"
#include "common/log.h"
#include "doorbell.skel.h"
#include "loader/kernel_features.h"
#include "loader/percpu_sum.h"

namespace gpuq {
namespace {

constexpr const char* kScrelease = "hsa_signal_store_screlease";
constexpr const char* kRelaxed = "hsa_signal_store_relaxed";
constexpr const char* kRelease = "hsa_signal_store_release";  // deprecated
// Their returns retire the probe's cached queues (bpf/doorbell.bpf.c).
constexpr const char* kQueueDestroy = "hsa_queue_destroy";
constexpr const char* kShutDown = "hsa_shut_down";

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return !in.bad();
}

// Calls fn with every key of the doorbell hash map fd, in the kernel's order.
template <typename Fn>
void ForEachDoorbellKey(int fd, Fn&& fn) {
  gpuq_doorbell_key key{};
  gpuq_doorbell_key next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    key = next;
    prev = &key;
    fn(key);
  }
}

}  // namespace

bool ReadElfFunctions(const std::string& path,
                      const std::vector<std::string>& names,
                      std::vector<ElfFunction>* out, std::string* error) {
  out->clear();
  // Read into memory first: elf_begin() on the descriptor would size the
  // file with fstat(), which says 0 for /proc files and the like.
  std::string data;
  if (!ReadFile(path, &data)) {
    *error = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return false;
  }
  auto fail = [&](const std::string& what) {
    *error = fmt::format("{}: {}", path, what);
    return false;
  };
  // libelf (elfutils, Debian's libelf1: libbpf links it already) checks
  // every header, offset and size against the file, which a hand-written
  // reader of Elf64_Ehdr/Shdr/Sym had to do itself.
  static const bool libelf_ready = elf_version(EV_CURRENT) != EV_NONE;
  if (!libelf_ready) return fail("libelf is unusable");
  const std::unique_ptr<Elf, int (*)(Elf*)> elf(
      elf_memory(data.data(), data.size()), &elf_end);
  if (elf == nullptr) {
    return fail(fmt::format("bad ELF headers ({})", elf_errmsg(-1)));
  }
  GElf_Ehdr eh;
  if (elf_kind(elf.get()) != ELF_K_ELF ||
      gelf_getehdr(elf.get(), &eh) == nullptr)
    return fail("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail("not a 64-bit little-endian ELF file");
  size_t shnum = 0;
  if (elf_getshdrnum(elf.get(), &shnum) != 0)
    return fail("bad section header table");
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn != nullptr;
       scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr dynsym;
    if (gelf_getshdr(scn, &dynsym) == nullptr)
      return fail("bad section header table");
    if (dynsym.sh_type != SHT_DYNSYM) continue;
    Elf_Data* syms = elf_getdata(scn, nullptr);
    Elf_Scn* strtab = elf_getscn(elf.get(), dynsym.sh_link);
    if (syms == nullptr || strtab == nullptr ||
        elf_getdata(strtab, nullptr) == nullptr ||
        dynsym.sh_entsize != sizeof(Elf64_Sym))
      return fail("bad .dynsym");
    const size_t count = syms->d_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(syms, static_cast<int>(i), &sym) == nullptr)
        return fail("bad .dynsym");
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
          sym.st_shndx >= shnum)
        continue;
      // NULL when st_name is outside the string table or unterminated.
      const char* name = elf_strptr(elf.get(), dynsym.sh_link, sym.st_name);
      if (name == nullptr) continue;
      const std::string sname(name);
      if (std::find(names.begin(), names.end(), sname) == names.end()) continue;
      GElf_Shdr sec;
      if (gelf_getshdr(elf_getscn(elf.get(), sym.st_shndx), &sec) == nullptr ||
          sym.st_value < sec.sh_addr)
        continue;
      // A uprobe takes a file offset, not the symbol's virtual address.
      out->push_back({sname, sym.st_value - sec.sh_addr + sec.sh_offset});
    }
    return true;
  }
  return fail("no .dynsym");
}

std::unique_ptr<DoorbellCounter> DoorbellCounter::Open(const Options& options,
                                                       std::string* error) {
  std::unique_ptr<DoorbellCounter> counter(new DoorbellCounter());
  counter->paths_ = options.paths;
  counter->scanner_ = RuntimeScanner(options.paths.procfs);
  counter->scan_ = options.scan_processes;
  counter->skel_ = doorbell_bpf__open();
  if (counter->skel_ == nullptr) {
    *error = fmt::format("cannot open the doorbell BPF object: {}",
                         std::strerror(errno));
    return nullptr;
  }
  // Both sides include gpuq/doorbell_abi.h; this catches only an object
  // left over from an older build of it.
  if (bpf_map__key_size(counter->skel_->maps.doorbell_counts) !=
          sizeof(gpuq_doorbell_key) ||
      bpf_map__value_size(counter->skel_->maps.doorbell_counts) !=
          sizeof(gpuq_doorbell_count) ||
      bpf_map__key_size(counter->skel_->maps.known_doorbells) !=
          sizeof(gpuq_doorbell_key)) {
    *error =
        "doorbell BPF object and agent disagree on the map layout: rebuild";
    return nullptr;
  }
  if (options.max_doorbells != 0 &&
      bpf_map__set_max_entries(counter->skel_->maps.doorbell_counts,
                               options.max_doorbells) != 0) {
    *error = "cannot size the doorbell count map";
    return nullptr;
  }
  // A batch of packets is classified in a bpf_loop (Linux 5.17): decided
  // here, not from the verifier's refusal.
  if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, nullptr) !=
      1) {
    *error =
        "doorbell counting needs the kernel's bpf_loop helper (Linux 5.17 or "
        "later)";
    return nullptr;
  }
  // One pair of store programs is loaded: the one holding preemption off
  // where the kernel has the kfuncs for it (it may run them on a per-CPU
  // private stack, 6.13+), else the plain one (bpf/doorbell.bpf.c).
  DoorbellCounter& c = *counter;
  c.guarded_ = !options.plain_programs && KernelHasPreemptKfuncs();
  bpf_program* const plain[] = {c.skel_->progs.doorbell_store_screlease,
                                c.skel_->progs.doorbell_store_relaxed};
  bpf_program* const guarded[] = {
      c.skel_->progs.doorbell_store_screlease_guarded,
      c.skel_->progs.doorbell_store_relaxed_guarded};
  for (bpf_program* p : c.guarded_ ? plain : guarded) {
    bpf_program__set_autoload(p, false);
  }
  c.screlease_ = c.guarded_ ? guarded[0] : plain[0];
  c.relaxed_ = c.guarded_ ? guarded[1] : plain[1];
  LogAt(LogLevel::kDebug, "doorbell programs: {}",
        c.guarded_ ? "holding preemption off (bpf_preempt_disable)"
                   : "plain (no bpf_preempt_disable kfunc)");
  const int err = doorbell_bpf__load(counter->skel_);
  if (err != 0) {
    *error = fmt::format("loading the doorbell BPF programs failed: {}",
                         std::strerror(-err));
    return nullptr;
  }
  for (const std::string& path : options.libraries) {
    std::string why;
    if (!counter->AttachLibrary(path, &why)) {
      *error = why;
      return nullptr;
    }
  }
  if (counter->scan_) counter->Rescan({});
  return counter;
}

DoorbellCounter::~DoorbellCounter() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
  if (skel_ != nullptr) doorbell_bpf__destroy(skel_);
}

bool DoorbellCounter::AttachLibrary(const std::string& path,
                                    std::string* error) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *error = fmt::format("{}: {}", path, std::strerror(errno));
    return false;
  }
  // The same file under this or another path: what happened the first time.
  const auto seen = files_.find({st.st_dev, st.st_ino});
  if (seen != files_.end()) {
    const DoorbellLibrary& lib = libraries_[seen->second];
    if (!lib.attached) *error = lib.details.back();
    return lib.attached;
  }
  files_.emplace(std::make_pair(st.st_dev, st.st_ino), libraries_.size());
  DoorbellLibrary lib;
  lib.path = path;
  std::vector<ElfFunction> functions;
  if (!ReadElfFunctions(
          path, {kScrelease, kRelaxed, kRelease, kQueueDestroy, kShutDown},
          &functions, error)) {
    lib.details.push_back(*error);
    libraries_.push_back(lib);
    return false;
  }
  // Attach once per address: aliases (Debian's hsa_signal_store_release is
  // hsa_signal_store_screlease) would count every doorbell twice.
  // screlease and relaxed first, so an alias reports what it aliases.
  std::stable_sort(functions.begin(), functions.end(),
                   [](const ElfFunction& a, const ElfFunction& b) {
                     return (a.name == kRelease) < (b.name == kRelease);
                   });
  std::map<uint64_t, std::string> by_offset;
  std::vector<bpf_link*> links;
  std::set<std::string> attached;
  std::string failure;
  for (const ElfFunction& f : functions) {
    auto [it, fresh] = by_offset.emplace(f.file_offset, f.name);
    if (!fresh) {
      lib.details.push_back(
          fmt::format("{}: alias of {}, not attached", f.name, it->second));
      continue;
    }
    const bool retire = f.name == kQueueDestroy || f.name == kShutDown;
    bpf_program* prog = retire               ? skel_->progs.doorbell_retire
                        : f.name == kRelaxed ? relaxed_
                                             : screlease_;
    // LIBBPF_OPTS spelled out: its statement expression is a GNU extension
    // clang -Wpedantic refuses (the sanitizer build, tests/fuzz).
    bpf_uprobe_opts opts;
    std::memset(&opts, 0, sizeof(opts));
    opts.sz = sizeof(opts);
    opts.retprobe = retire;
    // When these probes started to see rings: a process started later
    // rang nothing unseen, so its doorbells' first batches count from
    // index 0 (bpf/doorbell.bpf.c started_after_attach).
    opts.bpf_cookie = MonotonicNowNs();
    bpf_link* link = bpf_program__attach_uprobe_opts(prog, -1, path.c_str(),
                                                     f.file_offset, &opts);
    if (link == nullptr) {
      failure = fmt::format("attaching {}@0x{:x} of {} failed: {}", f.name,
                            f.file_offset, path, std::strerror(errno));
      break;
    }
    links.push_back(link);
    lib.details.push_back(fmt::format("{}@0x{:x}{}", f.name, f.file_offset,
                                      retire ? " (return)" : ""));
    attached.insert(f.name);
  }
  // The stores count; the returns keep the count's cached queue honest, so
  // stores without them would count reused signal memory.
  if (failure.empty() &&
      !(attached.count(kScrelease) && attached.count(kRelaxed) &&
        attached.count(kQueueDestroy) && attached.count(kShutDown)))
    failure = fmt::format("{} does not export {}, {}, {} and {}", path,
                          kScrelease, kRelaxed, kQueueDestroy, kShutDown);
  if (!failure.empty()) {
    // All or nothing: a library half-probed would undercount silently.
    for (bpf_link* link : links) bpf_link__destroy(link);
    lib.details.push_back(failure);
    libraries_.push_back(lib);
    *error = failure;
    return false;
  }
  links_.insert(links_.end(), links.begin(), links.end());
  lib.attached = true;
  // Which runtimes are counted, said once per file: a container's own ROCm
  // is found only when one of its processes maps it.
  LogAt(LogLevel::kInfo, "doorbell uprobes attached to {}", OneLine(path));
  libraries_.push_back(lib);
  return true;
}

int DoorbellCounter::Rescan(const std::set<uint32_t>& queue_owners) {
  return AttachNew(scanner_.Rescan(queue_owners));
}

int DoorbellCounter::ScanQueueOwners(const std::set<uint32_t>& queue_owners) {
  return AttachNew(scanner_.ScanQueueOwners(queue_owners));
}

int DoorbellCounter::AttachNew(const std::vector<std::string>& paths) {
  int attached = 0;
  for (const std::string& path : paths) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || files_.count({st.st_dev, st.st_ino}))
      continue;
    std::string error;
    if (AttachLibrary(path, &error)) ++attached;
  }
  return attached;
}

std::vector<DoorbellCount> DoorbellCounter::Read() const {
  std::vector<DoorbellCount> out;
  const int fd = bpf_map__fd(skel_->maps.doorbell_counts);
  ForEachDoorbellKey(fd, [&](const gpuq_doorbell_key& key) {
    gpuq_doorbell_count v{};
    if (bpf_map_lookup_elem(fd, &key, &v) != 0) return;  // deleted since
    DoorbellCount& c = out.emplace_back();
    c.tgid = key.tgid;
    c.handle = key.handle;
    c.cgroup_id = v.cgroup_id;
    std::copy(std::begin(v.by_packet), std::end(v.by_packet),
              c.by_packet.begin());
    c.doorbells = v.rings;
    c.barrier_dispatches = v.barrier_dispatches;
  });
  std::sort(out.begin(), out.end(),
            [](const DoorbellCount& a, const DoorbellCount& b) {
              return std::tie(a.tgid, a.handle) < std::tie(b.tgid, b.handle);
            });
  return out;
}

uint64_t DoorbellCounter::Drops() const {
  return SumPerCpu(bpf_map__fd(skel_->maps.doorbell_drops),
                   GPUQ_DB_DROP_MAP_FULL, &last_drops_, "doorbell drop");
}

std::vector<int> DoorbellCounter::ProgramFds() const {
  return {bpf_program__fd(screlease_), bpf_program__fd(relaxed_)};
}

bool DoorbellCounter::AddKnownDoorbell(uint32_t tgid, uint64_t handle) {
  const gpuq_doorbell_key key{handle, tgid, 0};
  const uint8_t one = 1;
  return bpf_map_update_elem(bpf_map__fd(skel_->maps.known_doorbells), &key,
                             &one, BPF_ANY) == 0;
}

bool DoorbellCounter::RemoveKnownDoorbell(uint32_t tgid, uint64_t handle) {
  const gpuq_doorbell_key key{handle, tgid, 0};
  return bpf_map_delete_elem(bpf_map__fd(skel_->maps.known_doorbells), &key) ==
         0;
}

bool DoorbellCounter::DeleteCount(uint32_t tgid, uint64_t handle) {
  const gpuq_doorbell_key key{handle, tgid, 0};
  return bpf_map_delete_elem(bpf_map__fd(skel_->maps.doorbell_counts), &key) ==
         0;
}

}  // namespace gpuq

/* kfd_nullgpu: a test-only LD_PRELOAD library, "the null GPU at the KFD
 * interface".
 *
 * It stands for amdkfd's /dev/kfd ioctl interface, the KFD sysfs topology
 * (/sys/devices/virtual/kfd/kfd/topology) and the render node's
 * libdrm_amdgpu queries, for gfx90a GPUs (MI210-like) and gfx942 ones
 * (MI300X-like, whole or in compute partitions) on a machine with NO
 * GPU and no /dev/kfd; and for the GPU's command processor behind them. With
 * it, ROCr >= 6.3 (Debian's 6.4.3 and 7.2.4), which links the thunk
 * (libhsakmt) statically so that the null thunk of nullgpu.c cannot stand
 * in for it, runs unchanged: rocminfo lists the GPUs, queues are created,
 * AQL packets written and doorbells rung are consumed.
 * TEST ONLY: loaded with LD_PRELOAD by tests/nullgpu/kfd_nullgpu_test.sh,
 * never installed and never used by gpuq-agent. No ROCr or thunk code is
 * copied; what they expect was read from ROCT-Thunk-Interface and
 * ROCm/rocm-systems (projects/rocr-runtime/libhsakmt).
 *
 * What it does:
 *   - open("/dev/kfd") and open("/dev/dri/renderD<128+i>") return
 *     descriptors of one memfd: its offsets are the mmap offsets of every
 *     "device" allocation, so the thunk's own mmap()s of those descriptors
 *     give it ordinary shared memory (forced readable and writable);
 *   - the AMDKFD ioctls on it (matched by _IOC_NR) are answered here:
 *     GET_VERSION 1.14, apertures, memory (USERPTR recorded only; an 8 KiB
 *     doorbell page per GPU), events with amdkfd's semantics (a set wakes
 *     every waiter; event ages), queues;
 *   - the KFD sysfs paths (and /sys/module/amdgpu) are redirected to a tree
 *     written at first use (GPUQ_NULLGPU_SYSFS, below), with amdkfd's
 *     per-process queue directories (proc/<pid>/queues/<id>/) while the
 *     queues live;
 *   - amdgpu_device_initialize/_deinitialize/_get_fd,
 *     amdgpu_get_marketing_name and amdgpu_query_gpu_info are answered for
 *     the render node (no DRM ioctl is made);
 *   - the null command processor (null_cp.c, shared with nullgpu.c)
 *     consumes each AQL queue's packets as a GPU would and writes the
 *     ground truth;
 *   - ROCr's own blit kernels (CopyAligned, CopyMisaligned, Fill: what
 *     hsa_memory_copy, hsa_amd_memory_async_copy and hsa_amd_memory_fill
 *     dispatch when there is no SDMA engine, and the code-object loader's
 *     copies into device memory) are performed: the copy or fill is done
 *     here, so HIP's hipMemcpy round-trips. ROCr 6.4 and 7.2 still
 *     dispatch them with an amd_kernel_code_t header of their own
 *     (GpuAgent::AssembleShader, AssembleTarget::AQL), as 5.2.3 did;
 *   - HIP's own staging-copy kernel, ROCclr's __amd_rocclr_copyBuffer
 *     (what hipMemcpy host<->device runs on the stream's queue in HIP 6.4
 *     and 7.2), is performed too: its kernel object is learnt from HIP's
 *     hsa_executable_symbol_get_info call, interposed (ROCr answers it).
 *     Other ROCclr blit kernels (hipMemset's fills, D2D, images) are not.
 *
 * Environment:
 *   GPUQ_NULLGPU_GPUS   the GPUs (null_gpus.h), gfx90a and gfx942 here
 *                       (default 1 gfx90a, at most 64 nodes: 8xgfx942:cpx)
 *   GPUQ_NULLGPU_PAUSED, GPUQ_NULLGPU_CONTROL, GPUQ_NULLGPU_TRUTH
 *                       the command processor's (null_cp.h); the truth
 *                       (blits = ROCr's, rocclr_blits = HIP's copies) is
 *                       written at every queue destroy too
 *   GPUQ_NULLGPU_KFD    1: KFD forwarding (the QEMU simulator tier of
 *                       tests/kernel/sim), as nullgpu.c's:
 *                       the real /dev/kfd (a KFD char device: the
 *                       simulator) is opened beside the memfd, the null
 *                       GPUs take the gpu_ids of its topology nodes, and
 *                       queue create, destroy, update and CU mask also go
 *                       to it with ROCr's own arguments (ring, read and
 *                       write pointers, priority, mask words), so the
 *                       kernel and gpuq-agent's hooks see ROCr's real
 *                       queues; the null CP still consumes the packets
 *   GPUQ_NULLGPU_KFD_NODES the KFD topology node of each null GPU, "1,2"
 *                       (default 1, 2, ...)
 *   GPUQ_NULLGPU_SYSFS  a directory for the KFD sysfs tree, kept at exit
 *                       (default: a fresh one under $TMPDIR or /tmp,
 *                       removed at exit): written there unless it already
 *                       holds a topology, so that processes run one after
 *                       another share it and gpuq-agent can read it
 *                       (--sysfs-root, beside links to /sys/bus and
 *                       /sys/kernel); each process's queues appear under
 *                       its proc/<pid>/queues/ while they live, as amdkfd
 *                       publishes them
 *   GPUQ_NULLGPU_DEBUG  1: every redirected path and ioctl on stderr */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/kfd_ioctl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kfd_nodes.h"
#include "null_cp.h"
#include "null_gpus.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 64     /* KFD nodes: 8 MI300X in CPX mode */
#define MAX_EVENTS 4096 /* KFD_SIGNAL_EVENT_LIMIT */
#define MAX_MEM 65536
#define DOORBELL_PAGE 8192 /* 1024 64-bit doorbells (gfx9) */
#define MEMFD_BYTES (1ull << 40)
#define HEAP_START (1ull << 20)
#define RENDER_MINOR 128
#define GPU_ID_BASE 0x4a10

static int g_debug;
static null_gpu g_gpus[MAX_GPUS];
static unsigned g_ngpus;
static int g_memfd = -1;
static dev_t g_memfd_dev;
static ino_t g_memfd_ino;
static char g_sysfs[256]; /* the redirected tree */
static int g_sysfs_kept;  /* GPUQ_NULLGPU_SYSFS: shared, left at exit */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t* g_doorbell_page[MAX_GPUS];

#define DBG(...)                                           \
  do {                                                     \
    if (g_debug) fprintf(stderr, "kfdnull: " __VA_ARGS__); \
  } while (0)

/* -------------------------------------------------------- real libc ---- */

typedef int (*open_fn)(const char*, int, ...);
typedef int (*openat_fn)(int, const char*, int, ...);
typedef FILE* (*fopen_fn)(const char*, const char*);
typedef DIR* (*opendir_fn)(const char*);
typedef int (*access_fn)(const char*, int);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef void* (*mmap_fn)(void*, size_t, int, int, int, off_t);

typedef void (*any_fn)(void);

/* dlsym's object pointer as a function pointer (POSIX allows it). */
static any_fn next_fn(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  any_fn f;
  memcpy(&f, &p, sizeof(f));
  return f;
}

/* libc's function NAME (cached: the interposers run on every call). */
static any_fn real(const char* name) {
  static const char* names[16];
  static any_fn fns[16];
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < 16; i++) {
    const char* n = __atomic_load_n(&names[i], __ATOMIC_ACQUIRE);
    if (!n) break;
    if (n == name || !strcmp(n, name)) return fns[i];
  }
  any_fn f = next_fn(name);
  if (!f) {
    fprintf(stderr, "kfdnull: no libc %s\n", name);
    abort();
  }
  pthread_mutex_lock(&lock);
  for (int i = 0; i < 16; i++) {
    if (!names[i]) {
      fns[i] = f;
      __atomic_store_n(&names[i], name, __ATOMIC_RELEASE);
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  return f;
}

/* ------------------------------------------------------- the topology ---- */

/* KFD forwarding (GPUQ_NULLGPU_KFD): the real /dev/kfd and the gpu_id of
 * the KFD topology node each null GPU stands on; g_kfd_error is the one
 * line saying why forwarding could not be set up (then /dev/kfd does not
 * open: ROCr reports no KFD). */
static int g_kfd_fd = -1;
static uint32_t g_kfd_gpu_id[MAX_GPUS];
static char g_kfd_error[256];

static uint32_t gpu_id_of(unsigned gpu) {
  return g_kfd_fd >= 0 ? g_kfd_gpu_id[gpu] : GPU_ID_BASE + gpu;
}

static int gpu_of_id(uint32_t gpu_id) {
  for (unsigned g = 0; g < g_ngpus; g++)
    if (gpu_id_of(g) == gpu_id) return (int)g;
  return -1;
}

static void put_file(const char* rel, const char* fmt, ...) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", g_sysfs, rel);
  for (char* p = path + strlen(g_sysfs) + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    mkdir(path, 0755);
    *p = '/';
  }
  FILE* f = ((fopen_fn)real("fopen"))(path, "w");
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

/* The SIMD arrays of a node: as many per compute die as divide its CUs
 * evenly (8 of 13 CUs on an MI210, 2 of 19 on each MI300X die). */
static unsigned arrays_of(const null_gpu* g) {
  unsigned xccs = null_gpu_xccs(g), cus = null_gpu_cus(g);
  unsigned per = 8;
  while (per > 1 && cus % (per * xccs)) per /= 2;
  return per * xccs;
}

/* KFD sysfs as amdkfd prints it (kfd_topology.c), for node 0 a CPU and
 * nodes 1..N the GPUs (a partitioned GPU's partitions each a node with its
 * share of the CUs and compute dies, its partition in location_id and its
 * GPU's unique_id: null_gpus.h). Capability: queue size pow2 + 32 bit, 2
 * watch-point bits, doorbell type 2 (64-bit AQL), SRAM EDC (sramecc+). Not
 * set: SVM API (bit 27: ROCr would use SVM ioctls) and debug firmware (bit
 * 29: with KFD >= 1.13 ROCr would call RUNTIME_ENABLE). The CPU node has a
 * cache of its own here, so the host's CPU sysfs is not needed. */
static void write_topology(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * 4096ull;
  put_file("kfd/topology/generation_id", "1\n");
  put_file("kfd/topology/system_properties",
           "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
  put_file("kfd/topology/nodes/0/gpu_id", "0\n");
  put_file("kfd/topology/nodes/0/name", "\n");
  put_file("kfd/topology/nodes/0/properties",
           "cpu_cores_count %ld\nsimd_count 0\nmem_banks_count 1\n"
           "caches_count 1\nio_links_count %u\np2p_links_count 0\n"
           "cpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\n"
           "lds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\n"
           "wave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\n"
           "cu_per_simd_array 0\nsimd_per_cu 0\nmax_slots_scratch_cu 0\n"
           "gfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\n"
           "domain 0\ndrm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\n"
           "num_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\n"
           "num_cp_queues 0\nmax_engine_clk_ccompute 2000\n",
           cpus > 0 ? cpus : 1, g_ngpus);
  put_file("kfd/topology/nodes/0/mem_banks/0/properties",
           "heap_type 0\nsize_in_bytes %llu\nflags 0\nwidth 64\n"
           "mem_clk_max 3200\n",
           (unsigned long long)ram);
  put_file("kfd/topology/nodes/0/caches/0/properties",
           "processor_id_low 0\nlevel 1\nsize 32\ncache_line_size 64\n"
           "cache_lines_per_tag 1\nassociation 8\nlatency 1\ntype 5\n"
           "sibling_map 1\n");
  for (unsigned g = 0; g < g_ngpus; g++) {
    const null_gpu* gpu = &g_gpus[g];
    const null_gpu_kind* k = gpu->kind;
    char dir[64], rel[128];
    unsigned n = g + 1, arrays = arrays_of(gpu);
    snprintf(dir, sizeof(dir), "kfd/topology/nodes/%u", n);
    snprintf(rel, sizeof(rel), "kfd/topology/nodes/0/io_links/%u/properties",
             g);
    put_file(rel,
             "type 2\nversion_major 0\nversion_minor 0\nnode_from 0\n"
             "node_to %u\nweight 20\nmin_latency 0\nmax_latency 0\n"
             "min_bandwidth 312\nmax_bandwidth 64000\n"
             "recommended_transfer_size 0\nflags 1\n",
             n);
    snprintf(rel, sizeof(rel), "%s/gpu_id", dir);
    put_file(rel, "%u\n", gpu_id_of(g));
    snprintf(rel, sizeof(rel), "%s/name", dir);
    put_file(rel, "%s\n", k->kfd_name);
    snprintf(rel, sizeof(rel), "%s/properties", dir);
    put_file(rel,
             "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\n"
             "caches_count 1\nio_links_count 1\np2p_links_count 0\n"
             "cpu_core_id_base 0\nsimd_id_base %u\n"
             "max_waves_per_simd 8\nlds_size_in_kb 64\ngds_size_in_kb 0\n"
             "num_gws 0\nwave_front_size %u\narray_count %u\n"
             "simd_arrays_per_engine 1\ncu_per_simd_array %u\n"
             "simd_per_cu %u\nmax_slots_scratch_cu 32\n"
             "gfx_target_version %u\nvendor_id 4098\ndevice_id %u\n"
             "location_id %u\ndomain 0\ndrm_render_minor %u\nhive_id 0\n"
             "num_sdma_engines 0\nnum_sdma_xgmi_engines 0\n"
             "num_sdma_queues_per_engine 8\nnum_cp_queues 24\n"
             "max_engine_clk_fcompute 1700\nlocal_mem_size 0\n"
             "fw_version 78\ncapability %u\ndebug_prop 0\n"
             "sdma_fw_version 0\nunique_id %llu\nnum_xcc %u\n"
             "max_engine_clk_ccompute 2000\n",
             null_gpu_cus(gpu) * k->simd_per_cu, 0x80001000u + g * 0x1000u,
             k->wave_size, arrays, null_gpu_cus(gpu) / arrays, k->simd_per_cu,
             k->major * 10000 + k->minor * 100 + k->stepping, k->device_id,
             null_gpu_location_id(gpu), RENDER_MINOR + g, 0x04002218u,
             (unsigned long long)null_gpu_unique_id(gpu), null_gpu_xccs(gpu));
    snprintf(rel, sizeof(rel), "%s/mem_banks/0/properties", dir);
    put_file(rel,
             "heap_type 1\nsize_in_bytes %llu\nflags 0\nwidth 4096\n"
             "mem_clk_max 1600\n",
             64ull << 30);
    snprintf(rel, sizeof(rel), "%s/caches/0/properties", dir);
    put_file(rel,
             "processor_id_low %u\nlevel 1\nsize 16\ncache_line_size 128\n"
             "cache_lines_per_tag 1\nassociation 4\nlatency 1\ntype 9\n"
             "sibling_map 1\n",
             0x80001000u + g * 0x1000u);
    snprintf(rel, sizeof(rel), "%s/io_links/0/properties", dir);
    put_file(rel,
             "type 2\nversion_major 0\nversion_minor 0\nnode_from %u\n"
             "node_to 0\nweight 20\nmin_latency 0\nmax_latency 0\n"
             "min_bandwidth 312\nmax_bandwidth 64000\n"
             "recommended_transfer_size 0\nflags 1\n",
             n);
  }
  put_file("module/amdgpu/initstate", "live\n");
  /* amdkfd makes proc/ at module init (kfd_procfs_init), GPU process or not */
  char proc[300];
  snprintf(proc, sizeof(proc), "%s/kfd/proc", g_sysfs);
  mkdir(proc, 0755);
}

static int rm_entry(const char* p, const struct stat* st, int flag,
                    struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(p);
}

/* Removes the tree under the sysfs path REL (a file or a directory). */
static void remove_tree(const char* rel) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", g_sysfs, rel);
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* At exit, as amdkfd's process teardown: this process's proc/<pid>/ goes;
 * the whole tree too unless it is kept (GPUQ_NULLGPU_SYSFS). */
__attribute__((destructor)) static void at_exit(void) {
  if (!g_sysfs[0]) return;
  char rel[64];
  snprintf(rel, sizeof(rel), "kfd/proc/%d", (int)getpid());
  remove_tree(g_sysfs_kept ? rel : "");
}

/* GPUQ_NULLGPU_KFD: opens the real /dev/kfd and learns the gpu_id of each
 * null GPU's KFD node from the real sysfs (libc's own open and fopen: the
 * interposed ones redirect both). Sets g_kfd_error when it cannot. */
static void kfd_forward_open(void) {
  const char* nodes = getenv("GPUQ_NULLGPU_KFD_NODES");
  for (unsigned g = 0; g < g_ngpus; g++) {
    unsigned node;
    char path[128];
    unsigned id = kfd_node_gpu_id(&nodes, g + 1, (fopen_fn)real("fopen"), &node,
                                  path, sizeof(path));
    if (!id) {
      snprintf(g_kfd_error, sizeof(g_kfd_error),
               "GPUQ_NULLGPU_KFD=1 but no KFD GPU at topology node %u (%s)",
               node, path);
      return;
    }
    g_kfd_gpu_id[g] = id;
  }
  int fd = ((open_fn)real("open"))("/dev/kfd", O_RDWR | O_CLOEXEC, 0);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
    snprintf(g_kfd_error, sizeof(g_kfd_error),
             "GPUQ_NULLGPU_KFD=1 but /dev/kfd is not a KFD device: %s",
             fd < 0 ? strerror(errno) : "not a char device");
    if (fd >= 0) close(fd);
    return;
  }
  g_kfd_fd = fd;
  null_cp_set_kfd(1);
}

/* The command processor's view of this library (null_cp.h). */
static uint32_t node_gpu_id(unsigned node) { return gpu_id_of(node - 1); }
static const char* node_gfx(unsigned node) {
  return g_gpus[node - 1].kind->name;
}
static void event_wake_id(uint32_t id);
static int run_rocclr_blit(const char* pkt);
static FILE* libc_fopen(const char* path, const char* mode) {
  return ((fopen_fn)real("fopen"))(path, mode);
}
static const null_cp_ops kCpOps = {
    .name = "kfdnull",
    .gpu_id_of = node_gpu_id,
    .gfx_of = node_gfx,
    .event_wake = event_wake_id,
    .run_rocclr_blit = run_rocclr_blit,
    .fopen = libc_fopen,
};

/* GPUQ_NULLGPU_GPUS (null_gpus.h) into g_gpus: only the kinds whose
 * topology and render node this library answers for (gfx90a: an MI210;
 * gfx942: an MI300X, whole or partitioned) are presented; any other is named
 * and left out. Returns how many nodes. */
static unsigned gpus_from_env(void) {
  null_gpu all[MAX_GPUS];
  unsigned n = null_gpus_from_env(all, MAX_GPUS, "kfdnull"), kept = 0;
  for (unsigned i = 0; i < n; i++) {
    const char* name = all[i].kind->name;
    if (!strcmp(name, "gfx90a") || !strcmp(name, "gfx942"))
      g_gpus[kept++] = all[i];
    else if (all[i].partition == 0)
      fprintf(stderr,
              "kfdnull: GPUQ_NULLGPU_GPUS: %s is not presented at the KFD "
              "interface (gfx90a and gfx942 only); left out\n",
              name);
  }
  return kept;
}

static void init_once(void) {
  const char* d = getenv("GPUQ_NULLGPU_DEBUG");
  g_debug = d && *d == '1';
  g_ngpus = gpus_from_env();
  null_cp_configure(&kCpOps, g_ngpus);
  const char* kfd = getenv("GPUQ_NULLGPU_KFD");
  if (kfd && *kfd == '1') {
    kfd_forward_open();
    if (g_kfd_error[0]) fprintf(stderr, "kfdnull: %s\n", g_kfd_error);
  }
  g_memfd = memfd_create("kfd-nullgpu", MFD_CLOEXEC);
  if (g_memfd < 0 || ftruncate(g_memfd, (off_t)MEMFD_BYTES) != 0) {
    fprintf(stderr, "kfdnull: memfd: %s\n", strerror(errno));
    abort();
  }
  struct stat st;
  fstat(g_memfd, &st);
  g_memfd_dev = st.st_dev;
  g_memfd_ino = st.st_ino;
  mmap_fn mm = (mmap_fn)real("mmap");
  for (unsigned g = 0; g < g_ngpus; g++) {
    void* p = mm(NULL, DOORBELL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
                 g_memfd, (off_t)(g * DOORBELL_PAGE));
    if (p == MAP_FAILED) abort();
    g_doorbell_page[g] = p;
  }
  const char* kept = getenv("GPUQ_NULLGPU_SYSFS");
  const char* tmp = getenv("TMPDIR");
  if (kept && *kept) {
    snprintf(g_sysfs, sizeof(g_sysfs), "%s", kept);
    g_sysfs_kept = 1;
    if (mkdir(g_sysfs, 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "kfdnull: GPUQ_NULLGPU_SYSFS %s: %s\n", g_sysfs,
              strerror(errno));
      abort();
    }
  } else {
    snprintf(g_sysfs, sizeof(g_sysfs), "%s/gpuq-kfdnull.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_sysfs)) {
      fprintf(stderr, "kfdnull: mkdtemp %s: %s\n", g_sysfs, strerror(errno));
      abort();
    }
  }
  char generation[300];
  snprintf(generation, sizeof(generation), "%s/kfd/topology/generation_id",
           g_sysfs);
  if (!g_sysfs_kept || access(generation, F_OK) != 0) write_topology();
}

static void init(void) { pthread_once(&g_once, init_once); }

static int is_mine(int fd) {
  struct stat st;
  if (fd < 0 || g_memfd < 0 || fstat(fd, &st) != 0) return 0;
  return st.st_ino == g_memfd_ino && st.st_dev == g_memfd_dev;
}

/* ------------------------------------------------------------- paths ---- */

static const struct {
  const char* from;
  const char* to;
} kRedirects[] = {
    {"/sys/devices/virtual/kfd/kfd", "kfd"},
    {"/sys/class/kfd/kfd", "kfd"},
    {"/sys/module/amdgpu", "module/amdgpu"},
};

/* The redirected path of a KFD sysfs path in buf, or path itself. */
static const char* redirect(const char* path, char* buf, size_t len) {
  if (!path || strncmp(path, "/sys/", 5) != 0) return path;
  for (size_t i = 0; i < sizeof(kRedirects) / sizeof(kRedirects[0]); i++) {
    size_t n = strlen(kRedirects[i].from);
    if (strncmp(path, kRedirects[i].from, n) == 0 &&
        (path[n] == 0 || path[n] == '/')) {
      init();
      snprintf(buf, len, "%s/%s%s", g_sysfs, kRedirects[i].to, path + n);
      DBG("path %s -> %s\n", path, buf);
      return buf;
    }
  }
  return path;
}

/* The GPU each render node descriptor was opened for (0 for /dev/kfd's),
 * read by amdgpu_device_initialize: every descriptor is one memfd's. */
#define MAX_RENDER_FDS 4096
static int g_render_of_fd[MAX_RENDER_FDS];

/* /dev/kfd and /dev/dri/renderD<128..>: a descriptor of the memfd. */
static int device_fd(const char* path, int flags) {
  if (!path) return -2;
  int render = -1;
  if (strcmp(path, "/dev/kfd") != 0) {
    if (sscanf(path, "/dev/dri/renderD%d", &render) != 1) return -2;
    if (render < RENDER_MINOR || render >= RENDER_MINOR + (int)MAX_GPUS)
      return -2;
    init();
    if (render >= RENDER_MINOR + (int)g_ngpus) {
      errno = ENOENT;
      return -1;
    }
  }
  init();
  if (g_kfd_error[0]) {
    errno = ENODEV;
    return -1;
  }
  int fd = fcntl(g_memfd, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
  if (fd >= 0 && fd < MAX_RENDER_FDS)
    g_render_of_fd[fd] = render >= 0 ? render - RENDER_MINOR : 0;
  DBG("open %s = %d\n", path, fd);
  return fd;
}

static int do_open(const char* path, int flags, mode_t mode, const char* name) {
  int fd = device_fd(path, flags);
  if (fd != -2) return fd;
  char buf[512];
  return ((open_fn)real(name))(redirect(path, buf, sizeof(buf)), flags, mode);
}

static mode_t open_mode(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return do_open(path, flags, mode, "open");
}

EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return do_open(path, flags, mode, "open64");
}

EXPORT int __open_2(const char* path, int flags) {
  return do_open(path, flags, 0, "open");
}

EXPORT int __open64_2(const char* path, int flags) {
  return do_open(path, flags, 0, "open64");
}

static int do_openat(int dirfd, const char* path, int flags, mode_t mode,
                     const char* name) {
  if (path && path[0] == '/') {
    int fd = device_fd(path, flags);
    if (fd != -2) return fd;
  }
  char buf[512];
  return ((openat_fn)real(name))(dirfd, redirect(path, buf, sizeof(buf)), flags,
                                 mode);
}

EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return do_openat(dirfd, path, flags, mode, "openat");
}

EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = open_mode(flags, ap);
  va_end(ap);
  return do_openat(dirfd, path, flags, mode, "openat64");
}

EXPORT FILE* fopen(const char* path, const char* mode) {
  char buf[512];
  return ((fopen_fn)real("fopen"))(redirect(path, buf, sizeof(buf)), mode);
}

EXPORT FILE* fopen64(const char* path, const char* mode) {
  char buf[512];
  return ((fopen_fn)real("fopen64"))(redirect(path, buf, sizeof(buf)), mode);
}

EXPORT DIR* opendir(const char* path) {
  char buf[512];
  return ((opendir_fn)real("opendir"))(redirect(path, buf, sizeof(buf)));
}

EXPORT int access(const char* path, int mode) {
  if ((!strcmp(path, "/dev/kfd") || !strncmp(path, "/dev/dri/renderD", 16))) {
    int fd = device_fd(path, O_CLOEXEC);
    if (fd >= 0) {
      close(fd);
      return 0;
    }
    if (fd == -1) return -1;
  }
  char buf[512];
  return ((access_fn)real("access"))(redirect(path, buf, sizeof(buf)), mode);
}

/* Device memory is plain shared memory: a mapping of the memfd is always
 * readable and writable (the null CP touches what a GPU would). */
static void* do_mmap(void* addr, size_t len, int prot, int flags, int fd,
                     off_t off, const char* name) {
  if (fd >= 0 && is_mine(fd)) {
    if (prot == PROT_NONE) prot = PROT_READ | PROT_WRITE;
    prot |= PROT_READ | PROT_WRITE;
  }
  return ((mmap_fn)real(name))(addr, len, prot, flags, fd, off);
}

EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd,
                  off_t off) {
  return do_mmap(addr, len, prot, flags, fd, off, "mmap");
}

EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd,
                    off_t off) {
  return do_mmap(addr, len, prot, flags, fd, off, "mmap64");
}

/* ------------------------------------------------------------ memory ---- */

typedef struct {
  uint64_t handle, va, size, offset;
  uint32_t flags, gpu;
  int used, backed; /* backed: memfd pages of its own */
} mem_obj;

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_obj g_mem[MAX_MEM];
static uint64_t g_heap = HEAP_START;
static uint32_t g_next_handle = 1;

static int mem_alloc(struct kfd_ioctl_alloc_memory_of_gpu_args* a) {
  int g = gpu_of_id(a->gpu_id);
  if (g < 0 || !a->size) return -EINVAL;
  pthread_mutex_lock(&g_mem_lock);
  mem_obj* m = NULL;
  for (size_t i = 0; i < MAX_MEM && !m; i++)
    if (!g_mem[i].used) m = &g_mem[i];
  if (!m) {
    pthread_mutex_unlock(&g_mem_lock);
    return -ENOMEM;
  }
  memset(m, 0, sizeof(*m));
  m->used = 1;
  m->va = a->va_addr;
  m->size = a->size;
  m->flags = a->flags;
  m->gpu = (uint32_t)g;
  m->handle = (uint64_t)a->gpu_id << 32 | g_next_handle++;
  if (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
    m->offset = a->mmap_offset; /* the user's address: recorded only */
  } else if (a->flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) {
    m->offset = (uint64_t)g * DOORBELL_PAGE;
  } else {
    uint64_t len = (a->size + 4095) & ~4095ull;
    if (g_heap + len > MEMFD_BYTES) {
      m->used = 0;
      pthread_mutex_unlock(&g_mem_lock);
      return -ENOMEM;
    }
    m->offset = g_heap;
    m->backed = 1;
    g_heap += (len + 0xffff) & ~0xffffull;
    /* The GPU's view is the process's: the range the thunk reserved at
     * va_addr now holds the memory (the thunk maps it again, or not). */
    if (a->va_addr)
      ((mmap_fn)real("mmap"))((void*)(uintptr_t)a->va_addr, len,
                              PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                              g_memfd, (off_t)m->offset);
  }
  a->handle = m->handle;
  a->mmap_offset = m->offset;
  pthread_mutex_unlock(&g_mem_lock);
  DBG("alloc va=0x%llx size=0x%llx flags=0x%x -> offset 0x%llx\n",
      (unsigned long long)a->va_addr, (unsigned long long)a->size, a->flags,
      (unsigned long long)m->offset);
  return 0;
}

static int mem_free(uint64_t handle) {
  pthread_mutex_lock(&g_mem_lock);
  int rc = -EINVAL;
  for (size_t i = 0; i < MAX_MEM; i++) {
    mem_obj* m = &g_mem[i];
    if (!m->used || m->handle != handle) continue;
    if (m->backed)
      fallocate(g_memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                (off_t)m->offset, (off_t)((m->size + 4095) & ~4095ull));
    m->used = 0;
    rc = 0;
    break;
  }
  pthread_mutex_unlock(&g_mem_lock);
  return rc;
}

/* ------------------------------------------------------------ events ---- */

typedef struct {
  int used;
  uint32_t type, auto_reset;
  int signaled;
  unsigned waiters;
  uint64_t sets; /* sets that found waiters */
  uint64_t age;  /* amdkfd's event_age: starts at 1, +1 per set */
} kfd_event;

static pthread_mutex_t g_ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_ev_cond = PTHREAD_COND_INITIALIZER;
static kfd_event g_events[MAX_EVENTS];
static uint32_t g_next_event = 1;

/* amdkfd's set_event (kfd_events.c): every thread waiting now is woken; an
 * auto-reset event stays signaled only if nobody was waiting. */
static void event_set_locked(kfd_event* e) {
  e->signaled = !e->auto_reset || !e->waiters;
  if (e->waiters) e->sets++;
  e->age++;
  pthread_cond_broadcast(&g_ev_cond);
}

static void event_wake_id(uint32_t id) {
  pthread_mutex_lock(&g_ev_lock);
  if (id < MAX_EVENTS && g_events[id].used) event_set_locked(&g_events[id]);
  pthread_mutex_unlock(&g_ev_lock);
}

static int event_create(struct kfd_ioctl_create_event_args* a) {
  pthread_mutex_lock(&g_ev_lock);
  uint32_t id = 0;
  for (unsigned t = 0; t < MAX_EVENTS - 1 && !id; t++) {
    uint32_t c = g_next_event;
    g_next_event = c + 1 >= MAX_EVENTS ? 1 : c + 1;
    if (!g_events[c].used) id = c;
  }
  if (!id) {
    pthread_mutex_unlock(&g_ev_lock);
    return -ENOMEM;
  }
  kfd_event* e = &g_events[id];
  memset(e, 0, sizeof(*e));
  e->used = 1;
  e->type = a->event_type;
  e->auto_reset = a->auto_reset;
  e->age = 1;
  pthread_mutex_unlock(&g_ev_lock);
  /* A signal event's slot in the events page is its id. The thunk passes
   * its events page's handle with its first event only; amdkfd answers
   * KFD_MMAP_TYPE_EVENTS for every signal event, and the thunk gives the
   * event its mailbox (HWData2) only when that is not 0: without it the CP
   * could never wake a waiter (ROCr then sleeps for good once its spin
   * phase is over). */
  if (a->event_type == KFD_IOC_EVENT_SIGNAL) a->event_page_offset = 2ull << 62;
  a->event_id = id;
  a->event_slot_index = id;
  a->event_trigger_data = id;
  return 0;
}

enum { EV_DESTROY, EV_SET, EV_RESET };

static int event_op(uint32_t id, int op) {
  pthread_mutex_lock(&g_ev_lock);
  int rc = 0;
  if (id >= MAX_EVENTS || !g_events[id].used)
    rc = -EINVAL;
  else if (op == EV_SET)
    event_set_locked(&g_events[id]);
  else if (op == EV_RESET)
    g_events[id].signaled = 0;
  else
    g_events[id].used = 0;
  pthread_mutex_unlock(&g_ev_lock);
  return rc;
}

/* kfd_wait_on_events: an event already signaled counts on entry (an
 * auto-reset one is consumed), so does a signal event whose age differs
 * from the caller's last_event_age (when that is not 0); later, a set
 * while the thread waits counts. The event ages are written back. */
static int event_wait(struct kfd_ioctl_wait_events_args* a) {
  uint32_t n = a->num_events;
  struct kfd_event_data* d = (struct kfd_event_data*)(uintptr_t)a->events_ptr;
  if (!n || n > MAX_EVENTS || !d) return -EINVAL;
  uint64_t* seen = calloc(n, sizeof(*seen));
  unsigned char* hit = calloc(n, 1);
  if (!seen || !hit) {
    free(seen);
    free(hit);
    return -ENOMEM;
  }
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  uint32_t ms = a->timeout;
  if (ms != 0xffffffffu) {
    deadline.tv_sec += ms / 1000;
    deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000L;
    }
  }
  int rc = 0;
  a->wait_result = KFD_IOC_WAIT_RESULT_COMPLETE;
  pthread_mutex_lock(&g_ev_lock);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t id = d[i].event_id;
    if (id >= MAX_EVENTS || !g_events[id].used) {
      rc = -EINVAL;
      for (uint32_t j = 0; j < i; j++) g_events[d[j].event_id].waiters--;
      goto out;
    }
    kfd_event* e = &g_events[id];
    uint64_t* last_age = (uint64_t*)&d[i]; /* signal_event_data */
    hit[i] = (unsigned char)e->signaled;
    if (e->signaled && e->auto_reset) e->signaled = 0;
    if (e->type == KFD_IOC_EVENT_SIGNAL && *last_age && *last_age != e->age)
      hit[i] = 1;
    e->waiters++;
    seen[i] = e->sets;
    DBG("wait enter event %u ms=%u last_age %llu age %llu signaled-hit=%d\n",
        id, ms, (unsigned long long)*last_age, (unsigned long long)e->age,
        hit[i]);
  }
  for (;;) {
    uint32_t set = 0;
    for (uint32_t i = 0; i < n; i++) {
      kfd_event* e = &g_events[d[i].event_id];
      if (!hit[i] && e->sets != seen[i]) hit[i] = 1;
      set += hit[i];
    }
    if ((a->wait_for_all && set == n) || (!a->wait_for_all && set > 0)) break;
    if (ms == 0) {
      a->wait_result = KFD_IOC_WAIT_RESULT_TIMEOUT;
      break;
    }
    int r = ms == 0xffffffffu
                ? pthread_cond_wait(&g_ev_cond, &g_ev_lock)
                : pthread_cond_timedwait(&g_ev_cond, &g_ev_lock, &deadline);
    if (r == ETIMEDOUT) {
      a->wait_result = KFD_IOC_WAIT_RESULT_TIMEOUT;
      break;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    kfd_event* e = &g_events[d[i].event_id];
    DBG("wait event %u all=%u ms=%u age %llu->%llu hit=%d result=%u\n",
        d[i].event_id, a->wait_for_all, ms,
        (unsigned long long)*(uint64_t*)&d[i], (unsigned long long)e->age,
        hit[i], a->wait_result);
    e->waiters--;
    if (hit[i] && e->type == KFD_IOC_EVENT_SIGNAL) *(uint64_t*)&d[i] = e->age;
  }
out:
  pthread_mutex_unlock(&g_ev_lock);
  free(seen);
  free(hit);
  return rc;
}

/* ------------------------------------------------------------ queues ---- */

/* The null command processor (null_cp.c) serves the queues; each takes the
 * next free slot of its GPU's doorbell page. */
static unsigned g_next_slot[MAX_GPUS];

/* ------------------------------------------------- HIP's blit kernels ---- */

/* HIP's own blit kernels (ROCclr's blit program, blitcl.cpp, loaded into
 * an HSA executable at HIP's init) are ordinary code-object kernels: known
 * here by name, from the kernel objects HIP asks ROCr for
 * (hsa_executable_symbol_get_info, interposed below). HIP 6.4 and 7.2 copy
 * host<->device through a staging buffer with __amd_rocclr_copyBuffer(src,
 * dst, size, remainder, aligned_size, end_ptr, next_chunk): src and dst with
 * their origins applied, end_ptr = dst + size - remainder (rocblit.cpp,
 * KernelBlitManager::copyBuffer). */
enum { KERNEL_ROCCLR_COPY_BUFFER = 1 };
#define MAX_NAMED_KERNELS 256
static pthread_mutex_t g_named_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_named_object[MAX_NAMED_KERNELS];
static int g_named_kind[MAX_NAMED_KERNELS];
static unsigned g_nnamed;

static int named_kernel(uint64_t object) {
  int kind = 0;
  pthread_mutex_lock(&g_named_lock);
  for (unsigned i = 0; i < g_nnamed && !kind; i++)
    if (g_named_object[i] == object) kind = g_named_kind[i];
  pthread_mutex_unlock(&g_named_lock);
  return kind;
}

static int run_rocclr_blit(const char* pkt) {
  uint64_t ko = *(const uint64_t*)(pkt + 32);
  const char* args = *(const char* const*)(pkt + 40);
  if (!ko || !args || named_kernel(ko) != KERNEL_ROCCLR_COPY_BUFFER) return 0;
  uint64_t src, dst, size, end;
  uint32_t remainder, aligned;
  memcpy(&src, args, 8);
  memcpy(&dst, args + 8, 8);
  memcpy(&size, args + 16, 8);
  memcpy(&remainder, args + 24, 4);
  memcpy(&aligned, args + 28, 4);
  memcpy(&end, args + 32, 8);
  if ((aligned != 4 && aligned != 16) || remainder >= aligned ||
      end != dst + size - remainder)
    return 0; /* not the layout this was written for: no copy */
  memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, size);
  return 1;
}

typedef struct {
  uint64_t handle;
} hsa_symbol;
typedef int (*symbol_info_fn)(hsa_symbol, int, void*);
#define SYMBOL_INFO_NAME_LENGTH 1
#define SYMBOL_INFO_NAME 2
#define SYMBOL_INFO_KERNEL_OBJECT 22

/* ROCr's hsa_executable_symbol_get_info, as HIP calls it (through its PLT,
 * version ROCR_1): the answer is ROCr's; a kernel object of one of ROCclr's
 * blit kernels is remembered. */
EXPORT int hsa_executable_symbol_get_info(hsa_symbol sym, int attribute,
                                          void* value) {
  static symbol_info_fn real_fn;
  if (!real_fn) {
    void* p = dlvsym(RTLD_NEXT, "hsa_executable_symbol_get_info", "ROCR_1");
    if (!p) p = dlsym(RTLD_NEXT, "hsa_executable_symbol_get_info");
    if (!p) return 0x1000; /* HSA_STATUS_ERROR */
    memcpy(&real_fn, &p, sizeof(real_fn));
  }
  int rc = real_fn(sym, attribute, value);
  if (rc != 0 || attribute != SYMBOL_INFO_KERNEL_OBJECT) return rc;
  uint32_t len = 0;
  char name[128];
  if (real_fn(sym, SYMBOL_INFO_NAME_LENGTH, &len) != 0 || len == 0 ||
      len >= sizeof(name) || real_fn(sym, SYMBOL_INFO_NAME, name) != 0)
    return rc;
  name[len] = 0;
  static const char kCopy[] = "__amd_rocclr_copyBuffer";
  if (strncmp(name, kCopy, sizeof(kCopy) - 1) != 0 ||
      (name[sizeof(kCopy) - 1] != 0 && name[sizeof(kCopy) - 1] != '.'))
    return rc;
  pthread_mutex_lock(&g_named_lock);
  if (g_nnamed < MAX_NAMED_KERNELS) {
    g_named_object[g_nnamed] = *(uint64_t*)value;
    g_named_kind[g_nnamed++] = KERNEL_ROCCLR_COPY_BUFFER;
  }
  pthread_mutex_unlock(&g_named_lock);
  DBG("kernel %s = object 0x%llx\n", name,
      (unsigned long long)*(uint64_t*)value);
  return rc;
}

/* KFD forwarding: the same ioctl on the real /dev/kfd, with the caller's
 * arguments (its gpu_id is already the KFD node's: the topology says so)
 * and the KFD queue id in place of ours. -errno on failure. */
static int kfd_forward(unsigned long req, void* arg) {
  if (((ioctl_fn)real("ioctl"))(g_kfd_fd, req, arg) == 0) return 0;
  int e = errno;
  fprintf(stderr, "kfdnull: forwarding ioctl nr 0x%02x to /dev/kfd: %s\n",
          (unsigned)_IOC_NR(req), strerror(e));
  return -e;
}

/* amdkfd's sysfs of a live queue (kfd_procfs_add_queue): proc/<pid>/
 * queues/<queue id>/ with size (bytes), type (enum kfd_queue_type: 0,
 * compute) and gpuid, each printed without a newline
 * (kfd_procfs_queue_show). pid: the thread-group leader's, as amdkfd's. */
static void procfs_queue_add(uint32_t id, uint32_t gpu_id, uint64_t bytes) {
  char rel[128];
  snprintf(rel, sizeof(rel), "kfd/proc/%d/queues/%u/size", (int)getpid(), id);
  put_file(rel, "%llu", (unsigned long long)bytes);
  snprintf(rel, sizeof(rel), "kfd/proc/%d/queues/%u/type", (int)getpid(), id);
  put_file(rel, "0");
  snprintf(rel, sizeof(rel), "kfd/proc/%d/queues/%u/gpuid", (int)getpid(), id);
  put_file(rel, "%u", gpu_id);
}

static void procfs_queue_del(uint32_t id) {
  char rel[128];
  snprintf(rel, sizeof(rel), "kfd/proc/%d/queues/%u", (int)getpid(), id);
  remove_tree(rel);
}

static int queue_create(struct kfd_ioctl_create_queue_args* a) {
  int g = gpu_of_id(a->gpu_id);
  if (g < 0) return -EINVAL;
  if (a->queue_type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) {
    pthread_mutex_lock(&null_cp_lock);
    null_cp_sdma_refused++;
    pthread_mutex_unlock(&null_cp_lock);
    return -ENOMEM; /* no SDMA engine is emulated */
  }
  uint64_t bytes = a->ring_size;
  if (bytes < AQL_BYTES || (bytes & (bytes - 1)) || !a->ring_base_address ||
      !a->read_pointer_address || !a->write_pointer_address)
    return -EINVAL;
  pthread_mutex_lock(&null_cp_lock);
  null_cp_queue* q = NULL;
  if (g_next_slot[g] >= DOORBELL_PAGE / sizeof(uint64_t) ||
      !(q = null_cp_queue_add_locked())) {
    pthread_mutex_unlock(&null_cp_lock);
    return -ENOMEM;
  }
  q->node = (uint32_t)g + 1;
  q->priority = (int)a->queue_priority;
  q->percentage = a->queue_percentage;
  q->doorbell_slot = g_next_slot[g]++;
  q->ring = (char*)(uintptr_t)a->ring_base_address;
  q->ring_bytes = bytes;
  q->rptr = (volatile uint64_t*)(uintptr_t)a->read_pointer_address;
  q->wptr = (volatile uint64_t*)(uintptr_t)a->write_pointer_address;
  null_cp_queue_set_doorbell(q, &g_doorbell_page[g][q->doorbell_slot]);
  if (g_kfd_fd >= 0) {
    struct kfd_ioctl_create_queue_args k = *a;
    int rc = kfd_forward(AMDKFD_IOC_CREATE_QUEUE, &k);
    if (rc != 0) { /* as if never created: the id and slot are the next's */
      null_cp_queue_undo_add_locked();
      g_next_slot[g]--;
      pthread_mutex_unlock(&null_cp_lock);
      return rc;
    }
    q->kfd_queue_id = k.queue_id;
  }
  a->queue_id = q->id;
  procfs_queue_add(q->id, a->gpu_id, bytes);
  /* SOC15: the doorbell page's mmap offset | the byte offset in it */
  a->doorbell_offset = (uint64_t)g * DOORBELL_PAGE | q->doorbell_slot * 8u;
  null_cp_start_locked();
  pthread_mutex_unlock(&null_cp_lock);
  DBG("create queue %u gpu %d ring %p bytes %llu rptr %p wptr %p slot %u\n",
      q->id, g, (void*)q->ring, (unsigned long long)bytes, (void*)q->rptr,
      (void*)q->wptr, q->doorbell_slot);
  return 0;
}

static int queue_destroy(uint32_t id) {
  pthread_mutex_lock(&null_cp_lock);
  null_cp_queue* q = null_cp_queue_get_locked(id);
  if (!q) {
    pthread_mutex_unlock(&null_cp_lock);
    return -EINVAL;
  }
  null_cp_queue_retire_locked(q);
  procfs_queue_del(id);
  if (g_kfd_fd >= 0) {
    struct kfd_ioctl_destroy_queue_args k = {.queue_id =
                                                 (uint32_t)q->kfd_queue_id};
    kfd_forward(AMDKFD_IOC_DESTROY_QUEUE, &k);
  }
  null_cp_write_truth_locked();
  pthread_mutex_unlock(&null_cp_lock);
  return 0;
}

/* AMDKFD_IOC_UPDATE_QUEUE (priority: its new one) or, with mask,
 * AMDKFD_IOC_SET_CU_MASK: counted, and forwarded under the KFD queue id. */
static int queue_update(struct kfd_ioctl_update_queue_args* u,
                        struct kfd_ioctl_set_cu_mask_args* mask) {
  pthread_mutex_lock(&null_cp_lock);
  null_cp_queue* q =
      null_cp_queue_get_locked(mask ? mask->queue_id : u->queue_id);
  int rc = q ? 0 : -EINVAL;
  if (q && mask) {
    q->cu_masks++;
    if (g_kfd_fd >= 0) {
      struct kfd_ioctl_set_cu_mask_args k = *mask;
      k.queue_id = (uint32_t)q->kfd_queue_id;
      rc = kfd_forward(AMDKFD_IOC_SET_CU_MASK, &k);
    }
  } else if (q) {
    q->updates++;
    q->priority = (int)u->queue_priority;
    if (g_kfd_fd >= 0) {
      struct kfd_ioctl_update_queue_args k = *u;
      k.queue_id = (uint32_t)q->kfd_queue_id;
      rc = kfd_forward(AMDKFD_IOC_UPDATE_QUEUE, &k);
    }
  }
  pthread_mutex_unlock(&null_cp_lock);
  return rc;
}

/* ----------------------------------------------------------- ioctls ---- */

static int kfd_ioctl(unsigned long req, void* arg) {
  switch (_IOC_NR(req)) {
    case _IOC_NR(AMDKFD_IOC_GET_VERSION): {
      struct kfd_ioctl_get_version_args* a = arg;
      a->major_version = 1;
      a->minor_version = 14;
      return 0;
    }
    case _IOC_NR(AMDKFD_IOC_CREATE_QUEUE):
      return queue_create(arg);
    case _IOC_NR(AMDKFD_IOC_DESTROY_QUEUE):
      return queue_destroy(
          ((struct kfd_ioctl_destroy_queue_args*)arg)->queue_id);
    case _IOC_NR(AMDKFD_IOC_UPDATE_QUEUE):
      return queue_update(arg, NULL);
    case _IOC_NR(AMDKFD_IOC_SET_CU_MASK):
      return queue_update(NULL, arg);
    case _IOC_NR(AMDKFD_IOC_SET_MEMORY_POLICY):
    case _IOC_NR(AMDKFD_IOC_ACQUIRE_VM):
    case _IOC_NR(AMDKFD_IOC_SET_SCRATCH_BACKING_VA):
    case _IOC_NR(AMDKFD_IOC_SET_TRAP_HANDLER):
      return 0;
    case _IOC_NR(AMDKFD_IOC_GET_CLOCK_COUNTERS): {
      struct kfd_ioctl_get_clock_counters_args* a = arg;
      uint64_t t = null_cp_now_ns();
      a->gpu_clock_counter = t / 10; /* 100 MHz */
      a->cpu_clock_counter = t;
      a->system_clock_counter = t;
      a->system_clock_freq = 1000000000ull;
      return 0;
    }
    case _IOC_NR(AMDKFD_IOC_GET_PROCESS_APERTURES_NEW): {
      struct kfd_ioctl_get_process_apertures_new_args* a = arg;
      struct kfd_process_device_apertures* ap =
          (void*)(uintptr_t)a->kfd_process_device_apertures_ptr;
      if (a->num_of_nodes > g_ngpus) a->num_of_nodes = g_ngpus;
      for (unsigned g = 0; g < a->num_of_nodes; g++) {
        memset(&ap[g], 0, sizeof(ap[g]));
        ap[g].lds_base = 1ull << 48; /* kfd_init_apertures_v9 */
        ap[g].lds_limit = (1ull << 48) + 0xffffffffull;
        ap[g].scratch_base = 2ull << 48;
        ap[g].scratch_limit = (2ull << 48) + 0xffffffffull;
        ap[g].gpuvm_base = 1ull << 16;
        ap[g].gpuvm_limit = (1ull << 47) - 1;
        ap[g].gpu_id = gpu_id_of(g);
      }
      return 0;
    }
    case _IOC_NR(AMDKFD_IOC_CREATE_EVENT):
      return event_create(arg);
    case _IOC_NR(AMDKFD_IOC_DESTROY_EVENT):
      return event_op(*(uint32_t*)arg, EV_DESTROY);
    case _IOC_NR(AMDKFD_IOC_SET_EVENT):
      return event_op(*(uint32_t*)arg, EV_SET);
    case _IOC_NR(AMDKFD_IOC_RESET_EVENT):
      return event_op(*(uint32_t*)arg, EV_RESET);
    case _IOC_NR(AMDKFD_IOC_WAIT_EVENTS):
      return event_wait(arg);
    case _IOC_NR(AMDKFD_IOC_GET_TILE_CONFIG): {
      struct kfd_ioctl_get_tile_config_args* a = arg;
      a->num_tile_configs = 0;
      a->num_macro_tile_configs = 0;
      a->gb_addr_config = 0x2a114042;
      a->num_banks = 16;
      a->num_ranks = 1;
      return 0;
    }
    case _IOC_NR(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU):
      return mem_alloc(arg);
    case _IOC_NR(AMDKFD_IOC_FREE_MEMORY_OF_GPU):
      return mem_free(((struct kfd_ioctl_free_memory_of_gpu_args*)arg)->handle);
    case _IOC_NR(AMDKFD_IOC_MAP_MEMORY_TO_GPU):
    case _IOC_NR(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU): {
      struct kfd_ioctl_map_memory_to_gpu_args* a = arg;
      a->n_success = a->n_devices;
      return 0;
    }
    case _IOC_NR(AMDKFD_IOC_SET_XNACK_MODE): {
      struct kfd_ioctl_set_xnack_mode_args* a = arg;
      if (a->xnack_enabled > 0) return -EPERM;
      a->xnack_enabled = 0;
      return 0;
    }
    case _IOC_NR(AMDKFD_IOC_AVAILABLE_MEMORY): {
      struct kfd_ioctl_get_available_memory_args* a = arg;
      a->available = 60ull << 30;
      return 0;
    }
    default:
      /* RUNTIME_ENABLE, DBG_TRAP, SVM, SMI_EVENTS, GWS, IPC, DMABUF, CRIU,
       * CREATE_PROCESS, PROFILER...: not offered by this "KFD". */
      return -EINVAL;
  }
}

EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (!is_mine(fd)) return ((ioctl_fn)real("ioctl"))(fd, req, arg);
  int rc = _IOC_TYPE(req) == AMDKFD_IOCTL_BASE ? kfd_ioctl(req, arg) : -EINVAL;
  DBG("ioctl %c nr 0x%02x = %d\n", (int)_IOC_TYPE(req), (unsigned)_IOC_NR(req),
      rc);
  if (rc < 0) {
    errno = -rc;
    return -1;
  }
  return rc;
}

/* ---------------------------------------------------- libdrm_amdgpu ---- */

/* A handle shaped like libdrm_amdgpu's struct amdgpu_device where it
 * matters: its fd at +16 (refcount, next, fd), read by the real
 * amdgpu_device_get_fd should that one be called. The thunk closes its own
 * descriptor and keeps this one: a dup. */
typedef struct {
  int refcount;
  int pad;
  void* next;
  int fd;
  int gpu; /* the render node's GPU, for its name and info */
  char rest[4068];
} fake_device;

static fake_device* g_fake[MAX_GPUS * 4];
static pthread_mutex_t g_drm_lock = PTHREAD_MUTEX_INITIALIZER;

static fake_device* fake_of(void* dev) {
  pthread_mutex_lock(&g_drm_lock);
  fake_device* f = NULL;
  for (size_t i = 0; i < sizeof(g_fake) / sizeof(g_fake[0]); i++)
    if (g_fake[i] && g_fake[i] == dev) f = g_fake[i];
  pthread_mutex_unlock(&g_drm_lock);
  return f;
}

typedef int (*drm_init_fn)(int, uint32_t*, uint32_t*, void**);
typedef int (*drm_dev_fn)(void*);
typedef const char* (*drm_name_fn)(void*);
typedef int (*drm_info_fn)(void*, void*);

static any_fn real_opt(const char* name) { return next_fn(name); }

EXPORT int amdgpu_device_initialize(int fd, uint32_t* major, uint32_t* minor,
                                    void** dev) {
  if (!is_mine(fd)) {
    drm_init_fn f = (drm_init_fn)real_opt("amdgpu_device_initialize");
    return f ? f(fd, major, minor, dev) : -ENODEV;
  }
  fake_device* d = calloc(1, sizeof(*d));
  if (!d) return -ENOMEM;
  d->refcount = 1;
  d->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  d->gpu = fd >= 0 && fd < MAX_RENDER_FDS ? g_render_of_fd[fd] : 0;
  pthread_mutex_lock(&g_drm_lock);
  size_t i = 0;
  while (i < sizeof(g_fake) / sizeof(g_fake[0]) && g_fake[i]) i++;
  if (i == sizeof(g_fake) / sizeof(g_fake[0])) {
    pthread_mutex_unlock(&g_drm_lock);
    close(d->fd);
    free(d);
    return -ENOMEM;
  }
  g_fake[i] = d;
  pthread_mutex_unlock(&g_drm_lock);
  *major = 3;
  *minor = 57;
  *dev = d;
  DBG("amdgpu_device_initialize(%d) = fd %d\n", fd, d->fd);
  return 0;
}

EXPORT int amdgpu_device_deinitialize(void* dev) {
  fake_device* d = fake_of(dev);
  if (!d) {
    drm_dev_fn f = (drm_dev_fn)real_opt("amdgpu_device_deinitialize");
    return f ? f(dev) : -EINVAL;
  }
  pthread_mutex_lock(&g_drm_lock);
  for (size_t i = 0; i < sizeof(g_fake) / sizeof(g_fake[0]); i++)
    if (g_fake[i] == d) g_fake[i] = NULL;
  pthread_mutex_unlock(&g_drm_lock);
  close(d->fd);
  free(d);
  return 0;
}

EXPORT int amdgpu_device_get_fd(void* dev) {
  fake_device* d = fake_of(dev);
  if (!d) {
    drm_dev_fn f = (drm_dev_fn)real_opt("amdgpu_device_get_fd");
    return f ? f(dev) : -EINVAL;
  }
  return d->fd;
}

EXPORT const char* amdgpu_get_marketing_name(void* dev) {
  fake_device* d = fake_of(dev);
  if (!d) {
    drm_name_fn f = (drm_name_fn)real_opt("amdgpu_get_marketing_name");
    return f ? f(dev) : NULL;
  }
  return g_gpus[d->gpu].kind->marketing;
}

/* struct amdgpu_gpu_info (amdgpu.h; 416 bytes in libdrm 2.4.134): only its
 * leading fields are written, whatever size the caller was built with:
 * asic_id (the kind's device id), chip_rev, chip_external_rev, family_id
 * (AMDGPU_FAMILY_AI: both kinds presented here are GFX9), ids_flags (not an
 * APU), max_engine_clk, max_memory_clk (kHz). */
EXPORT int amdgpu_query_gpu_info(void* dev, void* info) {
  fake_device* d = fake_of(dev);
  if (!d) {
    drm_info_fn f = (drm_info_fn)real_opt("amdgpu_query_gpu_info");
    return f ? f(dev, info) : -EINVAL;
  }
  char* p = info;
  uint32_t u32[4] = {g_gpus[d->gpu].kind->device_id, 1, 0x3d, 141};
  uint64_t u64[3] = {0, 1700000, 1600000};
  memcpy(p, u32, sizeof(u32));
  memcpy(p + 16, u64, sizeof(u64));
  return 0;
}

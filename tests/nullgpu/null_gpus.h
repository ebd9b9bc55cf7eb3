/* null_gpus: the GPU kinds a null GPU can present, GPUQ_NULLGPU_GPUS (the
 * list of them) and the identifiers amdkfd gives each GPU node, shared by
 * both null GPUs (nullgpu.c, kfd_nullgpu.c). Test-only, as the rest of
 * tests/nullgpu.
 *
 * GPUQ_NULLGPU_GPUS is a comma-separated list of entries, each a kind
 * ("gfx90a"), a count and a kind ("8xgfx90a") or a count alone ("2", that
 * many of the default kind, gfx90a), optionally partitioned: a kind that
 * has compute partitions (MI300X's gfx942) followed by ":spx", ":dpx",
 * ":qpx" or ":cpx" is that many physical GPUs of 1, 2, 4 or 8 partitions
 * each, one KFD node per partition ("8xgfx942:cpx": 64 nodes, an MI300X
 * node in CPX mode). Unset or empty: one gfx90a. */
#ifndef GPUQ_NULLGPU_NULL_GPUS_H
#define GPUQ_NULLGPU_NULL_GPUS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char* name;
  unsigned major, minor, stepping;
  uint16_t device_id;
  unsigned cus, simd_per_cu, wave_size;
  unsigned xccs; /* compute dies: the most partitions it can be split into */
  const char* kfd_name; /* the node's sysfs "name" (amdkfd's asic name) */
  const char* marketing;
} null_gpu_kind;

static const null_gpu_kind kNullGpuKinds[] = {
    {"gfx90a", 9, 0, 10, 0x740f, 104, 4, 64, 1, "aldebaran",
     "AMD Instinct MI210 (null GPU)"},
    {"gfx908", 9, 0, 8, 0x738c, 120, 4, 64, 1, "arcturus",
     "AMD Instinct MI100 (null GPU)"},
    {"gfx1100", 11, 0, 0, 0x744c, 96, 2, 32, 1, "ip discovery",
     "AMD Radeon W7900 (null GPU)"},
    /* MI300X: 8 XCCs of 38 active CUs; amdkfd names every ASIC enumerated
     * by IP discovery "ip discovery" (amdgpu_asic_name[]) */
    {"gfx942", 9, 4, 2, 0x74a1, 304, 4, 64, 8, "ip discovery",
     "AMD Instinct MI300X (null GPU)"},
    /* MI450-class: KFD's gfx_target_version 120500 (the amd-gfx patch
     * "drm/amdkfd: Add GFX 12.1.0 support in KFD"); no PCI id of it was
     * found in AMD's sources, so the device id is a stand-in */
    {"gfx1250", 12, 5, 0, 0x1250, 256, 2, 32, 1, "ip discovery",
     "AMD Instinct MI450 (null GPU, stand-in device id)"},
};

static inline const null_gpu_kind* null_gpu_kind_named(const char* name,
                                                       size_t len) {
  for (size_t i = 0; i < sizeof(kNullGpuKinds) / sizeof(kNullGpuKinds[0]); i++)
    if (strlen(kNullGpuKinds[i].name) == len &&
        !strncmp(kNullGpuKinds[i].name, name, len))
      return &kNullGpuKinds[i];
  return NULL;
}

/* One GPU node a null GPU presents: a GPU, or one partition of one. */
typedef struct {
  const null_gpu_kind* kind;
  unsigned physical;   /* the physical GPU's index, 0, 1, ... */
  unsigned partition;  /* this node's partition of it (0 unpartitioned) */
  unsigned partitions; /* the physical GPU's partition count: 1, 2, 4, 8 */
} null_gpu;

/* The node's active CUs: the GPU's, split evenly over its partitions. */
static inline unsigned null_gpu_cus(const null_gpu* g) {
  return g->kind->cus / g->partitions;
}

/* Compute dies (num_xcc) of the node. */
static inline unsigned null_gpu_xccs(const null_gpu* g) {
  return g->kind->xccs / g->partitions;
}

/* amdkfd's location_id: pci_dev_id() (bus << 8 | devfn), the physical GPU on
 * bus physical + 1, device 0; a partition's node id OR-ed into the function
 * bits (kfd_topology_add_device, Linux 6.5+, where kfd->num_nodes > 1), as
 * the simulator's extra_partitions does. */
static inline uint32_t null_gpu_location_id(const null_gpu* g) {
  uint32_t id = ((g->physical + 1) & 0xff) << 8;
  return g->partitions > 1 ? id | g->partition : id;
}

/* amdkfd's unique_id: the physical GPU's (adev->unique_id), the same on
 * every partition of it; "null" in the high bytes. */
static inline uint64_t null_gpu_unique_id(const null_gpu* g) {
  return 0x6e756c6c00000000ull + g->physical + 1;
}

/* The partition count a ":spx" ... ":cpx" suffix of LEN bytes at S names,
 * 0 for none of them. */
static inline unsigned null_gpu_partitions_named(const char* s, size_t len) {
  static const struct {
    const char* mode;
    unsigned partitions;
  } kModes[] = {{"spx", 1}, {"dpx", 2}, {"qpx", 4}, {"cpx", 8}};
  for (size_t i = 0; i < sizeof(kModes) / sizeof(kModes[0]); i++)
    if (len == 3 && !strncmp(s, kModes[i].mode, 3)) return kModes[i].partitions;
  return 0;
}

/* Fills gpus[] from GPUQ_NULLGPU_GPUS, a node per partition, at most max; an
 * unknown kind, or a partition mode the kind cannot be split into, is named
 * on stderr (as WHO) and the entry left out. Returns how many nodes. */
static inline unsigned null_gpus_from_env(null_gpu* gpus, unsigned max,
                                          const char* who) {
  const char* spec = getenv("GPUQ_NULLGPU_GPUS");
  if (!spec || !*spec) spec = "gfx90a";
  unsigned n = 0, physical = 0;
  for (const char* p = spec; *p && n < max;) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char* after;
    unsigned long count = strtoul(p, &after, 10);
    const char* kind = p;
    if (after > p && (size_t)(after - p) == len) { /* a count alone */
      kind = kNullGpuKinds[0].name;
      len = strlen(kind);
    } else if (after > p && *after == 'x') {
      len -= (size_t)(after + 1 - p);
      kind = after + 1;
    } else {
      count = 1;
    }
    const char* colon = memchr(kind, ':', len);
    size_t kind_len = colon ? (size_t)(colon - kind) : len;
    unsigned parts = 1;
    const null_gpu_kind* k = null_gpu_kind_named(kind, kind_len);
    if (!k) {
      fprintf(stderr, "%s: unknown GPU \"%.*s\" in GPUQ_NULLGPU_GPUS\n", who,
              (int)kind_len, kind);
    } else if (colon) {
      size_t mode_len = len - kind_len - 1;
      parts = null_gpu_partitions_named(colon + 1, mode_len);
      if (!parts || parts > k->xccs) {
        fprintf(stderr,
                "%s: GPUQ_NULLGPU_GPUS: %.*s cannot be partitioned as "
                "\"%.*s\" (spx, dpx, qpx or cpx, up to %u partitions)\n",
                who, (int)kind_len, kind, (int)mode_len, colon + 1, k->xccs);
        k = NULL;
      }
    }
    for (unsigned long i = 0; k && i < count; i++, physical++)
      for (unsigned part = 0; part < parts && n < max; part++)
        gpus[n++] = (null_gpu){k, physical, part, parts};
    if (!end) break;
    p = end + 1;
  }
  return n;
}

#endif /* GPUQ_NULLGPU_NULL_GPUS_H */

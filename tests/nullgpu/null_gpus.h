/* null_gpus: the GPU kinds a null GPU can present and GPUQ_NULLGPU_GPUS,
 * the list of them, shared by both null GPUs (nullgpu.c, kfd_nullgpu.c).
 * Test-only, as the rest of tests/nullgpu.
 *
 * GPUQ_NULLGPU_GPUS is a comma-separated list of entries, each a kind
 * ("gfx90a"), a count and a kind ("8xgfx90a") or a count alone ("2", that
 * many of the default kind, gfx90a). Unset or empty: one gfx90a. */
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
  const char* marketing;
} null_gpu_kind;

static const null_gpu_kind kNullGpuKinds[] = {
    {"gfx90a", 9, 0, 10, 0x740f, 104, 4, 64, "AMD Instinct MI210 (null GPU)"},
    {"gfx908", 9, 0, 8, 0x738c, 120, 4, 64, "AMD Instinct MI100 (null GPU)"},
    {"gfx1100", 11, 0, 0, 0x744c, 96, 2, 32, "AMD Radeon W7900 (null GPU)"},
    /* MI450-class: KFD's gfx_target_version 120500 (the amd-gfx patch
     * "drm/amdkfd: Add GFX 12.1.0 support in KFD"); no PCI id of it was
     * found in AMD's sources, so the device id is a stand-in */
    {"gfx1250", 12, 5, 0, 0x1250, 256, 2, 32,
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

/* Fills gpus[] from GPUQ_NULLGPU_GPUS, at most max; an unknown kind is
 * named on stderr (as WHO) and left out. Returns how many. */
static inline unsigned null_gpus_from_env(const null_gpu_kind** gpus,
                                          unsigned max, const char* who) {
  const char* spec = getenv("GPUQ_NULLGPU_GPUS");
  if (!spec || !*spec) spec = "gfx90a";
  unsigned n = 0;
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
    const null_gpu_kind* k = null_gpu_kind_named(kind, len);
    if (!k)
      fprintf(stderr, "%s: unknown GPU \"%.*s\" in GPUQ_NULLGPU_GPUS\n", who,
              (int)len, kind);
    for (unsigned long i = 0; k && i < count && n < max; i++) gpus[n++] = k;
    if (!end) break;
    p = end + 1;
  }
  return n;
}

#endif /* GPUQ_NULLGPU_NULL_GPUS_H */

/* ring_count: a test-only LD_PRELOAD library that counts, exactly, the
 * doorbell rings a ROCr client makes through libhsa-runtime64's exported
 * hsa_signal_store_screlease / hsa_signal_store_relaxed (@ROCR_1): the calls
 * gpuq-agent's doorbell uprobes see. It interposes both (libamdhip64 binds
 * to the first definition of the versioned symbol), counts stores to
 * signals whose amd_signal_t.kind is negative (doorbells) per signal, and
 * forwards every call to the real function (dlvsym RTLD_NEXT). At exit it
 * writes GPUQ_RINGCOUNT_FILE ("%p" = pid), one line per doorbell signal:
 *   ring handle=0x... queue=0x<amd_queue_t> rings=N
 * An independent count to compare the uprobe counts with: the null thunk's
 * CP polls doorbell memory and can miss a store that is overwritten before
 * it looks, this cannot. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pid_path.h"

#define EXPORT __attribute__((visibility("default")))
#define SLOTS 4096

typedef void (*store_fn)(uint64_t, int64_t);

static struct { uint64_t handle, queue, rings; } g_slots[SLOTS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_lost;

static void count(uint64_t handle) {
  /* amd_signal_t: kind @0 (doorbell < 0), queue_ptr @48 */
  if (!handle || *(const int64_t*)(uintptr_t)handle >= 0) return;
  uint64_t queue = *(const uint64_t*)(uintptr_t)(handle + 48);
  pthread_mutex_lock(&g_lock);
  unsigned i = (unsigned)(handle >> 6) % SLOTS;
  for (unsigned n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
    if (g_slots[i].handle == handle || !g_slots[i].handle) {
      g_slots[i].handle = handle;
      g_slots[i].queue = queue;
      g_slots[i].rings++;
      pthread_mutex_unlock(&g_lock);
      return;
    }
  }
  g_lost++;
  pthread_mutex_unlock(&g_lock);
}

static store_fn real(const char* name) {
  store_fn f;
  void* sym = dlvsym(RTLD_NEXT, name, "ROCR_1");
  memcpy(&f, &sym, sizeof(f)); /* ISO C: no object-to-function pointer cast */
  if (!sym) {
    fprintf(stderr, "ring_count: %s@ROCR_1 not found\n", name);
    abort();
  }
  return f;
}

EXPORT void hsa_signal_store_screlease(uint64_t handle, int64_t value) {
  static store_fn f;
  if (!f) f = real("hsa_signal_store_screlease");
  count(handle);
  f(handle, value);
}

EXPORT void hsa_signal_store_relaxed(uint64_t handle, int64_t value) {
  static store_fn f;
  if (!f) f = real("hsa_signal_store_relaxed");
  count(handle);
  f(handle, value);
}

__attribute__((destructor)) static void write_counts(void) {
  const char* pat = getenv("GPUQ_RINGCOUNT_FILE");
  if (!pat || !*pat) return;
  char path[4096];
  pid_path(pat, path, sizeof(path));
  FILE* f = fopen(path, "w");
  if (!f) return;
  pthread_mutex_lock(&g_lock);
  for (unsigned i = 0; i < SLOTS; i++)
    if (g_slots[i].handle)
      fprintf(f, "ring handle=0x%llx queue=0x%llx rings=%llu\n",
              (unsigned long long)g_slots[i].handle,
              (unsigned long long)g_slots[i].queue,
              (unsigned long long)g_slots[i].rings);
  fprintf(f, "lost %llu\n", (unsigned long long)g_lost);
  pthread_mutex_unlock(&g_lock);
  fclose(f);
}

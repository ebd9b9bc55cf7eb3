/* null_cp: the null command processor shared by both null GPUs (null_cp.h
 * says what it does). Test-only, as the rest of tests/nullgpu. */
#define _GNU_SOURCE
#include "null_cp.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_idle.h"
#include "pid_path.h"

/* AQL packet types (hsa.h hsa_packet_type_t) */
enum {
  PKT_VENDOR = 0,
  PKT_INVALID = 1,
  PKT_KERNEL_DISPATCH = 2,
  PKT_BARRIER_AND = 3,
  PKT_AGENT_DISPATCH = 4,
  PKT_BARRIER_OR = 5
};
enum { AMD_FORMAT_EXT_KERNEL_DISPATCH = 3 };
#define HEADER_BARRIER_BIT (1u << 8) /* HSA_PACKET_HEADER_BARRIER */

pthread_mutex_t null_cp_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t null_cp_sdma_refused, null_cp_create_failures;

static null_cp_ops g_ops;
static unsigned g_gpus;
static int g_kfd;
static null_cp_queue g_queues[NULL_CP_MAX_QUEUES];
static unsigned g_nqueues; /* ids handed out, never reused */
static atomic_int g_paused;
static const char* g_control_dir;
static const char* g_truth;
static int g_cp_fifo; /* GPUQ_NULLGPU_CP_FIFO: the CP's SCHED_FIFO priority */
static pthread_t g_cp;
static int g_cp_running;
static atomic_int g_cp_stop;

void null_cp_configure(const null_cp_ops* ops, unsigned gpus) {
  g_ops = *ops;
  g_gpus = gpus;
  const char* paused = getenv("GPUQ_NULLGPU_PAUSED");
  atomic_store(&g_paused, paused && *paused == '1');
  g_control_dir = getenv("GPUQ_NULLGPU_CONTROL");
  g_truth = getenv("GPUQ_NULLGPU_TRUTH");
  const char* fifo = getenv("GPUQ_NULLGPU_CP_FIFO");
  g_cp_fifo = fifo ? atoi(fifo) : 0;
}

void null_cp_set_kfd(int forwarding) { g_kfd = forwarding; }

/* ------------------------------------------------------------- queues ---- */

null_cp_queue* null_cp_queue_add_locked(void) {
  if (g_nqueues >= NULL_CP_MAX_QUEUES) return NULL;
  null_cp_queue* q = &g_queues[g_nqueues];
  memset(q, 0, sizeof(*q));
  q->used = q->live = 1;
  q->id = g_nqueues++;
  q->kfd_queue_id = -1;
  return q;
}

void null_cp_queue_set_doorbell(null_cp_queue* q, _Atomic uint64_t* doorbell) {
  q->doorbell = doorbell;
  atomic_store(doorbell, DOORBELL_UNRUNG);
  q->last_doorbell = DOORBELL_UNRUNG;
}

void null_cp_queue_undo_add_locked(void) {
  g_queues[--g_nqueues].used = 0;
  g_queues[g_nqueues].live = 0;
}

null_cp_queue* null_cp_queue_get_locked(uint32_t id) {
  return id < g_nqueues && g_queues[id].live ? &g_queues[id] : NULL;
}

static void count_doorbell(null_cp_queue* q, uint64_t db) {
  if (db == q->last_doorbell) return;
  q->doorbell_changes++;
  q->last_doorbell = db;
}

void null_cp_queue_retire_locked(null_cp_queue* q) {
  count_doorbell(q, atomic_load(q->doorbell));
  q->final_write_index = *q->wptr;
  q->final_read_index = *q->rptr;
  q->live = 0;
}

/* -------------------------------------------------------------- truth ---- */

void null_cp_write_truth_locked(void) {
  if (!g_truth || !*g_truth) return;
  char path[4096], tmp[4200];
  pid_path(g_truth, path, sizeof(path));
  snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
  FILE* f = g_ops.fopen(tmp, "w");
  if (!f) return;
  fprintf(f,
          "%s pid=%d gpus=%u paused=%d kfd=%d sdma_refused=%llu "
          "create_failures=%llu\n",
          g_ops.name, (int)getpid(), g_gpus, atomic_load(&g_paused), g_kfd,
          (unsigned long long)null_cp_sdma_refused,
          (unsigned long long)null_cp_create_failures);
  for (unsigned n = 1; n <= g_gpus; n++)
    fprintf(f, "node id=%u gpu_id=%u gfx=%s\n", n, g_ops.gpu_id_of(n),
            g_ops.gfx_of(n));
  for (unsigned i = 0; i < g_nqueues; i++) {
    const null_cp_queue* q = &g_queues[i];
    if (!q->used) continue;
    uint64_t w = q->live ? *q->wptr : q->final_write_index;
    uint64_t r = q->live ? *q->rptr : q->final_read_index;
    uint64_t cap = q->ring_bytes / AQL_BYTES;
    const char* owner =
        cap == ROCR_INTERNAL_QUEUE_PACKETS ? "rocr_internal" : "client";
    fprintf(f,
            "queue id=%u node=%u gpu_id=%u type=compute_aql owner=%s live=%d "
            "ring=0x%llx ring_bytes=%llu packets=%llu rptr=0x%llx "
            "wptr=0x%llx doorbell=0x%llx doorbell_slot=%u priority=%d "
            "write_index=%llu read_index=%llu pending=%llu consumed=%llu "
            "dispatches=%llu ext_dispatches=%llu barrier_dispatches=%llu "
            "barriers=%llu vendor=%llu "
            "agent=%llu blits=%llu rocclr_blits=%llu other=%llu "
            "doorbell_changes=%llu updates=%llu cu_masks=%llu "
            "kfd_queue_id=%lld\n",
            q->id, q->node, g_ops.gpu_id_of(q->node), owner, q->live,
            (unsigned long long)(uintptr_t)q->ring,
            (unsigned long long)q->ring_bytes, (unsigned long long)cap,
            (unsigned long long)(uintptr_t)q->rptr,
            (unsigned long long)(uintptr_t)q->wptr,
            (unsigned long long)(uintptr_t)q->doorbell, q->doorbell_slot,
            q->priority, (unsigned long long)w, (unsigned long long)r,
            (unsigned long long)(w - r), (unsigned long long)q->consumed,
            (unsigned long long)q->dispatches,
            (unsigned long long)q->ext_dispatches,
            (unsigned long long)q->barrier_dispatches,
            (unsigned long long)q->barriers, (unsigned long long)q->vendor,
            (unsigned long long)q->agent, (unsigned long long)q->blits,
            (unsigned long long)q->rocclr_blits, (unsigned long long)q->other,
            (unsigned long long)q->doorbell_changes,
            (unsigned long long)q->updates, (unsigned long long)q->cu_masks,
            (long long)q->kfd_queue_id);
  }
  fclose(f);
  rename(tmp, path);
}

void null_cp_write_truth(void) {
  pthread_mutex_lock(&null_cp_lock);
  null_cp_write_truth_locked();
  pthread_mutex_unlock(&null_cp_lock);
}

/* Written at exit too, by whichever library this is built into. */
__attribute__((destructor)) static void truth_at_exit(void) {
  pthread_mutex_lock(&null_cp_lock);
  if (g_nqueues) null_cp_write_truth_locked();
  pthread_mutex_unlock(&null_cp_lock);
}

/* -------------------------------------------------- command processor ---- */

uint64_t null_cp_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* amd_signal_t (amd_hsa_signal.h): kind @0, value @8, event_mailbox_ptr @16,
 * event_id @24, start_ts @32, end_ts @40, the same in ROCr 5.2.3, 6.4.3 and
 * 7.2.4; the hsa_signal_t handle is its address. Checked against Debian's
 * header by rocr_layout_check.cc. */
static int64_t signal_value(uint64_t handle) {
  return __atomic_load_n((int64_t*)(uintptr_t)(handle + 8), __ATOMIC_ACQUIRE);
}

static void signal_complete(uint64_t handle, uint64_t start) {
  if (!handle) return;
  char* s = (char*)(uintptr_t)handle;
  *(uint64_t*)(s + 32) = start;
  *(uint64_t*)(s + 40) = null_cp_now_ns();
  __atomic_fetch_sub((int64_t*)(s + 8), 1, __ATOMIC_ACQ_REL);
  uint64_t mailbox = *(uint64_t*)(s + 16);
  uint32_t event_id = *(uint32_t*)(s + 24);
  if (mailbox) {
    __atomic_store_n((uint64_t*)(uintptr_t)mailbox, event_id, __ATOMIC_RELEASE);
    g_ops.event_wake(event_id);
  }
}

/* ROCr's blit kernels (amd_blit_kernel.cpp, 5.2.3 to 7.2.4) are dispatched
 * with kernel_object = an amd_kernel_code_t header ROCr fills itself
 * (GpuAgent::AssembleShader): version and machine fields zero, entry offset
 * 256, and compute_pgm_rsrc1 with the granulated SGPR/VGPR counts of the
 * shader: CopyAligned 32/12 -> 3/2, CopyMisaligned 23/10 -> 2/2, Fill 19/8
 * -> 2/1. A compiled kernel's object is a kernel descriptor (code objects
 * v3+), whose kernarg_size is at +8: HIP's kernels (hidden arguments at
 * least) never have the zero there that the header's version field is.
 * Their kernel arguments are amd_blit_kernel.h's KernelArgs (unchanged).
 * Returns 1 if the dispatch was a blit, done here. */
static int run_blit(const char* pkt) {
  uint64_t ko = *(const uint64_t*)(pkt + 32);
  const char* args = *(const char* const*)(pkt + 40);
  if (!ko || !args) return 0;
  const char* code = (const char*)(uintptr_t)ko;
  uint32_t major = *(const uint32_t*)code;
  uint16_t kind = *(const uint16_t*)(code + 8);
  int64_t entry = *(const int64_t*)(code + 16);
  uint32_t rsrc1 = *(const uint32_t*)(code + 48);
  if (major != 0 || kind != 0 || entry != 256) return 0;
  unsigned vgpr = rsrc1 & 0x3f, sgpr = (rsrc1 >> 6) & 0xf;
  const uint64_t* a = (const uint64_t*)args;
  if (sgpr == 3 && vgpr == 2) { /* CopyAligned: phase1 src/dst .. end */
    uint64_t src = a[0], dst = a[1], src_end = a[8], dst_end = a[9];
    if (src_end - src != dst_end - dst) return 0;
    memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, src_end - src);
    return 1;
  }
  if (sgpr == 2 && vgpr == 2) { /* CopyMisaligned */
    uint64_t src = a[0], dst = a[1], src_end = a[4], dst_end = a[5];
    if (src_end - src != dst_end - dst) return 0;
    memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, src_end - src);
    return 1;
  }
  if (sgpr == 2 && vgpr == 1) { /* Fill: dst, phase2 dst, end, value */
    uint32_t* d = (uint32_t*)(uintptr_t)a[0];
    uint32_t* end = (uint32_t*)(uintptr_t)a[2];
    uint32_t value = *(const uint32_t*)(args + 24);
    while (d < end) *d++ = value;
    return 1;
  }
  return 0;
}

static int barrier_ready(const char* pkt, int is_and) {
  const uint64_t* dep = (const uint64_t*)(pkt + 8);
  int any = 0;
  for (int i = 0; i < 5; i++) {
    if (!dep[i]) continue;
    int done = signal_value(dep[i]) == 0;
    if (is_and && !done) return 0;
    if (!is_and && done) return 1;
    any = 1;
  }
  return is_and || !any;
}

/* Caller holds null_cp_lock. Returns the packets consumed. */
static unsigned service_queue(null_cp_queue* q) {
  uint64_t db = atomic_load_explicit(q->doorbell, memory_order_acquire);
  count_doorbell(q, db);
  if (db == DOORBELL_UNRUNG || atomic_load(&g_paused)) return 0;
  uint64_t cap = q->ring_bytes / AQL_BYTES;
  uint64_t rd = *q->rptr;
  uint64_t wr = __atomic_load_n(q->wptr, __ATOMIC_ACQUIRE);
  uint64_t limit = db + 1 < wr ? db + 1 : wr;
  unsigned n = 0;
  while (rd < limit) {
    char* pkt = q->ring + (rd % cap) * AQL_BYTES;
    uint16_t hdr = __atomic_load_n((uint16_t*)pkt, __ATOMIC_ACQUIRE);
    unsigned type = hdr & 0xff;
    if (type == PKT_INVALID) break; /* index written, packet not yet */
    uint64_t start = null_cp_now_ns();
    switch (type) {
      case PKT_KERNEL_DISPATCH:
        q->dispatches++;
        if (hdr & HEADER_BARRIER_BIT) q->barrier_dispatches++;
        if (run_blit(pkt))
          q->blits++;
        else if (g_ops.run_rocclr_blit && g_ops.run_rocclr_blit(pkt))
          q->rocclr_blits++;
        break;
      case PKT_BARRIER_AND:
      case PKT_BARRIER_OR:
        if (!barrier_ready(pkt, type == PKT_BARRIER_AND)) return n;
        q->barriers++;
        break;
      case PKT_VENDOR:
        /* AMD's format, byte 2 (hsa_amd_vendor_packet_header_t.AmdFormat):
         * 3 is an extended kernel dispatch (gfx12.5, hsa_ext_amd.h from
         * interface 1.21), done as a dispatch; anything else (ROCr's
         * PM4-IB, format 1: cache invalidation) needs nothing here */
        if (((const uint8_t*)pkt)[2] == AMD_FORMAT_EXT_KERNEL_DISPATCH) {
          /* its dep_signal (+48): the CP waits until it reads 0 */
          uint64_t dep = *(const uint64_t*)(pkt + 48);
          if (dep && signal_value(dep) != 0) return n;
          q->dispatches++;
          q->ext_dispatches++;
          if (hdr & HEADER_BARRIER_BIT) q->barrier_dispatches++;
        } else {
          q->vendor++;
        }
        break;
      case PKT_AGENT_DISPATCH:
        q->agent++;
        break;
      default:
        q->other++;
        break;
    }
    signal_complete(*(uint64_t*)(pkt + 56), start);
    __atomic_store_n((uint16_t*)pkt, (uint16_t)PKT_INVALID, __ATOMIC_RELEASE);
    rd++;
    __atomic_store_n(q->rptr, rd, __ATOMIC_RELEASE);
    q->consumed++;
    n++;
  }
  return n;
}

/* GPUQ_NULLGPU_CONTROL. Caller holds null_cp_lock. */
static void poll_control(void) {
  if (!g_control_dir) return;
  char p[4200];
  struct stat st;
  snprintf(p, sizeof(p), "%s/pause", g_control_dir);
  atomic_store(&g_paused, stat(p, &st) == 0);
  snprintf(p, sizeof(p), "%s/dump", g_control_dir);
  if (stat(p, &st) == 0) {
    null_cp_write_truth_locked();
    unlink(p);
  }
}

static void* cp_main(void* arg) {
  (void)arg;
  uint64_t last_work = null_cp_now_ns(), next_control = 0;
  while (!atomic_load(&g_cp_stop)) {
    unsigned n = 0;
    pthread_mutex_lock(&null_cp_lock);
    /* the control first: a CP started with "pause" there never runs */
    uint64_t t = null_cp_now_ns();
    if (t >= next_control) {
      poll_control();
      next_control = t + 10000000ull;
    }
    for (unsigned i = 0; i < g_nqueues; i++)
      if (g_queues[i].live) n += service_queue(&g_queues[i]);
    pthread_mutex_unlock(&null_cp_lock);
    if (n) {
      last_work = t;
      continue;
    }
    cp_idle_sleep(t - last_work);
  }
  return NULL;
}

void null_cp_start_locked(void) {
  if (g_cp_running) return;
  atomic_store(&g_cp_stop, 0);
  if (pthread_create(&g_cp, NULL, cp_main, NULL) != 0) return;
  g_cp_running = 1;
  if (g_cp_fifo > 0) {
    struct sched_param param = {.sched_priority = g_cp_fifo};
    int rc = pthread_setschedparam(g_cp, SCHED_FIFO, &param);
    if (rc != 0)
      fprintf(stderr, "null CP: SCHED_FIFO %d refused: %s\n", g_cp_fifo,
              strerror(rc));
  }
}

void null_cp_stop(void) {
  pthread_mutex_lock(&null_cp_lock);
  int running = g_cp_running;
  pthread_mutex_unlock(&null_cp_lock);
  if (!running) return;
  atomic_store(&g_cp_stop, 1);
  pthread_join(g_cp, NULL);
  pthread_mutex_lock(&null_cp_lock);
  g_cp_running = 0;
  atomic_store(&g_cp_stop, 0);
  pthread_mutex_unlock(&null_cp_lock);
}

/* A stand-in ROCr client: lays out doorbell signals and queues as an AqlQueue
 * does (amd_signal_t kind DOORBELL, queue_ptr -> amd_queue_t, a ring of
 * 64-byte AQL slots), writes packet headers and rings one doorbell per packet
 * through the stand-in libhsa-runtime64.so.1, plus completion-signal stores
 * (kind USER) that a doorbell counter must ignore. Prints what it did.
 *
 * usage: hsa_standin_caller [dispatch=N] [barrier=N] [vendor=N] [agent=N]
 *          [invalid=N] [ext=N] [completions=N] [queues=N]
 *          [via=screlease|relaxed|release|mix] [kind=-1|-2|1] [noqueue=1]
 *          [rounds=N] [wait_stdin=1] [requeue=1|2] [batch=K]
 *          [reuse=N] [retire=destroy|shutdown|none]
 *        hsa_standin_dlopen_caller lib=PATH [same options]
 * barrier packets alternate BARRIER_AND / BARRIER_OR; vendor packets are
 * ROCr's PM4-IB format (AmdFormat 1), ext packets AMD's extended kernel
 * dispatch (VENDOR_SPECIFIC, AmdFormat 3, setup 1: what CLR writes for every
 * launch on gfx12.5, its header, format and setup in one 32-bit release
 * store, rocvirtual.cpp packet_store_release); packets are interleaved
 * (dispatch, barrier, vendor, agent, invalid, ext, ...) over the queues
 * round-robin; the ring has 64 slots, so more than 64 packets per queue wraps
 * it. kind=1 lays out a doorbell with kind USER, as ROCr's InterceptQueue
 * does; noqueue=1 leaves queue_ptr NULL (packet type unreadable). Each of the
 * `rounds` rings the packets given (the summary gives totals).
 * wait_stdin=1 prints "ready" and reads one byte from stdin before each round
 * (so a test can attach or poll in between). requeue=1 points each doorbell
 * signal at a second queue (its own ring) from one round to the next, the
 * queue it leaves with every slot INVALID, after hsa_queue_destroy of that
 * queue (ROCr frees a doorbell signal only with its queue). requeue=2 keeps
 * each doorbell's queue but moves its ring to the spare queue's, after
 * hsa_queue_destroy, the ring it leaves INVALID (ROCr 5.2.3 gives a queue
 * created after a destroy the destroyed one's hsa_queue_t and doorbell
 * signal, with a ring of its own). Either way the queue the doorbell names
 * then starts again at write index 0, as every new ROCr queue does.
 * batch=K rings a queue's doorbell once per K packets written, with the
 * last one's index, and once more at the end of a round for what is left
 * (HIP 7's graph batches); "doorbells" are then rings, "packets" the
 * packets. reuse=N, after
 * the rounds, retires the queues (hsa_queue_destroy of each, hsa_shut_down,
 * or, as no ROCr does, nothing) and turns each doorbell signal into a
 * completion signal (kind USER) stored N times: no doorbells.
 *
 * The dlopen variant (GPUQ_CALLER_DLOPEN) does not link the library: it
 * dlopen()s lib=PATH after the first "ready" (printing "loaded"), so a test
 * sees a process map the runtime after the probes were set up. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amd_hsa_layout.h"

#ifdef GPUQ_CALLER_DLOPEN
#include <dlfcn.h>
#endif

typedef void (*store_fn)(hsa_signal_t, hsa_signal_value_t);
static store_fn store_screlease;
static store_fn store_relaxed;
static store_fn store_release;
static hsa_status_t (*queue_destroy)(hsa_queue_t*);
static hsa_status_t (*shut_down)(void);

#define RING_PACKETS 64
#define MAX_QUEUES 8

struct queue {
  amd_queue_t amd;
  amd_signal_t doorbell;
  uint64_t hw_doorbell;
  long unrung;   /* packets written since the last ring */
  uint64_t last; /* the last one's write index */
  long rings;
  long packets;
  long barrier_dispatches; /* kernel dispatches with the barrier bit */
  uint8_t ring[RING_PACKETS * AQL_PACKET_BYTES] __attribute__((aligned(64)));
};

/* Every slot of a ring INVALID: as ROCr inits it, and as the CP leaves the
 * slots it consumed. */
static void invalidate_ring(uint8_t* ring) {
  for (int s = 0; s < RING_PACKETS; ++s)
    *(uint16_t*)(ring + s * AQL_PACKET_BYTES) = HSA_PACKET_TYPE_INVALID;
}

static long arg(int argc, char** argv, const char* key, long def) {
  size_t n = strlen(key);
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
      return strtol(argv[i] + n + 1, NULL, 0);
  }
  return def;
}

static const char* sarg(int argc, char** argv, const char* key,
                        const char* def) {
  size_t n = strlen(key);
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
      return argv[i] + n + 1;
  }
  return def;
}

/* Rings q's doorbell with the index of the last packet written. */
static void ring_doorbell(struct queue* q, const char* via, long n) {
  hsa_signal_t s = {(uint64_t)(uintptr_t)&q->doorbell};
  if (strcmp(via, "mix") == 0)
    via = n % 3 == 0 ? "screlease" : n % 3 == 1 ? "relaxed" : "release";
  if (strcmp(via, "relaxed") == 0)
    store_relaxed(s, (hsa_signal_value_t)q->last);
  else if (strcmp(via, "release") == 0)
    store_release(s, (hsa_signal_value_t)q->last);
  else
    store_screlease(s, (hsa_signal_value_t)q->last);
  q->unrung = 0;
  ++q->rings;
}

/* Writes one packet, its first 4 bytes `first` (header, then AMD's format
 * and setup for a vendor packet) with the barrier bit; rings once `batch`
 * packets are unrung. */
static void put(struct queue* q, uint32_t first, const char* via, long n,
                long batch) {
  /* the queue the doorbell names (requeue=1 moves it), else q's own */
  amd_queue_t* aq = q->doorbell.queue_ptr ? q->doorbell.queue_ptr : &q->amd;
  uint64_t index =
      __atomic_fetch_add(&aq->write_dispatch_id, 1, __ATOMIC_RELEASE);
  uint8_t* slot = (uint8_t*)aq->hsa_queue.base_address +
                  (index & (RING_PACKETS - 1)) * AQL_PACKET_BYTES;
  memset(slot + 4, 0, AQL_PACKET_BYTES - 4);
  /* the barrier bit on every other packet, by write index */
  if (index % 2 == 0) {
    first |= 1u << HSA_PACKET_HEADER_BARRIER;
    uint8_t type = first & 0xff;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH ||
        (type == HSA_PACKET_TYPE_VENDOR_SPECIFIC && (first >> 16 & 0xff) == 3))
      ++q->barrier_dispatches;
  }
  __atomic_store_n((uint32_t*)slot, first, __ATOMIC_RELEASE);
  q->last = index;
  ++q->packets;
  if (++q->unrung >= batch) ring_doorbell(q, via, n);
}

/* The entry points: linked, or dlopen()ed from lib=PATH by their @ROCR_1
 * versions, as a HIP program's libamdhip64 resolves them. */
static int load(const char* lib) {
#ifdef GPUQ_CALLER_DLOPEN
  if (lib == NULL) {
    fprintf(stderr, "lib=PATH is required\n");
    return -1;
  }
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
    return -1;
  }
  store_screlease = (store_fn)dlvsym(h, "hsa_signal_store_screlease", "ROCR_1");
  store_relaxed = (store_fn)dlvsym(h, "hsa_signal_store_relaxed", "ROCR_1");
  store_release = (store_fn)dlvsym(h, "hsa_signal_store_release", "ROCR_1");
  queue_destroy =
      (hsa_status_t(*)(hsa_queue_t*))dlvsym(h, "hsa_queue_destroy", "ROCR_1");
  shut_down = (hsa_status_t(*)(void))dlvsym(h, "hsa_shut_down", "ROCR_1");
  if (!store_screlease || !store_relaxed || !store_release || !queue_destroy ||
      !shut_down) {
    fprintf(stderr, "%s lacks the @ROCR_1 signal stores or queue calls\n", lib);
    return -1;
  }
#else
  (void)lib;
  store_screlease = hsa_signal_store_screlease;
  store_relaxed = hsa_signal_store_relaxed;
  store_release = hsa_signal_store_release;
  queue_destroy = hsa_queue_destroy;
  shut_down = hsa_shut_down;
#endif
  return 0;
}

static int wait_go(int wait, const char* what, long round) {
  if (!wait) return 0;
  printf("ready pid=%d %s=%ld\n", (int)getpid(), what, round);
  fflush(stdout);
  char c;
  return read(0, &c, 1) == 1 ? 0 : -1;
}

int main(int argc, char** argv) {
  const long per_round[6] = {
      arg(argc, argv, "dispatch", 0), arg(argc, argv, "barrier", 0),
      arg(argc, argv, "vendor", 0),   arg(argc, argv, "agent", 0),
      arg(argc, argv, "invalid", 0),  arg(argc, argv, "ext", 0),
  };
  long completions = arg(argc, argv, "completions", 0);
  long nqueues = arg(argc, argv, "queues", 1);
  long kind = arg(argc, argv, "kind", AMD_SIGNAL_KIND_DOORBELL);
  long rounds = arg(argc, argv, "rounds", 1);
  int wait = arg(argc, argv, "wait_stdin", 0) != 0;
  const char* via = sarg(argc, argv, "via", "screlease");
  if (nqueues < 1 || nqueues > MAX_QUEUES || rounds < 1) {
    fprintf(stderr, "queues must be 1..%d, rounds >= 1\n", MAX_QUEUES);
    return 2;
  }

  long requeue = arg(argc, argv, "requeue", 0);
  long batch = arg(argc, argv, "batch", 1);
  if (batch < 1 || batch > RING_PACKETS) {
    fprintf(stderr, "batch must be 1..%d\n", RING_PACKETS);
    return 2;
  }
  /* queues[nqueues..]: the spares requeue=1 points the doorbells at */
  struct queue* queues = aligned_alloc(64, sizeof(struct queue) * nqueues * 2);
  memset(queues, 0, sizeof(struct queue) * nqueues * 2);
  for (long i = 0; i < nqueues * 2; ++i) {
    struct queue* q = &queues[i];
    q->doorbell.kind = kind;
    q->doorbell.hardware_doorbell_ptr = &q->hw_doorbell;
    q->doorbell.queue_ptr = arg(argc, argv, "noqueue", 0) ? NULL : &q->amd;
    q->amd.hsa_queue.base_address = q->ring;
    q->amd.hsa_queue.doorbell_signal.handle = (uint64_t)(uintptr_t)&q->doorbell;
    q->amd.hsa_queue.size = RING_PACKETS;
    q->amd.hsa_queue.id = (uint64_t)i;
    invalidate_ring(q->ring);
  }
  amd_signal_t* completion = aligned_alloc(64, sizeof(amd_signal_t));
  memset(completion, 0, sizeof(*completion));
  completion->kind = AMD_SIGNAL_KIND_USER;
  completion->value = 1;

  for (long i = 0; i < nqueues; ++i)
    printf("queue=%ld handle=0x%lx\n", i,
           (unsigned long)(uintptr_t)&queues[i].doorbell);
#ifdef GPUQ_CALLER_DLOPEN
  if (wait_go(wait, "load", 0) != 0) return 3;
#endif
  if (load(sarg(argc, argv, "lib", NULL)) != 0) return 4;
#ifdef GPUQ_CALLER_DLOPEN
  printf("loaded=1 pid=%d\n", (int)getpid());
#endif

  static const uint32_t firsts[6] = {
      HSA_PACKET_TYPE_KERNEL_DISPATCH,
      HSA_PACKET_TYPE_BARRIER_AND,
      HSA_PACKET_TYPE_VENDOR_SPECIFIC | 1u << 16, /* AMD_AQL_FORMAT_PM4_IB */
      HSA_PACKET_TYPE_AGENT_DISPATCH,
      HSA_PACKET_TYPE_INVALID,
      HSA_PACKET_TYPE_VENDOR_SPECIFIC | 3u << 16 | 1u << 24, /* EXT, 1 dim */
  };
  long n = 0, done = 0, barriers = 0;
  for (long r = 0; r < rounds; ++r) {
    if (wait_go(wait, "round", r) != 0) return 3;
    if (requeue == 2 && r > 0) {
      /* Each doorbell's queue moves to the other ring of its pair; the
       * ring it left has its slots consumed (INVALID, as the CP leaves
       * them). */
      for (long i = 0; i < nqueues && queues[i].doorbell.queue_ptr; ++i) {
        amd_queue_t* aq = &queues[i].amd;
        uint8_t* from = aq->hsa_queue.base_address;
        uint8_t* to =
            from == queues[i].ring ? queues[nqueues + i].ring : queues[i].ring;
        invalidate_ring(from);
        queue_destroy(&aq->hsa_queue);
        aq->hsa_queue.base_address = to;
        aq->write_dispatch_id = aq->read_dispatch_id = 0;
      }
    } else if (requeue && r > 0) {
      /* Each doorbell signal now belongs to the other queue of its pair,
       * as when ROCr reuses a destroyed queue's signal memory; the queue
       * it left has its slots consumed (INVALID, as the CP leaves them). */
      for (long i = 0; i < nqueues && queues[i].doorbell.queue_ptr; ++i) {
        struct queue* from =
            (struct queue*)((uint8_t*)queues[i].doorbell.queue_ptr -
                            offsetof(struct queue, amd));
        struct queue* to =
            from == &queues[i] ? &queues[nqueues + i] : &queues[i];
        invalidate_ring(from->ring);
        queue_destroy(&from->amd.hsa_queue);
        queues[i].doorbell.queue_ptr = &to->amd;
        to->amd.write_dispatch_id = to->amd.read_dispatch_id = 0;
      }
    }
    long left[6];
    memcpy(left, per_round, sizeof(left));
    long round_n = 0;
    while (left[0] + left[1] + left[2] + left[3] + left[4] + left[5] > 0) {
      for (int t = 0; t < 6; ++t) {
        if (left[t] == 0) continue;
        --left[t];
        uint32_t first = firsts[t];
        if (t == 1 && barriers++ % 2 == 1) first = HSA_PACKET_TYPE_BARRIER_OR;
        long qi = n % nqueues;
        put(&queues[qi], first, via, n, batch);
        ++n;
        ++round_n;
        /* a completion store after some packets, as the CP's signal would be
         * waited on and reset by the host */
        if (done < completions) {
          hsa_signal_t c = {(uint64_t)(uintptr_t)completion};
          if (done % 2 == 0)
            store_screlease(c, 1);
          else
            store_relaxed(c, 1);
          ++done;
        }
      }
    }
    for (long i = 0; i < nqueues; ++i)
      if (queues[i].unrung) ring_doorbell(&queues[i], via, n);
    printf("round=%ld packets=%ld\n", r, round_n);
    fflush(stdout);
  }
  for (; done < completions; ++done) {
    hsa_signal_t c = {(uint64_t)(uintptr_t)completion};
    store_relaxed(c, 1);
  }
  long reuse = arg(argc, argv, "reuse", 0);
  long reused = 0;
  if (reuse > 0) {
    const char* retire = sarg(argc, argv, "retire", "destroy");
    if (strcmp(retire, "shutdown") == 0) {
      shut_down();
    } else if (strcmp(retire, "destroy") == 0) {
      for (long i = 0; i < nqueues; ++i)
        queue_destroy(&queues[i].amd.hsa_queue);
    } else if (strcmp(retire, "none") != 0) {
      fprintf(stderr, "retire must be destroy, shutdown or none\n");
      return 2;
    }
    /* The signal pool hands each doorbell's memory out again as a
     * completion signal (ROCr's SharedSignalPool_t). */
    for (long i = 0; i < nqueues; ++i) {
      amd_signal_t* s = &queues[i].doorbell;
      s->kind = AMD_SIGNAL_KIND_USER;
      s->value = 1;
      s->queue_ptr = NULL;
      for (long k = 0; k < reuse; ++k, ++reused) {
        hsa_signal_t c = {(uint64_t)(uintptr_t)s};
        if (k % 2 == 0)
          store_screlease(c, 0);
        else
          store_relaxed(c, 1);
      }
    }
  }

  long rings = 0, barrier_dispatches = 0;
  for (long i = 0; i < nqueues; ++i) {
    rings += queues[i].rings;
    barrier_dispatches += queues[i].barrier_dispatches;
  }
  printf(
      "pid=%d doorbells=%ld packets=%ld dispatch=%ld barrier=%ld vendor=%ld "
      "agent=%ld invalid=%ld ext=%ld other=%ld completions=%ld "
      "completion_handle=0x%lx reused=%ld barrier_dispatches=%ld\n",
      (int)getpid(), rings, n, per_round[0] * rounds, per_round[1] * rounds,
      per_round[2] * rounds, per_round[3] * rounds, per_round[4] * rounds,
      per_round[5] * rounds,
      (per_round[2] + per_round[3] + per_round[4]) * rounds, done,
      (unsigned long)(uintptr_t)completion, reused, barrier_dispatches);
  for (long i = 0; i < nqueues; ++i)
    printf("rung queue=%ld handle=0x%lx doorbells=%ld packets=%ld\n", i,
           (unsigned long)(uintptr_t)&queues[i].doorbell, queues[i].rings,
           queues[i].packets);
  fflush(stdout);
  return 0;
}

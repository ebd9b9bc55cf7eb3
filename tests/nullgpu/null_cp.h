/* null_cp: the null command processor and its ground truth, shared by both
 * null GPUs (nullgpu.c, the thunk; kfd_nullgpu.c, the KFD interface).
 * Test-only, as the rest of tests/nullgpu.
 *
 * It keeps the AQL queues the library created, consumes each one's packets
 * up to min(doorbell + 1, write index) on its own thread (kernel
 * dispatches, HSA's and AMD's extended ones (gfx12.5: VENDOR_SPECIFIC with
 * AmdFormat 3): ROCr's blit kernels are performed, and HIP's where the
 * library knows them; barrier-AND/OR wait for their dependencies; vendor
 * and agent packets are counted), completes their signals, and writes the
 * truth file. The library owns the topology, the events and the forwarding
 * to a real KFD; it tells the CP about them through null_cp_ops.
 *
 * Controls (environment, read by null_cp_configure):
 *   GPUQ_NULLGPU_PAUSED   1: the CP starts paused (packets stay pending)
 *   GPUQ_NULLGPU_CONTROL  a directory polled every ~10 ms: a file "pause"
 *                         there pauses the CP while it exists; a file "dump"
 *                         makes it write the truth file, then it is removed
 *   GPUQ_NULLGPU_TRUTH    the ground-truth file ("%p" = pid)
 *   GPUQ_NULLGPU_CP_FIFO  N > 0: the CP thread runs SCHED_FIFO at priority N
 *                         (the simulator tier on kernels that preempt BPF
 *                         programs: tests/kernel/sim/guest-init.sh)
 *
 * Locking: null_cp_lock guards every queue and counter below; the functions
 * named _locked and the queue accessors expect the caller to hold it. */
#ifndef GPUQ_NULLGPU_NULL_CP_H
#define GPUQ_NULLGPU_NULL_CP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define NULL_CP_MAX_QUEUES 1024
#define AQL_BYTES 64
/* ROCr's own queues (utility and blit, GpuAgent::CreateInterceptibleQueue)
 * have 64 packets: the truth names them rocr_internal. */
#define ROCR_INTERNAL_QUEUE_PACKETS 64
#define DOORBELL_UNRUNG UINT64_MAX

typedef struct {
  int used, live;
  uint32_t id;   /* the library's queue id: the index, never reused */
  uint32_t node; /* the GPU's topology node, 1-based */
  char* ring;
  uint64_t ring_bytes;
  volatile uint64_t* rptr;
  volatile uint64_t* wptr;
  _Atomic uint64_t* doorbell;
  uint32_t doorbell_slot; /* its index in the library's doorbell page */
  uint32_t percentage;
  int priority;         /* as the library's interface gives it */
  int64_t kfd_queue_id; /* with KFD forwarding, else -1 */
  /* ground truth */
  uint64_t last_doorbell, doorbell_changes, consumed, barriers;
  uint64_t dispatches;         /* HSA's and AMD's extended ones */
  uint64_t ext_dispatches;     /* of those, AMD's extended (gfx1250) */
  uint64_t barrier_dispatches; /* of those, with the header's barrier bit */
  uint64_t vendor, agent, blits, rocclr_blits, other;
  uint64_t final_write_index, final_read_index, updates, cu_masks;
} null_cp_queue;

typedef struct {
  const char* name;                     /* the truth's first word */
  uint32_t (*gpu_id_of)(unsigned node); /* the gpu_id a node shows */
  const char* (*gfx_of)(unsigned node);
  void (*event_wake)(uint32_t event_id); /* a completion signal's event */
  /* a kernel dispatch that is not one of ROCr's blits: 1 if it was one of
   * HIP's (ROCclr's) blit kernels, performed; NULL where none is known */
  int (*run_rocclr_blit)(const char* packet);
  FILE* (*fopen)(const char*, const char*); /* libc's own */
} null_cp_ops;

extern pthread_mutex_t null_cp_lock;
extern uint64_t null_cp_sdma_refused, null_cp_create_failures;

/* Once, before the first queue: the library's callbacks and GPUs, and the
 * controls above. */
void null_cp_configure(const null_cp_ops* ops, unsigned gpus);
/* Whether a real KFD takes the queues too (the truth's kfd=). */
void null_cp_set_kfd(int forwarding);

/* A new live queue with the next id, or NULL when NULL_CP_MAX_QUEUES were
 * made; the caller fills it in and gives it its doorbell. */
null_cp_queue* null_cp_queue_add_locked(void);
/* DOORBELL, unrung, becomes Q's. */
void null_cp_queue_set_doorbell(null_cp_queue* q, _Atomic uint64_t* doorbell);
/* The queue just added, taken back (its create failed after all). */
void null_cp_queue_undo_add_locked(void);
null_cp_queue* null_cp_queue_get_locked(uint32_t id);
/* Destroyed: what ROCr wrote is read now (the last doorbell counted too). */
void null_cp_queue_retire_locked(null_cp_queue* q);

/* The CP thread: started with the first queue, stopped (joined) when the
 * library closes. */
void null_cp_start_locked(void);
void null_cp_stop(void);

void null_cp_write_truth_locked(void);
/* CLOCK_MONOTONIC in ns, as the CP stamps completion signals. */
uint64_t null_cp_now_ns(void);
void null_cp_write_truth(void);

#endif /* GPUQ_NULLGPU_NULL_CP_H */

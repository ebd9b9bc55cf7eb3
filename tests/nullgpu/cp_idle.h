/* cp_idle_sleep: how long the null command processor sleeps when its last
 * pass over the queues found no packet, IDLE_NS after the last packet it
 * consumed. Shared by both null GPUs (nullgpu.c, kfd_nullgpu.c). Test-only,
 * as the rest of tests/nullgpu.
 *
 * A GPU's CP sees a packet within microseconds of its doorbell; the null CP
 * cannot see doorbells and polls. It sleeps a sixteenth of the time since
 * its last packet, at least 20 us (a client waiting on a completion right
 * after its launch) and at most 5 ms (a program holding its queues idle: 200
 * wake-ups a second): a packet that comes t after the one before waits at
 * most about t/16 more, and the first second after a packet costs about 300
 * wake-ups. Under TCG (the simulator tier's guests, one vCPU each) every
 * wake-up is an emulated timer interrupt and a context switch. The earlier
 * steps (20 us for 50 ms after a packet, then 0.5 ms up to a second: about
 * 4400 wake-ups in that second) kept five HIP programs, whose start-up
 * consumes a packet every so often, at about 40 s of system time each in
 * the 7.3 guest (2026-11-28: they held their queues after 849 s). On this
 * host, Debian's HIP 5.2.3 `hip_client latency 0 100 1500` made 9868 sleeps
 * before and 4252 after, `infer 8 2 2` (8 GPUs) 8834 and 1491 (strace -c). */
#ifndef GPUQ_NULLGPU_CP_IDLE_H
#define GPUQ_NULLGPU_CP_IDLE_H

#include <stdint.h>
#include <time.h>

static inline void cp_idle_sleep(uint64_t idle_ns) {
  uint64_t ns = idle_ns / 16;
  if (ns < 20000) ns = 20000;
  if (ns > 5000000) ns = 5000000;
  struct timespec ts = {0, (long)ns};
  nanosleep(&ts, NULL);
}

#endif /* GPUQ_NULLGPU_CP_IDLE_H */

/* cp_idle_sleep: how long the null command processor sleeps when its last
 * pass over the queues found no packet, IDLE_NS after the last packet it
 * consumed. Shared by both null GPUs (nullgpu.c, kfd_nullgpu.c). Test-only,
 * as the rest of tests/nullgpu.
 *
 * A GPU's CP sees a packet within microseconds of its doorbell; the null CP
 * cannot see doorbells and polls. Just after work it polls every 20 us (a
 * client waiting on a completion), then every 0.5 ms, and after a second
 * without a packet every 5 ms, so that a program holding its queues idle
 * costs 200 wake-ups a second, not 2000. Under TCG (the simulator tier's
 * guests, one vCPU each) every wake-up is an emulated timer interrupt and
 * a context switch: five held HIP programs at 0.5 ms took a large share of
 * the guest's CPU while the slower ones were still starting. */
#ifndef GPUQ_NULLGPU_CP_IDLE_H
#define GPUQ_NULLGPU_CP_IDLE_H

#include <stdint.h>
#include <time.h>

static inline void cp_idle_sleep(uint64_t idle_ns) {
  long ns = idle_ns < 50000000ull     ? 20000
            : idle_ns < 1000000000ull ? 500000
                                      : 5000000;
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

#endif /* GPUQ_NULLGPU_CP_IDLE_H */

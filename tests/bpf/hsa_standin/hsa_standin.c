/* Stand-in libhsa-runtime64.so.1: the doorbell-path exports of ROCr with
 * their real signatures and symbol versions (@ROCR_1, see libhsa.map), and
 * bodies that only do the store; hsa_queue_destroy and hsa_shut_down do
 * nothing (the caller reuses the memory of the queues it "destroyed").
 * hsa_signal_store_release is an alias of hsa_signal_store_screlease (same
 * address), as in Debian's 5.2.3 build. */
#include "amd_hsa_layout.h"

/* A doorbell signal's store goes to the hardware doorbell, any other
 * signal's to its value (ROCr: AqlQueue::StoreRelaxed vs. DefaultSignal). */
static inline void store(hsa_signal_t signal, hsa_signal_value_t value) {
  amd_signal_t* s = (amd_signal_t*)(uintptr_t)signal.handle;
  if (s->kind < 0) {
    if (s->hardware_doorbell_ptr != NULL)
      __atomic_store_n(s->hardware_doorbell_ptr, (uint64_t)value,
                       __ATOMIC_RELEASE);
  } else {
    __atomic_store_n(&s->value, value, __ATOMIC_RELEASE);
  }
}

__attribute__((noinline, visibility("default"))) void
hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value) {
  store(signal, value);
}

__attribute__((noinline, visibility("default"))) void hsa_signal_store_relaxed(
    hsa_signal_t signal, hsa_signal_value_t value) {
  store(signal, value);
}

void hsa_signal_store_release(hsa_signal_t signal, hsa_signal_value_t value)
    __attribute__((alias("hsa_signal_store_screlease"), visibility("default")));

__attribute__((noinline, visibility("default"))) hsa_status_t hsa_queue_destroy(
    hsa_queue_t* queue) {
  __asm__ volatile("" : : "r"(queue) : "memory");
  return HSA_STATUS_SUCCESS;
}

__attribute__((noinline, visibility("default"))) hsa_status_t hsa_shut_down(
    void) {
  __asm__ volatile("" : : : "memory");
  return HSA_STATUS_SUCCESS;
}

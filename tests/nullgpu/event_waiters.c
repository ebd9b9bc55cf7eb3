/* The event semantics of amdkfd that the null thunk must keep
 * (kfd_events.c, set_event and kfd_wait_on_events): a set wakes every
 * thread waiting on the event at that moment, and an auto-reset event stays
 * signaled only when nobody was waiting. ROCr 5.2.3's queue destroy relies
 * on it (see event_set_locked in nullgpu.c); the thunk once let the first
 * woken waiter take the wake of all, and rocr_client hung about once in 150
 * runs. Links the null thunk directly; prints "ok   - ..." or "FAIL - ..."
 * per check and exits 0 only when all hold. Every wait is finite (30 s), so
 * a regression fails instead of hanging. */
#define _GNU_SOURCE
#include <hsakmt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { kWaitMs = 30000 };

static int g_failed;

static void check(int ok, const char* what) {
  printf("%s - %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) g_failed = 1;
}

typedef struct {
  HsaEvent* ev;
  _Atomic pid_t tid;
  HSAKMT_STATUS st;
} waiter;

static void* wait_main(void* arg) {
  waiter* w = arg;
  atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
  w->st = hsaKmtWaitOnEvent(w->ev, kWaitMs);
  return NULL;
}

/* Whether thread TID sleeps in futex(2): the thunk's condition wait, once
 * no other thread holds its lock. */
static int in_futex(pid_t tid) {
  char p[64], buf[64] = "";
  snprintf(p, sizeof(p), "/proc/self/task/%d/syscall", (int)tid);
  FILE* f = fopen(p, "r");
  if (!f) return 0;
  int ok = fgets(buf, sizeof(buf), f) && !strncmp(buf, "202 ", 4);
  fclose(f);
  return ok;
}

/* Starts a waiter on EV and returns once it sleeps in the thunk's wait.
 * Started one at a time, so a sleeping waiter is never one blocked on the
 * lock another waiter holds. */
static int start_waiter(waiter* w, pthread_t* t, HsaEvent* ev) {
  w->ev = ev;
  atomic_store(&w->tid, 0);
  if (pthread_create(t, NULL, wait_main, w) != 0) return -1;
  for (;;) {
    pid_t tid = atomic_load(&w->tid);
    if (tid && in_futex(tid)) return 0;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static HsaEvent* new_event(bool manual_reset) {
  HsaEventDescriptor d;
  memset(&d, 0, sizeof(d));
  d.EventType = HSA_EVENTTYPE_SIGNAL;
  HsaEvent* ev = NULL;
  return hsaKmtCreateEvent(&d, manual_reset, false, &ev) ==
                 HSAKMT_STATUS_SUCCESS
             ? ev
             : NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* amdkfd's waits exactly: no bounded slices (nullgpu.c, WAIT_SLICE_MS) */
  setenv("GPUQ_NULLGPU_WAIT_SLICE_MS", "0", 1);
  HsaEvent* ev = new_event(false);
  if (!ev) {
    printf("FAIL - hsaKmtCreateEvent\n");
    return 1;
  }

  waiter a, b;
  pthread_t ta, tb;
  if (start_waiter(&a, &ta, ev) || start_waiter(&b, &tb, ev)) {
    printf("FAIL - pthread_create\n");
    return 1;
  }
  hsaKmtSetEvent(ev);
  HSAKMT_STATUS self = hsaKmtWaitOnEvent(ev, 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  check(a.st == HSAKMT_STATUS_SUCCESS && b.st == HSAKMT_STATUS_SUCCESS,
        "one set wakes both threads waiting on an auto-reset event");
  check(self == HSAKMT_STATUS_WAIT_TIMEOUT,
        "the setter's own wait after that set does not take it (it woke "
        "waiters, so it is not left signaled)");

  hsaKmtSetEvent(ev);
  check(hsaKmtWaitOnEvent(ev, 0) == HSAKMT_STATUS_SUCCESS,
        "a set with nobody waiting stays signaled for the next wait");
  check(hsaKmtWaitOnEvent(ev, 0) == HSAKMT_STATUS_WAIT_TIMEOUT,
        "that wait consumed it (auto-reset)");
  hsaKmtDestroyEvent(ev);

  HsaEvent* manual = new_event(true);
  if (!manual) {
    printf("FAIL - hsaKmtCreateEvent (manual reset)\n");
    return 1;
  }
  if (start_waiter(&a, &ta, manual)) {
    printf("FAIL - pthread_create\n");
    return 1;
  }
  hsaKmtSetEvent(manual);
  pthread_join(ta, NULL);
  check(a.st == HSAKMT_STATUS_SUCCESS &&
            hsaKmtWaitOnEvent(manual, 0) == HSAKMT_STATUS_SUCCESS &&
            hsaKmtWaitOnEvent(manual, 0) == HSAKMT_STATUS_SUCCESS,
        "a manual-reset event wakes its waiter and stays signaled");
  hsaKmtDestroyEvent(manual);
  return g_failed;
}

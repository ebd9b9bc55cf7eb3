// Whether a freshly attached feature-probe program fires: the trigger is
// tried again, with a pause, before "never fires" is concluded. Since Linux
// 6.16 Debian's kernels boot with lazy preemption, so a task can be
// preempted inside a BPF program; while it is, the kernel skips that program
// for every other task on that CPU (bpf_prog_inc_misses_counter). sys_enter
// runs on every syscall: on a busy one-vCPU guest running Debian's 7.3 the
// tracepoint probe missed all three of an agent's getppid calls, and the
// agent planned no tracepoint tier. A disarmed kprobe never fires at all.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace gpuq {

/// Calls `trigger` until `fired` is true, at most `rounds` times, sleeping
/// `pause` between tries (the preempted task gets the CPU back and leaves
/// the program). True if it fired.
inline bool FiresWithin(int rounds, std::chrono::microseconds pause,
                        const std::function<void()>& trigger,
                        const std::function<bool()>& fired) {
  for (int i = 0; i < rounds; ++i) {
    if (i > 0) std::this_thread::sleep_for(pause);
    trigger();
    if (fired()) return true;
  }
  return false;
}

}  // namespace gpuq

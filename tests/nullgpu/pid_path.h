/* pid_path: PATTERN with every "%p" replaced by this process's pid, as the
 * null GPU's truth file and the ring counter's output file are named
 * (GPUQ_NULLGPU_TRUTH, GPUQ_RINGCOUNT_FILE). Test-only, as the rest of
 * tests/nullgpu. */
#ifndef GPUQ_NULLGPU_PID_PATH_H
#define GPUQ_NULLGPU_PID_PATH_H

#include <stdio.h>
#include <unistd.h>

static inline void pid_path(const char* pattern, char* path, size_t size) {
  size_t o = 0;
  for (const char* c = pattern; *c && o + 16 < size; c++) {
    if (c[0] == '%' && c[1] == 'p') {
      o += (size_t)snprintf(path + o, size - o, "%d", (int)getpid());
      c++;
    } else {
      path[o++] = *c;
    }
  }
  path[o] = 0;
}

#endif /* GPUQ_NULLGPU_PID_PATH_H */

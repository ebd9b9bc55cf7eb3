/* kfd_node_gpu_id: for KFD forwarding (the QEMU simulator tier), the KFD
 * topology node a null GPU stands on and that node's gpu_id. Shared by both
 * null GPUs (nullgpu.c's GPUQ_NULLGPU_KFD, kfd_nullgpu.c's GPUQ_NULLGPU_KFD).
 * Test-only, as the rest of tests/nullgpu.
 *
 * *nodes walks a comma-separated list ("1,3"): each call takes the next
 * entry, or DEFAULT_NODE when the list is empty or used up. fopen_fn is the
 * caller's fopen (kfd_nullgpu.c must pass libc's own: its interposed one
 * redirects the KFD sysfs). Returns the gpu_id, or 0 with *node_out and
 * path set for the caller's one-line error. */
#ifndef GPUQ_NULLGPU_KFD_NODES_H
#define GPUQ_NULLGPU_KFD_NODES_H

#include <stdio.h>
#include <stdlib.h>

static inline unsigned kfd_node_gpu_id(
    const char** nodes, unsigned default_node,
    FILE* (*fopen_fn)(const char*, const char*), unsigned* node_out, char* path,
    size_t path_len) {
  unsigned node = default_node;
  if (*nodes && **nodes) {
    char* end;
    node = (unsigned)strtoul(*nodes, &end, 10);
    *nodes = *end == ',' ? end + 1 : end;
  }
  *node_out = node;
  snprintf(path, path_len, "/sys/class/kfd/kfd/topology/nodes/%u/gpu_id", node);
  FILE* f = fopen_fn(path, "r");
  unsigned id = 0;
  if (f) {
    if (fscanf(f, "%u", &id) != 1) id = 0;
    fclose(f);
  }
  return id;
}

#endif /* GPUQ_NULLGPU_KFD_NODES_H */

// The kernel side's mirror of amdkfd's uapi (include/gpuq/kfd_uapi.h)
// against the real header, bookworm's linux-libc-dev (Linux 6.1): the
// static assertions of tests/lib/kfd_uapi_same.h, compiled into the unit
// tests. The values 6.1 lacks (CREATE_PROCESS, 7.2; SDMA_BY_ENG_ID, 6.12)
// the simulator tier compiles against its kernels' own headers
// (tests/kernel/sim/kfd_uapi_check.c, check "uapi:<kernel>").
#include "kfd_uapi_same.h"

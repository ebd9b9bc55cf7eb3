/* hold_runtime LIBRARY: dlopen()s LIBRARY (a libhsa-runtime64.so.1), prints
 * "LOADED <pid>", and keeps it mapped until a signal ends it: a process of a
 * container that uses its own ROCm, for the agent's runtime scan to find.
 * Nothing of ROCr runs (no hsa_init): without a GPU, its mapping is what
 * is tested. Test only; built on the host, run inside a sid root
 * (tests/nullgpu/rocm_stacks.sh), whose newer glibc runs it. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hold_runtime LIBRARY\n");
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    printf("BAD dlopen: %s\n", dlerror());
    return 1;
  }
  printf("LOADED %d\n", (int)getpid());
  fflush(stdout);
  for (;;) pause();
}

/* rocr_client: a small client of Debian's real ROCr (libhsa-runtime64.so.1)
 * through the plain HSA API, for the QEMU simulator tier
 * (tests/kernel/sim/guest-init.sh, "rocr:" checks): with the null thunk
 * (nullgpu.c) forwarding queues to the simulator's /dev/kfd, its queues are
 * real ROCr queues in the kernel. Test only.
 *
 * One command per line on stdin (as tests/kernel/sim/kfd_sim_driver.c):
 *   queue NAME GPU PACKETS   hsa_queue_create on the GPU-th GPU agent (0..)
 *   submit NAME N [barrier] [nowait]
 *                            N AQL packets (kernel dispatches of a null
 *                            kernel object, or barrier-AND packets), each
 *                            published and its doorbell rung with
 *                            hsa_signal_store_screlease; then waits for
 *                            their completion unless "nowait" (the CP is
 *                            paused: the packets stay pending)
 *   batch NAME N K [mixed|ext]
 *                            N packets in batches of K as HIP 7 replays a
 *                            graph (clr's dispatchGenericAqlPacketBatch):
 *                            K slots reserved with one
 *                            hsa_queue_add_write_index_screlease, written,
 *                            one doorbell store of the batch's last index;
 *                            "mixed": every 4th packet a barrier-AND; "ext":
 *                            so too, the dispatches AMD's extended kernel
 *                            dispatch packets, as CLR writes every launch
 *                            and graph node on gfx12.5 (below); then waits
 *                            for their completion
 *   drain NAME               waits until the CP consumed all of NAME
 *   destroy NAME             hsa_queue_destroy
 *   reuse NAME N             after destroy NAME: hsa_signal_create until a
 *                            signal gets NAME's doorbell signal memory back
 *                            from ROCr's signal pool (at most 8 tries), then
 *                            N stores on it (screlease and relaxed in turn):
 *                            completion-signal stores, no doorbells. Prints
 *                            "REUSED NAME handle=H tries=T stores=N" or
 *                            "NOTREUSED NAME tries=T"
 *   copy GPU BYTES           through ROCr's own copy and fill (blit
 *                            kernels on its utility queue when no SDMA is
 *                            used): BYTES from system memory into the
 *                            GPU-th GPU's memory and back (hsa_memory_copy),
 *                            the same BYTES - 1 from offset 1 (misaligned),
 *                            then hsa_amd_memory_fill and back; each
 *                            checked. Prints "COPY GPU BYTES ok" or BAD
 *   truth                    one QUEUE line per queue (what was written)
 *   sync N                   prints "SYNC N"
 *   shutdown                 hsa_shut_down
 *   exit                     exit(0) (no hsa_shut_down: the process exit
 *                            tears the KFD process down)
 * Prints "READY <pid> gpus=<n>" once hsa_init is done; "BAD ..." on any
 * unexpected result. */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_AGENTS 64 /* 8 MI300X in CPX mode */
#define MAX_QUEUES 80

typedef struct {
  char name[32];
  hsa_queue_t* q;
  unsigned gpu;
  uint64_t written, rings, dispatches, ext_dispatches, barrier_dispatches;
  uint64_t barriers;
  uint64_t doorbell; /* its doorbell signal's handle, kept after destroy */
  int live;
} client_queue;

static hsa_agent_t g_agents[MAX_AGENTS];
static unsigned g_nagents;
static client_queue g_queues[MAX_QUEUES];
static unsigned g_nqueues;

static hsa_status_t add_gpu(hsa_agent_t agent, void* data) {
  (void)data;
  hsa_device_type_t type;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) ==
          HSA_STATUS_SUCCESS &&
      type == HSA_DEVICE_TYPE_GPU && g_nagents < MAX_AGENTS)
    g_agents[g_nagents++] = agent;
  return HSA_STATUS_SUCCESS;
}

static hsa_agent_t g_cpu;
static int g_have_cpu;

static hsa_status_t find_cpu(hsa_agent_t agent, void* data) {
  (void)data;
  hsa_device_type_t type;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) ==
          HSA_STATUS_SUCCESS &&
      type == HSA_DEVICE_TYPE_CPU && !g_have_cpu) {
    g_cpu = agent;
    g_have_cpu = 1;
  }
  return HSA_STATUS_SUCCESS;
}

/* The first global pool the runtime may allocate from whose flags have
 * *(uint32_t*)data (coarse-grained for a GPU, fine-grained for the CPU). */
typedef struct {
  uint32_t flag;
  hsa_amd_memory_pool_t pool;
  int found;
} pool_search;

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void* data) {
  pool_search* ps = data;
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  bool alloc = false;
  if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                                   &seg) != HSA_STATUS_SUCCESS ||
      seg != HSA_AMD_SEGMENT_GLOBAL)
    return HSA_STATUS_SUCCESS;
  hsa_amd_memory_pool_get_info(
      pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc);
  hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                               &flags);
  if (!alloc || !(flags & ps->flag) || ps->found) return HSA_STATUS_SUCCESS;
  ps->pool = pool;
  ps->found = 1;
  return HSA_STATUS_SUCCESS;
}

static void cmd_copy(unsigned gpu, size_t bytes) {
  if (gpu >= g_nagents || bytes < 8 || !g_have_cpu) {
    printf("BAD copy: gpu %u of %u, %zu bytes\n", gpu, g_nagents, bytes);
    return;
  }
  pool_search dev_pool = {
      HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, {0}, 0};
  pool_search sys_pool = {HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, {0}, 0};
  hsa_amd_agent_iterate_memory_pools(g_agents[gpu], find_pool, &dev_pool);
  hsa_amd_agent_iterate_memory_pools(g_cpu, find_pool, &sys_pool);
  if (!dev_pool.found || !sys_pool.found) {
    printf("BAD copy: no pool (gpu %d, system %d)\n", dev_pool.found,
           sys_pool.found);
    return;
  }
  unsigned char *dev = NULL, *a = NULL, *b = NULL;
  if (hsa_amd_memory_pool_allocate(dev_pool.pool, bytes, 0, (void**)&dev) ||
      hsa_amd_memory_pool_allocate(sys_pool.pool, bytes, 0, (void**)&a) ||
      hsa_amd_memory_pool_allocate(sys_pool.pool, bytes, 0, (void**)&b)) {
    printf("BAD copy: allocation\n");
    return;
  }
  void* host[2] = {a, b};
  for (int i = 0; i < 2; i++)
    hsa_amd_agents_allow_access(1, &g_agents[gpu], NULL, host[i]);
  const char* bad = NULL;
  for (size_t i = 0; i < bytes; i++) a[i] = (unsigned char)(i * 7 + 1);
  memset(b, 0, bytes);
  if (hsa_memory_copy(dev, a, bytes) || hsa_memory_copy(b, dev, bytes))
    bad = "hsa_memory_copy";
  else if (memcmp(a, b, bytes))
    bad = "round trip differs";
  memset(b, 0, bytes);
  for (size_t i = 0; i < bytes; i++) a[i] = (unsigned char)(i * 13 + 5);
  if (!bad && (hsa_memory_copy(dev + 1, a + 1, bytes - 1) ||
               hsa_memory_copy(b + 1, dev + 1, bytes - 1)))
    bad = "hsa_memory_copy misaligned";
  else if (!bad && memcmp(a + 1, b + 1, bytes - 1))
    bad = "misaligned round trip differs";
  if (!bad && (hsa_amd_memory_fill(dev, 0x5a5a5a5au, bytes / 4) ||
               hsa_memory_copy(b, dev, bytes / 4 * 4)))
    bad = "hsa_amd_memory_fill";
  for (size_t i = 0; !bad && i < bytes / 4 * 4; i++)
    if (b[i] != 0x5a) bad = "fill differs";
  hsa_amd_memory_pool_free(dev);
  hsa_amd_memory_pool_free(a);
  hsa_amd_memory_pool_free(b);
  if (bad)
    printf("BAD copy %u %zu: %s\n", gpu, bytes, bad);
  else
    printf("COPY %u %zu ok\n", gpu, bytes);
}

static client_queue* find(const char* name) {
  for (unsigned i = 0; i < g_nqueues; i++)
    if (g_queues[i].live && !strcmp(g_queues[i].name, name))
      return &g_queues[i];
  printf("BAD no live queue %s\n", name);
  return NULL;
}

static void cmd_queue(const char* name, unsigned gpu, unsigned packets) {
  if (gpu >= g_nagents || g_nqueues >= MAX_QUEUES) {
    printf("BAD queue %s: gpu %u of %u\n", name, gpu, g_nagents);
    return;
  }
  client_queue* c = &g_queues[g_nqueues];
  memset(c, 0, sizeof(*c));
  snprintf(c->name, sizeof(c->name), "%s", name);
  c->gpu = gpu;
  hsa_status_t st =
      hsa_queue_create(g_agents[gpu], packets, HSA_QUEUE_TYPE_SINGLE, NULL,
                       NULL, UINT32_MAX, UINT32_MAX, &c->q);
  if (st != HSA_STATUS_SUCCESS) {
    printf("BAD hsa_queue_create %s: status 0x%x\n", name, (unsigned)st);
    return;
  }
  c->live = 1;
  c->doorbell = c->q->doorbell_signal.handle;
  g_nqueues++;
  printf("QUEUE %s created id=%llu size=%u at=%p doorbell=0x%llx ring=%p\n",
         name, (unsigned long long)c->q->id, c->q->size, (void*)c->q,
         (unsigned long long)c->doorbell, c->q->base_address);
}

/* AMD's extended kernel dispatch packet (hsa_amd_ext_kernel_dispatch_packet_t
 * of ROCr's hsa_ext_amd.h from interface 1.21; Debian's 7.2.4 headers do
 * not have it): one 64-byte slot, a VENDOR_SPECIFIC header with AmdFormat
 * HSA_AMD_PACKET_TYPE_EXT_KERNEL_DISPATCH (3) at byte 2 and the setup byte
 * at 3, the kernel object and completion signal where a dispatch has them.
 * CLR (rocsettings.cpp: ext_dispatch_packet_ from gfx 12.5) writes it for
 * every launch and graph node, header, format and setup published by one
 * 32-bit release store (rocvirtual.cpp packet_store_release). */
typedef struct {
  uint16_t header;
  uint8_t amd_format;
  uint8_t setup;
  uint16_t workgroup_size[3];
  uint16_t reserved0;
  uint32_t cluster_count_x;
  uint16_t cluster_count_y, cluster_count_z;
  uint8_t cluster_size[3];
  uint8_t perf_hint;
  uint32_t private_segment_size, group_segment_size;
  uint64_t kernel_object;
  uint64_t kernarg_address;
  hsa_signal_t dep_signal;
  hsa_signal_t completion_signal;
} ext_dispatch_packet;
_Static_assert(sizeof(ext_dispatch_packet) == 64, "one AQL slot");
_Static_assert(offsetof(ext_dispatch_packet, kernel_object) == 32,
               "where a dispatch has it");
_Static_assert(offsetof(ext_dispatch_packet, completion_signal) == 56,
               "where every packet has it");
enum { AMD_FORMAT_EXT_KERNEL_DISPATCH = 3 };
enum packet_kind { PACKET_DISPATCH, PACKET_BARRIER, PACKET_EXT_DISPATCH };

/* Writes one packet into slot idx (its header last, with release). */
static void write_packet(client_queue* c, uint64_t idx, enum packet_kind kind,
                         hsa_signal_t done) {
  hsa_queue_t* q = c->q;
  while (idx - hsa_queue_load_read_index_scacquire(q) >= q->size)
    usleep(100); /* ring full: the CP catches up */
  uint16_t header;
  uint16_t setup = 0; /* the 16 bits after the header */
  void* slot = (char*)q->base_address + (idx & (q->size - 1)) * 64;
  if (kind == PACKET_EXT_DISPATCH) {
    ext_dispatch_packet* p = slot;
    memset((char*)p + 4, 0, sizeof(*p) - 4);
    p->workgroup_size[0] = p->workgroup_size[1] = p->workgroup_size[2] = 1;
    p->cluster_count_x = p->cluster_count_y = p->cluster_count_z = 1;
    p->cluster_size[0] = p->cluster_size[1] = p->cluster_size[2] = 1;
    p->completion_signal = done; /* kernel_object 0: the null CP's no-op */
    setup = AMD_FORMAT_EXT_KERNEL_DISPATCH | 1 << 8; /* 1 dimension */
    header = HSA_PACKET_TYPE_VENDOR_SPECIFIC << HSA_PACKET_HEADER_TYPE;
    c->dispatches++;
    c->ext_dispatches++;
  } else if (kind == PACKET_BARRIER) {
    hsa_barrier_and_packet_t* p = slot;
    memset((char*)p + 4, 0, sizeof(*p) - 4);
    p->completion_signal = done;
    header = HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE;
    c->barriers++;
  } else {
    hsa_kernel_dispatch_packet_t* p = slot;
    memset((char*)p + 4, 0, sizeof(*p) - 4);
    p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
    p->completion_signal = done; /* kernel_object 0: the null CP's no-op */
    setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE;
    c->dispatches++;
  }
  /* every other kernel dispatch waits for what is before it on its queue
   * (the barrier bit, as an in-order stream's launches carry it) */
  if (kind != PACKET_BARRIER && idx % 2 == 0) {
    header |= 1 << HSA_PACKET_HEADER_BARRIER;
    c->barrier_dispatches++;
  }
  header |= HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE;
  header |= HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
  __atomic_store_n((uint32_t*)slot, (uint32_t)header | (uint32_t)setup << 16,
                   __ATOMIC_RELEASE);
  c->written++;
}

/* Publishes one packet at the next write index and rings its doorbell. */
static void put_packet(client_queue* c, int barrier, hsa_signal_t done) {
  uint64_t idx = hsa_queue_add_write_index_screlease(c->q, 1);
  write_packet(c, idx, barrier ? PACKET_BARRIER : PACKET_DISPATCH, done);
  hsa_signal_store_screlease(c->q->doorbell_signal, (hsa_signal_value_t)idx);
  c->rings++;
}

/* A completion signal for n packets (each packet decrements it). */
static int make_done(unsigned n, hsa_signal_t* done) {
  if (hsa_signal_create((hsa_signal_value_t)n, 0, NULL, done) ==
      HSA_STATUS_SUCCESS)
    return 1;
  printf("BAD hsa_signal_create\n");
  return 0;
}

/* Waits until the CP completed every packet naming done, then frees it. */
static void wait_done(const char* what, const char* name, hsa_signal_t done) {
  hsa_signal_value_t v = hsa_signal_wait_scacquire(
      done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  if (v != 0) printf("BAD %s %s: completion signal %ld\n", what, name, (long)v);
  hsa_signal_destroy(done);
}

static void cmd_batch(const char* name, unsigned n, unsigned k, int mixed,
                      int ext) {
  client_queue* c = find(name);
  if (!c) return;
  if (k == 0 || k > c->q->size) {
    printf("BAD batch %s: batches of %u in a ring of %u\n", name, k,
           c->q->size);
    return;
  }
  hsa_signal_t done;
  if (!make_done(n, &done)) return;
  unsigned rings = 0;
  for (unsigned i = 0; i < n;) {
    unsigned b = n - i < k ? n - i : k;
    uint64_t first = hsa_queue_add_write_index_screlease(c->q, b);
    for (unsigned j = 0; j < b; j++, i++)
      write_packet(c, first + j,
                   (mixed || ext) && i % 4 == 3 ? PACKET_BARRIER
                   : ext                        ? PACKET_EXT_DISPATCH
                                                : PACKET_DISPATCH,
                   done);
    hsa_signal_store_screlease(c->q->doorbell_signal,
                               (hsa_signal_value_t)(first + b - 1));
    c->rings++;
    rings++;
  }
  wait_done("batch", name, done);
  printf("BATCHED %s %u rings=%u\n", name, n, rings);
}

static void cmd_submit(const char* name, unsigned n, int barrier, int wait) {
  client_queue* c = find(name);
  if (!c) return;
  if (!wait && n >= c->q->size) {
    printf("BAD submit %s: %u packets do not fit a paused ring of %u\n", name,
           n, c->q->size);
    return;
  }
  hsa_signal_t done;
  if (!make_done(n, &done)) return;
  for (unsigned i = 0; i < n; i++) put_packet(c, barrier, done);
  if (wait) wait_done("submit", name, done);
  /* else: the signal stays alive with the pending packets that name it */
  printf("SUBMITTED %s %u\n", name, n);
}

static void cmd_drain(const char* name) {
  client_queue* c = find(name);
  if (!c) return;
  while (hsa_queue_load_read_index_scacquire(c->q) <
         hsa_queue_load_write_index_scacquire(c->q))
    usleep(1000);
  printf("DRAINED %s\n", name);
}

static void cmd_reuse(const char* name, unsigned n) {
  client_queue* c = NULL;
  for (unsigned i = 0; i < g_nqueues; i++)
    if (!g_queues[i].live && !strcmp(g_queues[i].name, name)) c = &g_queues[i];
  if (!c) {
    printf("BAD reuse %s: no destroyed queue of that name\n", name);
    return;
  }
  hsa_signal_t made[8];
  unsigned tries = 0, hit = 8;
  while (tries < 8 && hit == 8) {
    if (hsa_signal_create(1, 0, NULL, &made[tries]) != HSA_STATUS_SUCCESS) {
      printf("BAD hsa_signal_create\n");
      break;
    }
    if (made[tries].handle == c->doorbell) hit = tries;
    tries++;
  }
  if (hit < 8) {
    for (unsigned i = 0; i < n; i++) {
      if (i % 2 == 0)
        hsa_signal_store_screlease(made[hit], (hsa_signal_value_t)i);
      else
        hsa_signal_store_relaxed(made[hit], (hsa_signal_value_t)i);
    }
    printf("REUSED %s handle=0x%llx tries=%u stores=%u\n", name,
           (unsigned long long)c->doorbell, tries, n);
  } else {
    printf("NOTREUSED %s tries=%u\n", name, tries);
  }
  for (unsigned i = 0; i < tries; i++) hsa_signal_destroy(made[i]);
}

static void cmd_truth(void) {
  for (unsigned i = 0; i < g_nqueues; i++) {
    client_queue* c = &g_queues[i];
    uint64_t w = c->live ? hsa_queue_load_write_index_scacquire(c->q) : 0;
    uint64_t r = c->live ? hsa_queue_load_read_index_scacquire(c->q) : 0;
    printf(
        "QUEUE %s gpu=%u live=%d written=%llu rings=%llu dispatches=%llu "
        "ext_dispatches=%llu barrier_dispatches=%llu barriers=%llu "
        "write_index=%llu read_index=%llu\n",
        c->name, c->gpu, c->live, (unsigned long long)c->written,
        (unsigned long long)c->rings, (unsigned long long)c->dispatches,
        (unsigned long long)c->ext_dispatches,
        (unsigned long long)c->barrier_dispatches,
        (unsigned long long)c->barriers, (unsigned long long)w,
        (unsigned long long)r);
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  hsa_status_t st = hsa_init();
  if (st != HSA_STATUS_SUCCESS) {
    printf("BAD hsa_init: status 0x%x\n", (unsigned)st);
    return 1;
  }
  hsa_iterate_agents(add_gpu, NULL);
  hsa_iterate_agents(find_cpu, NULL);
  printf("READY %d gpus=%u\n", (int)getpid(), g_nagents);
  char line[256];
  while (fgets(line, sizeof(line), stdin)) {
    char cmd[32] = "", a[32] = "", b[32] = "", c[32] = "", d[32] = "";
    if (sscanf(line, "%31s %31s %31s %31s %31s", cmd, a, b, c, d) < 1) continue;
    if (!strcmp(cmd, "queue")) {
      cmd_queue(a, (unsigned)atoi(b), (unsigned)atoi(c));
    } else if (!strcmp(cmd, "submit")) {
      int barrier = !strcmp(c, "barrier") || !strcmp(d, "barrier");
      int nowait = !strcmp(c, "nowait") || !strcmp(d, "nowait");
      cmd_submit(a, (unsigned)atoi(b), barrier, !nowait);
    } else if (!strcmp(cmd, "batch")) {
      cmd_batch(a, (unsigned)atoi(b), (unsigned)atoi(c), !strcmp(d, "mixed"),
                !strcmp(d, "ext"));
    } else if (!strcmp(cmd, "drain")) {
      cmd_drain(a);
    } else if (!strcmp(cmd, "destroy")) {
      client_queue* q = find(a);
      if (q) {
        st = hsa_queue_destroy(q->q);
        if (st != HSA_STATUS_SUCCESS)
          printf("BAD hsa_queue_destroy %s: 0x%x\n", a, (unsigned)st);
        q->live = 0;
        printf("DESTROYED %s\n", a);
      }
    } else if (!strcmp(cmd, "reuse")) {
      cmd_reuse(a, (unsigned)atoi(b));
    } else if (!strcmp(cmd, "copy")) {
      cmd_copy((unsigned)atoi(a), (size_t)strtoull(b, NULL, 10));
    } else if (!strcmp(cmd, "truth")) {
      cmd_truth();
    } else if (!strcmp(cmd, "sync")) {
      printf("SYNC %s\n", a);
    } else if (!strcmp(cmd, "shutdown")) {
      st = hsa_shut_down();
      printf("%s hsa_shut_down 0x%x\n", st == HSA_STATUS_SUCCESS ? "OK" : "BAD",
             (unsigned)st);
    } else if (!strcmp(cmd, "exit")) {
      printf("EXIT\n");
      exit(0);
    } else {
      printf("BAD unknown command %s\n", cmd);
    }
  }
  printf("EXIT stdin closed\n");
  return 0;
}

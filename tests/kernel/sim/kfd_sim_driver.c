// SPDX-License-Identifier: GPL-2.0
/*
 * kfd_sim_driver: a user-space "GPU application" for the KFD simulator.
 *
 * Reads one command per line on stdin and answers on stdout, so the guest
 * test can hold it at any point (queues live while the agent restarts) and
 * let it exit without destroying its queues. Queues are created through the
 * real AMDKFD_IOC_CREATE_QUEUE; AQL queues get an amd_queue_t in this
 * process's memory laid out as ROCr's (hsa_queue_t.base_address @8,
 * doorbell_signal @16, size @24, write_dispatch_id @56, read_dispatch_id
 * @128), and write_pointer/read_pointer point at its two dispatch ids, as
 * ROCr's AqlQueue does. "submit"/"complete" advance them as a HIP program's
 * dispatches and the CP's progress would.
 *
 * Commands (NAME names a queue; GPU is a gpu_id in decimal):
 *   create NAME GPU aql|pm4|sdma|sdma_xgmi [PERCENT [START_INDEX [PRIORITY [gtt]]]]
 *                             (PRIORITY 0..15, default 7; gtt: the AQL queue's
 *                             amd_queue_t in a page of simulated GTT,
 *                             KFD_SIM_MMAP_GTT, VM_IO | VM_PFNMAP as ROCr's on
 *                             MES GPUs; says "GTT errno=E" for what
 *                             process_vm_readv gives on it)
 *   createfail GPU [ERRNO]    a create that must fail with ERRNO (default
 *                             EINVAL: no such gpu_id)
 *   submit NAME N | complete NAME N
 *   update NAME PERCENT [PRIORITY]  AMDKFD_IOC_UPDATE_QUEUE (0 deactivates;
 *                             PRIORITY default 7)
 *   cumask NAME HEXWORD...    AMDKFD_IOC_SET_CU_MASK of queue NAME, which must
 *                             succeed: num_cu_mask = 32 x the words (at most
 *                             MAX_MASK_WORDS), word 0 first, CU i = bit i % 32
 *                             of word i / 32
 *   cumaskfail NAME|QID ERRNO [HEXWORD...]  the same, which must fail with
 *                             ERRNO: QID a queue id (decimal) on the current
 *                             fd; no words: num_cu_mask 0
 *   gws NAME 0|1              AMDKFD_IOC_ALLOC_QUEUE_GWS: gives queue NAME the
 *                             GWS (1) or takes it back (0); must succeed
 *   xnack 0|1                 AMDKFD_IOC_SET_XNACK_MODE of this process (before
 *                             its first queue: amdkfd refuses it after), then
 *                             read back
 *   destroy NAME
 *   burst GPU N               N x (create aql + destroy)
 *   evict PID TRIGGER | restore PID     (0: this process)
 *   runlist GPU UNMAP_US MAP_US FAIL_UNMAPS
 *   context                   7.2+: opens /dev/kfd again and makes that fd a
 *                             secondary KFD context (AMDKFD_IOC_CREATE_PROCESS);
 *                             later creates go there
 *   primary                   later creates go to the first fd's process
 *   closecontext              closes the context's fd (amdkfd tears it down)
 *   truth                     one QUEUE line per live queue
 *   sync TOKEN                prints "SYNC TOKEN" (all before it is done)
 *   timed N COMMAND...        COMMAND N times, its own lines silenced; prints
 *                             "TIMED N ns_per_op=T cpu_ns_per_op=C bad=0|1", T
 *                             elapsed, C this thread's CPU: the kernel's work
 *                             in its ioctls, BPF programs included, without
 *                             whatever else ran meanwhile (bench/kfd_hooks.sh)
 *   exit                      exits with its queues still alive
 * Output lines start with "DRV <pid> ". Exit 1 on an unexpected result.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "kfd_sim_uapi.h"

#define MAX_QUEUES 256
#define MAX_ARGS 48
#define MAX_MASK_WORDS 40 /* amdkfd uses the first 32 (1024 CUs) */
#define AQL_PACKETS 1024  /* ring of 64 KiB */

struct amd_queue {
	uint32_t type;		     /* hsa_queue_t @0 */
	uint32_t features;	     /* @4 */
	uint64_t base_address;	     /* @8 */
	uint64_t doorbell_signal;    /* @16, hsa_signal_t.handle */
	uint32_t size;		     /* @24, packets */
	uint32_t reserved1;	     /* @28 */
	uint64_t id;		     /* @32 */
	uint32_t caps;		     /* @40 */
	uint32_t reserved2[3];	     /* @44 */
	uint64_t write_dispatch_id;  /* @56 */
	uint32_t group_segment_size; /* @64 */
	uint32_t reserved3[15];
	uint64_t read_dispatch_id; /* @128 */
	uint32_t reserved4[30];
} __attribute__((aligned(64)));

_Static_assert(__builtin_offsetof(struct amd_queue, write_dispatch_id) == 56, "ROCr layout");
_Static_assert(__builtin_offsetof(struct amd_queue, read_dispatch_id) == 128, "ROCr layout");

/* amd_signal_t: kind @0 (AMD_SIGNAL_KIND_DOORBELL = -1), hardware_doorbell_ptr @8 */
struct amd_signal {
	int64_t kind;
	uint64_t hardware_doorbell_ptr;
	uint64_t pad[6];
};

struct sim_queue {
	char name[32];
	int used;
	uint32_t gpu_id, queue_id, kfd_type;
	int fd; /* the /dev/kfd fd it was created on: its KFD process */
	void *ring;
	struct amd_queue *amdq;	   /* AQL */
	int amdq_gtt;		   /* amdq is a KFD_SIM_MMAP_GTT mapping */
	struct amd_signal *signal; /* AQL */
	uint64_t *rptr, *wptr;	   /* PM4/SDMA: opaque indexes */
	uint64_t write_at_create;
};

static struct sim_queue queues[MAX_QUEUES];
static int kfd = -1;	    /* where creates go */
static int primary_fd = -1; /* the first open: the primary process */
static int context_fd = -1; /* a secondary context, if any */
static int bad;
static int pid;
static int quiet; /* inside "timed": only BAD lines are said */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet && strncmp(fmt, "BAD", 3) != 0)
		return;
	printf("DRV %d ", pid);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static struct sim_queue *find(const char *name)
{
	for (int i = 0; i < MAX_QUEUES; i++)
		if (queues[i].used && strcmp(queues[i].name, name) == 0)
			return &queues[i];
	return NULL;
}

static void *zalloc_aligned(size_t align, size_t size)
{
	void *p = aligned_alloc(align, size);

	if (!p) {
		perror("aligned_alloc");
		exit(1);
	}
	memset(p, 0, size);
	return p;
}

/*
 * The kernel's kfd_queue_type value of a label, as the simulator numbers
 * them: the real module's enum (/sys/kernel/debug/kfd_sim/queue_types,
 * "<value> <label>" lines; SDMA_XGMI is 4 up to 6.18 and 3 from 7.2).
 */
static int kernel_type(const char *label, uint32_t *value)
{
	char line[64], name[48];
	unsigned int v;
	FILE *f = fopen("/sys/kernel/debug/kfd_sim/queue_types", "r");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %47s", &v, name) == 2 && strcmp(name, label) == 0)
			*value = v, found = 0;
	fclose(f);
	return found;
}

/* kfd_queue_type of the kernel, as sysfs and the agent report it */
static int parse_type(const char *s, uint32_t *uapi, uint32_t *kfd_type)
{
	if (strcmp(s, "aql") == 0)
		*uapi = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	else if (strcmp(s, "pm4") == 0)
		*uapi = KFD_IOC_QUEUE_TYPE_COMPUTE;
	else if (strcmp(s, "sdma") == 0)
		*uapi = KFD_IOC_QUEUE_TYPE_SDMA;
	else if (strcmp(s, "sdma_xgmi") == 0)
		*uapi = KFD_IOC_QUEUE_TYPE_SDMA_XGMI;
	else
		return -1;
	return kernel_type(*uapi == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL ||
				   *uapi == KFD_IOC_QUEUE_TYPE_COMPUTE
			       ? "compute"
			       : s,
			   kfd_type);
}

/*
 * A page of simulated GTT (VM_IO | VM_PFNMAP) for an amd_queue_t, and what
 * process_vm_readv, which pins pages, gives on it (EFAULT expected).
 */
static struct amd_queue *gtt_amd_queue(void)
{
	struct iovec local, remote;
	uint64_t word;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, kfd, KFD_SIM_MMAP_GTT);

	if (p == MAP_FAILED) {
		perror("mmap KFD_SIM_MMAP_GTT");
		exit(1);
	}
	local.iov_base = &word;
	local.iov_len = sizeof(word);
	remote.iov_base = p;
	remote.iov_len = sizeof(word);
	say("GTT addr=%p errno=%d", p,
	    process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0 ? errno : 0);
	return p;
}

/* Creates a queue; returns 0 or -errno. */
static int create(struct sim_queue *q, uint32_t gpu, const char *type, uint32_t percent,
		  uint64_t start, uint32_t priority, int gtt)
{
	struct kfd_ioctl_create_queue_args a = { 0 };
	size_t ring_size = AQL_PACKETS * 64;
	uint32_t uapi;

	if (parse_type(type, &uapi, &q->kfd_type))
		return -EINVAL;
	q->ring = zalloc_aligned(4096, ring_size);
	if (uapi == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) {
		q->amdq_gtt = gtt;
		q->amdq = gtt ? gtt_amd_queue() : zalloc_aligned(4096, sizeof(*q->amdq));
		q->signal = zalloc_aligned(64, sizeof(*q->signal));
		q->signal->kind = -1;
		q->amdq->type = 0; /* HSA_QUEUE_TYPE_MULTI */
		q->amdq->base_address = (uintptr_t)q->ring;
		q->amdq->size = AQL_PACKETS;
		q->amdq->doorbell_signal = (uintptr_t)q->signal;
		q->amdq->write_dispatch_id = start;
		q->amdq->read_dispatch_id = start;
		a.write_pointer_address = (uintptr_t)&q->amdq->write_dispatch_id;
		a.read_pointer_address = (uintptr_t)&q->amdq->read_dispatch_id;
	} else {
		q->rptr = zalloc_aligned(64, 64);
		q->wptr = zalloc_aligned(64, 64);
		*q->wptr = *q->rptr = start;
		a.write_pointer_address = (uintptr_t)q->wptr;
		a.read_pointer_address = (uintptr_t)q->rptr;
	}
	q->write_at_create = start;
	a.ring_base_address = (uintptr_t)q->ring;
	a.ring_size = ring_size;
	a.gpu_id = gpu;
	a.queue_type = uapi;
	a.queue_percentage = percent;
	a.queue_priority = priority;
	if (ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &a) != 0)
		return -errno;
	q->fd = kfd;
	q->gpu_id = gpu;
	q->queue_id = a.queue_id;
	q->used = 1;
	return 0;
}

static void release(struct sim_queue *q)
{
	free(q->ring);
	if (q->amdq_gtt)
		munmap(q->amdq, 4096);
	else
		free(q->amdq);
	free(q->signal);
	free(q->rptr);
	free(q->wptr);
	memset(q, 0, sizeof(*q));
}

static int destroy(struct sim_queue *q)
{
	struct kfd_ioctl_destroy_queue_args a = { .queue_id = q->queue_id };

	if (ioctl(q->fd, AMDKFD_IOC_DESTROY_QUEUE, &a) != 0)
		return -errno;
	release(q);
	return 0;
}

static struct sim_queue *free_slot(void)
{
	for (int i = 0; i < MAX_QUEUES; i++)
		if (!queues[i].used)
			return &queues[i];
	return NULL;
}

static uint64_t *write_index(struct sim_queue *q)
{
	return q->amdq ? (uint64_t *)&q->amdq->write_dispatch_id : q->wptr;
}

static uint64_t *read_index(struct sim_queue *q)
{
	return q->amdq ? (uint64_t *)&q->amdq->read_dispatch_id : q->rptr;
}

static void expect(int ok, const char *what)
{
	if (!ok) {
		bad = 1;
		say("BAD %s", what);
	}
}

/*
 * AMDKFD_IOC_SET_CU_MASK on fd for queue qid with the n words of hex (in
 * argv); returns 0, -errno, or 1 when a word is not hex or n is too large.
 */
static int set_cu_mask(int fd, uint32_t qid, char **hex, int n)
{
	uint32_t words[MAX_MASK_WORDS];
	struct kfd_ioctl_set_cu_mask_args a = {
		.queue_id = qid,
		.num_cu_mask = 32 * n,
		.cu_mask_ptr = (uintptr_t)words,
	};

	if (n > MAX_MASK_WORDS)
		return 1;
	for (int i = 0; i < n; i++) {
		char *end;
		unsigned long long w = strtoull(hex[i], &end, 16);

		if (*end || end == hex[i] || w > UINT32_MAX)
			return 1;
		words[i] = w;
	}
	return ioctl(fd, AMDKFD_IOC_SET_CU_MASK, &a) ? -errno : 0;
}

static void command(char *line)
{
	char *argv[MAX_ARGS] = { 0 };
	int argc = 0;
	struct sim_queue *q;
	int r;

	for (char *t = strtok(line, " \t\n"); t && argc < MAX_ARGS; t = strtok(NULL, " \t\n"))
		argv[argc++] = t;
	if (argc == 0)
		return;
#define ARG(i) (argc > (i) ? argv[i] : "0")
#define NUM(i) strtoull(ARG(i), NULL, 0)
	if (strcmp(argv[0], "create") == 0 && argc >= 4) {
		q = free_slot();
		if (!q || find(argv[1])) {
			expect(0, "create: no slot or duplicate name");
			return;
		}
		r = create(q, NUM(2), argv[3], argc > 4 ? NUM(4) : 100, NUM(5),
			   argc > 6 ? NUM(6) : 7, argc > 7 && strcmp(argv[7], "gtt") == 0);
		if (r == 0)
			snprintf(q->name, sizeof(q->name), "%s", argv[1]);
		say("CREATE %s gpu=%s type=%s qid=%u rc=%d", argv[1], argv[2], argv[3],
		    r ? 0 : q->queue_id, r);
		if (r)
			release(q);
		expect(r == 0, "create failed");
	} else if (strcmp(argv[0], "createfail") == 0) {
		struct sim_queue tmp = { 0 };
		int want = argc > 2 ? -(int)NUM(2) : -EINVAL;

		r = create(&tmp, NUM(1), "aql", 100, 0, 7, 0);
		say("CREATEFAIL gpu=%s rc=%d want=%d", ARG(1), r, want);
		expect(r == want, "createfail: unexpected result");
		if (r == 0)
			destroy(&tmp);
		else
			release(&tmp);
	} else if ((strcmp(argv[0], "submit") == 0 || strcmp(argv[0], "complete") == 0) &&
		   (q = find(ARG(1)))) {
		uint64_t n = NUM(2);

		if (argv[0][0] == 's')
			__atomic_fetch_add(write_index(q), n, __ATOMIC_RELEASE);
		else
			__atomic_fetch_add(read_index(q), n, __ATOMIC_RELEASE);
		expect(*read_index(q) <= *write_index(q), "read index past write index");
		say("%s %s n=%llu write=%llu read=%llu", argv[0], argv[1], (unsigned long long)n,
		    (unsigned long long)*write_index(q), (unsigned long long)*read_index(q));
	} else if (strcmp(argv[0], "update") == 0 && (q = find(ARG(1)))) {
		struct kfd_ioctl_update_queue_args a = {
			.ring_base_address = (uintptr_t)q->ring,
			.queue_id = q->queue_id,
			.ring_size = AQL_PACKETS * 64,
			.queue_percentage = NUM(2),
			.queue_priority = argc > 3 ? NUM(3) : 7,
		};

		r = ioctl(q->fd, AMDKFD_IOC_UPDATE_QUEUE, &a) ? -errno : 0;
		say("UPDATE %s percent=%s priority=%u rc=%d", argv[1], ARG(2), a.queue_priority, r);
	} else if (strcmp(argv[0], "cumask") == 0 && argc >= 3 && (q = find(ARG(1)))) {
		r = set_cu_mask(q->fd, q->queue_id, argv + 2, argc - 2);
		say("CUMASK %s words=%d rc=%d", argv[1], argc - 2, r);
		expect(r == 0, "cumask: the set failed");
	} else if (strcmp(argv[0], "cumaskfail") == 0 && argc >= 3) {
		int want = -(int)NUM(2), fd = kfd;
		uint32_t qid;
		char *end;

		if ((q = find(argv[1]))) {
			fd = q->fd;
			qid = q->queue_id;
		} else {
			qid = strtoul(argv[1], &end, 10);
			if (*end || end == argv[1]) {
				say("BAD cumaskfail: no queue '%s'", argv[1]);
				bad = 1;
				return;
			}
		}
		r = set_cu_mask(fd, qid, argv + 3, argc - 3);
		say("CUMASKFAIL %s qid=%u words=%d rc=%d want=%d", argv[1], qid, argc - 3, r, want);
		expect(r == want, "cumaskfail: unexpected result");
	} else if (strcmp(argv[0], "gws") == 0 && argc == 3 && (q = find(ARG(1)))) {
		struct kfd_ioctl_alloc_queue_gws_args a = {
			.queue_id = q->queue_id,
			.num_gws = (uint32_t)NUM(2),
		};

		r = ioctl(q->fd, AMDKFD_IOC_ALLOC_QUEUE_GWS, &a) ? -errno : 0;
		say("GWS %s num_gws=%u rc=%d", argv[1], a.num_gws, r);
		expect(r == 0, "gws: the allocation failed");
	} else if (strcmp(argv[0], "xnack") == 0 && argc == 2) {
		struct kfd_ioctl_set_xnack_mode_args a = { .xnack_enabled = (int32_t)NUM(1) };
		struct kfd_ioctl_set_xnack_mode_args now = { .xnack_enabled = -1 };

		r = ioctl(kfd, AMDKFD_IOC_SET_XNACK_MODE, &a) ? -errno : 0;
		if (r == 0)
			r = ioctl(kfd, AMDKFD_IOC_SET_XNACK_MODE, &now) ? -errno : 0;
		say("XNACK %s rc=%d now=%d", argv[1], r, now.xnack_enabled);
		expect(r == 0 && now.xnack_enabled == a.xnack_enabled,
		       "xnack: the mode did not take");
	} else if (strcmp(argv[0], "destroy") == 0 && (q = find(ARG(1)))) {
		r = destroy(q);
		say("DESTROY %s rc=%d", argv[1], r);
		expect(r == 0, "destroy failed");
	} else if (strcmp(argv[0], "burst") == 0) {
		unsigned long n = NUM(2), ok = 0;

		for (unsigned long i = 0; i < n; i++) {
			struct sim_queue tmp = { 0 };

			if (create(&tmp, NUM(1), "aql", 100, 0, 7, 0) == 0 && destroy(&tmp) == 0)
				ok++;
			else
				release(&tmp);
		}
		say("BURST gpu=%s n=%lu ok=%lu", ARG(1), n, ok);
		expect(ok == n, "burst: some create/destroy failed");
	} else if (strcmp(argv[0], "evict") == 0 || strcmp(argv[0], "restore") == 0) {
		struct kfd_sim_evict_args a = { .pid = NUM(1), .trigger = NUM(2) };
		unsigned long cmd = argv[0][0] == 'e' ? KFD_SIM_IOC_EVICT : KFD_SIM_IOC_RESTORE;

		r = ioctl(kfd, cmd, &a) ? -errno : 0;
		say("%s pid=%s trigger=%s rc=%d ret=%d", argv[0], ARG(1), ARG(2), r, a.ret);
		expect(r == 0, "evict/restore ioctl failed");
	} else if (strcmp(argv[0], "runlist") == 0) {
		struct kfd_sim_runlist_args a = {
			.gpu_id = NUM(1),
			.unmap_delay_us = NUM(2),
			.map_delay_us = NUM(3),
			.fail_unmaps = NUM(4),
		};

		r = ioctl(kfd, KFD_SIM_IOC_RUNLIST, &a) ? -errno : 0;
		say("RUNLIST gpu=%s unmap_us=%s map_us=%s fail=%s rc=%d", ARG(1), ARG(2), ARG(3),
		    ARG(4), r);
		expect(r == 0, "runlist ioctl failed");
	} else if (strcmp(argv[0], "context") == 0 && context_fd < 0) {
		context_fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
		r = context_fd < 0				   ? -errno
		    : ioctl(context_fd, AMDKFD_IOC_CREATE_PROCESS) ? -errno
								   : 0;
		say("CONTEXT rc=%d", r);
		expect(r == 0, "context: open or AMDKFD_IOC_CREATE_PROCESS failed");
		if (r == 0)
			kfd = context_fd;
	} else if (strcmp(argv[0], "primary") == 0) {
		kfd = primary_fd;
		say("PRIMARY");
	} else if (strcmp(argv[0], "closecontext") == 0 && context_fd >= 0) {
		int n = 0;

		/* the kernel tears the context's queues down with it */
		for (int i = 0; i < MAX_QUEUES; i++)
			if (queues[i].used && queues[i].fd == context_fd) {
				release(&queues[i]);
				n++;
			}
		r = close(context_fd) ? -errno : 0;
		say("CLOSECONTEXT queues=%d rc=%d", n, r);
		expect(r == 0, "closecontext: close failed");
		context_fd = -1;
		kfd = primary_fd;
	} else if (strcmp(argv[0], "truth") == 0) {
		for (int i = 0; i < MAX_QUEUES; i++) {
			q = &queues[i];
			if (!q->used)
				continue;
			say("QUEUE %s gpu=%u qid=%u type=%u rocr=%d submitted=%llu pending=%llu",
			    q->name, q->gpu_id, q->queue_id, q->kfd_type, q->amdq != NULL,
			    (unsigned long long)(*write_index(q) - q->write_at_create),
			    (unsigned long long)(*write_index(q) - *read_index(q)));
		}
	} else if (strcmp(argv[0], "timed") == 0 && argc >= 3 && !quiet) {
		unsigned long n = NUM(1);
		char body[1024] = "", each[1024];
		struct timespec t0, t1, c0, c1;
		int was_bad = bad;

		for (int i = 2; i < argc; i++) {
			strncat(body, argv[i], sizeof(body) - strlen(body) - 2);
			strcat(body, " ");
		}
		bad = 0;
		quiet = 1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		for (unsigned long i = 0; i < n && !bad; i++) {
			memcpy(each, body, sizeof(each));
			command(each);
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		quiet = 0;
		say("TIMED %lu ns_per_op=%.0f cpu_ns_per_op=%.0f bad=%d", n,
		    ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (n ? n : 1),
		    ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / (n ? n : 1), bad);
		bad |= was_bad;
	} else if (strcmp(argv[0], "version") == 0) {
		/*
		 * AMDKFD_IOC_GET_VERSION, which changes nothing: in the
		 * tracepoint tier its sys_exit finds an entry this thread's
		 * previous KFD call left when the kernel skipped that call's
		 * sys_exit program, and counts it (kfd_exit_skipped) now rather
		 * than at the thread's next queue call.
		 */
		struct kfd_ioctl_get_version_args v = {};

		r = ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v) ? -errno : 0;
		say("VERSION %u.%u rc=%d", v.major_version, v.minor_version, r);
		expect(r == 0, "version: GET_VERSION failed");
	} else if (strcmp(argv[0], "sync") == 0) {
		say("SYNC %s", ARG(1));
	} else if (strcmp(argv[0], "exit") == 0) {
		say("EXIT bad=%d", bad);
		exit(bad);
	} else {
		say("BAD command '%s' (or unknown queue)", argv[0]);
		bad = 1;
	}
}

int main(void)
{
	char line[1024];

	pid = getpid();
	kfd = primary_fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (kfd < 0) {
		printf("DRV %d BAD open /dev/kfd: %s\n", pid, strerror(errno));
		return 1;
	}
	say("READY");
	while (fgets(line, sizeof(line), stdin))
		command(line);
	say("EOF bad=%d", bad);
	return bad;
}

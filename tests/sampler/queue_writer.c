// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in for a ROCr process, for the sampler tests and benchmark: it
 * lays out amd_queue_t-shaped blocks (256 bytes, 64-byte aligned,
 * write_dispatch_id @56, read_dispatch_id @128; kfd-probe-points.md
 * section 3) and moves their indexes on command. One command per line on
 * stdin, one reply line on stdout (flushed) per command:
 *
 *   new N [W R]    N more queues starting at write W, read R (default 0 0)
 *                  -> "queues FIRST N ADDR0 ADDR1 ..." (amd_queue_t addresses)
 *   adv I DW DR    queue I: write += DW, read += DR           -> "ok W R"
 *   advall DW DR   every queue                                 -> "ok"
 *   hole           an address of a page that is not mapped     -> "hole ADDR"
 *   fenced W R     an amd_queue_t alone in a page then made PROT_NONE, not
 *                  one of the queues above (adv cannot move it)
 *                                                              -> "fenced ADDR"
 *                  process_vm_readv faults on it (it pins pages as their
 *                  owner could read them) where /proc/PID/mem reads it
 *                  (FOLL_FORCE): it stands in for ROCr's amd_queue_t in GTT
 *                  memory mapped from the render node on MES GPUs (VM_IO |
 *                  VM_PFNMAP: no pages to pin, read through the mapping's
 *                  access hook), which no GPU here can provide.
 *   pid            -> "pid PID"
 *   exit           exits 0 at once, without replying
 *
 * Anything else -> "error ..." on stdout. EOF on stdin exits 0.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The fields of ROCr's amd_queue_t (hsa/amd_hsa_queue.h) up to
 * read_dispatch_id; the rest of its 256 bytes is padding here. */
struct amd_queue {
	/* hsa_queue_t */
	uint32_t type;
	uint32_t features;
	uint64_t base_address;
	uint64_t doorbell_signal;
	uint32_t size;
	uint32_t reserved1;
	uint64_t id;
	/* amd_queue_t */
	uint32_t caps;
	uint32_t reserved2[3];
	uint64_t write_dispatch_id; /* @56 */
	uint32_t group_segment_aperture_base_hi;
	uint32_t private_segment_aperture_base_hi;
	uint32_t max_cu_id;
	uint32_t max_wave_id;
	uint64_t max_legacy_doorbell_dispatch_id_plus_1; /* @80 */
	uint32_t legacy_doorbell_lock;
	uint32_t reserved3[9];
	uint64_t read_dispatch_id; /* @128 */
	uint8_t rest[120];
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct amd_queue, write_dispatch_id) == 56, "write @56");
_Static_assert(offsetof(struct amd_queue, read_dispatch_id) == 128, "read @128");
_Static_assert(sizeof(struct amd_queue) == 256, "amd_queue_t is 256 bytes");

static struct amd_queue **queues;
static size_t nqueues, capacity;

static void reply_new(size_t first, size_t n)
{
	printf("queues %zu %zu", first, n);
	for (size_t i = first; i < first + n; i++)
		printf(" 0x%" PRIxPTR, (uintptr_t)queues[i]);
	printf("\n");
}

static int add_queues(size_t n, uint64_t w, uint64_t r)
{
	if (nqueues + n > capacity) {
		size_t cap = (nqueues + n) * 2;
		struct amd_queue **q = realloc(queues, cap * sizeof(*q));

		if (!q)
			return -1;
		queues = q;
		capacity = cap;
	}
	/* One block per queue, as ROCr allocates them: addresses are spread
	 * over the heap, not one array the reader could fetch in one go. */
	for (size_t i = 0; i < n; i++) {
		struct amd_queue *q;

		if (posix_memalign((void **)&q, 64, sizeof(*q)))
			return -1;
		memset(q, 0, sizeof(*q));
		q->id = nqueues;
		q->write_dispatch_id = w;
		q->read_dispatch_id = r;
		queues[nqueues++] = q;
	}
	return 0;
}

static void advance(struct amd_queue *q, uint64_t dw, uint64_t dr)
{
	/* What ROCr and the CP do: 64-bit stores another reader may see at
	 * any time. */
	__atomic_store_n(&q->write_dispatch_id, q->write_dispatch_id + dw, __ATOMIC_RELEASE);
	__atomic_store_n(&q->read_dispatch_id, q->read_dispatch_id + dr, __ATOMIC_RELEASE);
}

int main(void)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin)) {
		size_t n, i;
		uint64_t a = 0, b = 0;

		if (sscanf(line, "new %zu %" SCNu64 " %" SCNu64, &n, &a, &b) >= 1) {
			size_t first = nqueues;

			if (add_queues(n, a, b))
				printf("error out of memory\n");
			else
				reply_new(first, n);
		} else if (sscanf(line, "adv %zu %" SCNu64 " %" SCNu64, &i, &a, &b) == 3) {
			if (i >= nqueues) {
				printf("error no queue %zu\n", i);
			} else {
				advance(queues[i], a, b);
				printf("ok %" PRIu64 " %" PRIu64 "\n", queues[i]->write_dispatch_id,
				       queues[i]->read_dispatch_id);
			}
		} else if (sscanf(line, "advall %" SCNu64 " %" SCNu64, &a, &b) == 2) {
			for (i = 0; i < nqueues; i++)
				advance(queues[i], a, b);
			printf("ok\n");
		} else if (sscanf(line, "fenced %" SCNu64 " %" SCNu64, &a, &b) == 2) {
			long page = sysconf(_SC_PAGESIZE);
			struct amd_queue *q = mmap(NULL, page, PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (q == MAP_FAILED) {
				printf("error mmap\n");
			} else {
				q->write_dispatch_id = a;
				q->read_dispatch_id = b;
				if (mprotect(q, page, PROT_NONE))
					printf("error mprotect\n");
				else
					printf("fenced 0x%" PRIxPTR "\n", (uintptr_t)q);
			}
		} else if (strcmp(line, "hole\n") == 0) {
			long page = sysconf(_SC_PAGESIZE);
			void *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED || munmap(p, page))
				printf("error mmap\n");
			else
				printf("hole 0x%" PRIxPTR "\n", (uintptr_t)p + 56);
		} else if (strcmp(line, "pid\n") == 0) {
			printf("pid %d\n", (int)getpid());
		} else if (strcmp(line, "exit\n") == 0) {
			_exit(0);
		} else {
			printf("error unknown command\n");
		}
		fflush(stdout);
	}
	return 0;
}

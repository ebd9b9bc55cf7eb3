// SPDX-License-Identifier: GPL-2.0
/*
 * capbound CAPS PROGRAM [ARGS...]: runs PROGRAM as root with exactly the
 * capabilities CAPS (comma-separated: bpf, perfmon, sys_admin, sys_ptrace),
 * the way `docker run --cap-drop=ALL --cap-add=...` (and podman's) starts a
 * container's first process: every other capability leaves the bounding
 * set, so root's execve gets CAPS as its permitted and effective sets. The
 * guest has no container runtime; this is the capability half of the
 * deployment's least-privilege flags (deploy/README.md), for the sampler's
 * check against a process that holds every capability, as a container's
 * root processes do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <linux/capability.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38 /* v5.8 */
#endif
#ifndef CAP_BPF
#define CAP_BPF 39 /* v5.8 */
#endif

static const struct {
	const char *name;
	int cap;
} known[] = {
	{ "bpf", CAP_BPF },
	{ "perfmon", CAP_PERFMON },
	{ "sys_admin", CAP_SYS_ADMIN },
	{ "sys_ptrace", CAP_SYS_PTRACE },
};

int main(int argc, char **argv)
{
	unsigned long long keep = 0;
	char *caps, *name;

	if (argc < 3) {
		fprintf(stderr, "usage: capbound CAPS PROGRAM [ARGS...]\n");
		return 2;
	}
	caps = strdup(argv[1]);
	for (name = strtok(caps, ","); name; name = strtok(NULL, ",")) {
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(name, known[i].name) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			fprintf(stderr, "capbound: unknown capability '%s'\n", name);
			return 2;
		}
		keep |= 1ULL << known[i].cap;
	}
	free(caps);
	for (int cap = 0; cap < 64; cap++) {
		if (keep & (1ULL << cap))
			continue;
		/* EINVAL: past the kernel's last capability */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL) {
			perror("capbound: PR_CAPBSET_DROP");
			return 1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		perror("capbound: PR_CAP_AMBIENT_CLEAR_ALL");
		return 1;
	}
	execv(argv[2], argv + 2);
	perror("capbound: execv");
	return 127;
}

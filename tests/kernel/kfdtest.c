// SPDX-License-Identifier: GPL-2.0
/*
 * kfdtest: the guest side of the QEMU kernel tier (tests/kernel).
 *
 * Opens /dev/kfd (which creates this process's kfd_process), sends
 * AMDKFD_IOC_CREATE_QUEUE for a gpu_id that does not exist and
 * AMDKFD_IOC_DESTROY_QUEUE for a queue id that does not exist, then exits
 * (which releases the mm: kfd_process_notifier_release). There is no GPU in
 * the guest, so both ioctls must fail; the agent must see one failed create
 * (EINVAL) and one process exit, and no queue at all.
 *
 * Output: one "KFDTEST <step> ..." line per step. Exit 0 when every ioctl
 * behaved as expected, 1 otherwise.
 *
 * Build (static, no libc headers for drm/ in Debian's linux-libc-dev):
 *   gcc -O2 -static -I <shim with drm/drm.h> -o kfdtest kfdtest.c
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#define BAD_GPU_ID 0xbeefu
#define BAD_QUEUE_ID 1234u

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case EFAULT:
		return "EFAULT";
	case ENODEV:
		return "ENODEV";
	case EBADF:
		return "EBADF";
	case EPERM:
		return "EPERM";
	case ENOMEM:
		return "ENOMEM";
	case ENOTTY:
		return "ENOTTY";
	case EACCES:
		return "EACCES";
	default:
		return "other";
	}
}

int main(void)
{
	struct kfd_ioctl_get_version_args version;
	struct kfd_ioctl_create_queue_args create;
	struct kfd_ioctl_destroy_queue_args destroy;
	static unsigned char ring[4096] __attribute__((aligned(4096)));
	static unsigned long long rptr, wptr;
	int fd, rc, e, ok = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KFDTEST pid %d\n", (int)getpid());

	fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("KFDTEST open FAIL errno=%d (%s)\n", errno, strerror(errno));
		return 1;
	}
	printf("KFDTEST open ok fd=%d\n", fd);

	memset(&version, 0, sizeof(version));
	rc = ioctl(fd, AMDKFD_IOC_GET_VERSION, &version);
	e = rc ? errno : 0;
	printf("KFDTEST get_version rc=%d errno=%s version=%u.%u\n", rc, errname(e),
	       version.major_version, version.minor_version);
	if (rc != 0)
		ok = 0;

	memset(&create, 0, sizeof(create));
	create.ring_base_address = (unsigned long long)(unsigned long)ring;
	create.ring_size = sizeof(ring);
	create.read_pointer_address = (unsigned long long)(unsigned long)&rptr;
	create.write_pointer_address = (unsigned long long)(unsigned long)&wptr;
	create.gpu_id = BAD_GPU_ID;
	create.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	create.queue_percentage = 100;
	create.queue_priority = 7;
	rc = ioctl(fd, AMDKFD_IOC_CREATE_QUEUE, &create);
	e = rc ? errno : 0;
	printf("KFDTEST create_queue gpu_id=0x%x rc=%d errno=%s\n", BAD_GPU_ID, rc, errname(e));
	if (rc != -1 || e != EINVAL)
		ok = 0;

	memset(&destroy, 0, sizeof(destroy));
	destroy.queue_id = BAD_QUEUE_ID;
	rc = ioctl(fd, AMDKFD_IOC_DESTROY_QUEUE, &destroy);
	e = rc ? errno : 0;
	printf("KFDTEST destroy_queue queue_id=%u rc=%d errno=%s\n", BAD_QUEUE_ID, rc, errname(e));
	if (rc != -1)
		ok = 0;

	close(fd);
	printf("KFDTEST result %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

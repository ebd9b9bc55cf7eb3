// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled, never run: include/gpuq/kfd_uapi.h held to a simulator-tier
 * kernel's own include/uapi/linux/kfd_ioctl.h (run_sim_tier.sh, check
 * "uapi:<kernel>"), including the values bookworm's 6.1 header, which the
 * unit test has, lacks. GPUQ_KVER is the kernel's version as 100 * major +
 * minor: a value its series has must be in its header, so a check cannot
 * pass by its absence.
 */
#include "kfd_uapi_same.h"

#ifndef GPUQ_KVER
#error "GPUQ_KVER (100 * major + minor) is required"
#endif

/* KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: Linux 6.12 */
#if GPUQ_KVER >= 612
static_assert(KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID == GPUQ_KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID,
	      "KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID differs");
#endif

/* AMDKFD_IOC_CREATE_PROCESS: Linux 7.2 */
#if GPUQ_KVER >= 702
GPUQ_SAME_IOCTL(AMDKFD_IOC_CREATE_PROCESS, GPUQ_KFD_IOC_CREATE_PROCESS);
#endif

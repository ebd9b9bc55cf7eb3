/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Eviction and restore of one process's queues on one GPU (GPUQ_EV_EVICTION).
 * Included by gpuq.bpf.c.
 *
 *   evict_cpsch / evict_nocpsch      evict_process_queues_{cpsch,nocpsch}(dqm, qpd)
 *   restore_cpsch / restore_nocpsch  restore_process_queues_{cpsch,nocpsch}(dqm, qpd)
 *       Both bump/drop qpd->evicted; only its 0 -> 1 and 1 -> 0 transitions
 *       move queues, so only those are written. They also set the op slot,
 *       so the runlist/MES operations they run are attributed to them.
 *   evict_trigger    kfd_process_evict_queues(p, trigger): why (SVM, userptr,
 *                    TTM, suspend, CRIU). VM faults evict through
 *                    kfd_dqm_evict_pasid instead: trigger unknown.
 */
#ifndef GPUQ_EVICTION_BPF_H
#define GPUQ_EVICTION_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <gpuq/abi.h>
#include "attribution.bpf.h"
#include "eviction_events.bpf.h"

static __always_inline int handle_evict_entry(__u32 kind, struct device_queue_manager *dqm,
					      struct qcm_process_device *qpd)
{
	struct evict_call c = {};

	if (!kfd__sched_types_present())
		return 0;
	c.qpd = (__u64)qpd;
	owner_of(BPF_CORE_READ(qpd, pqm, process), &c.owner);
	c.gpu_id = kfd__dqm_gpu_id(dqm);
	c.kind = kind;
	c.evicted_before = BPF_CORE_READ(qpd, evicted);
	eviction_begin(&c);
	return 0;
}

static __always_inline int handle_evict_exit(int ret)
{
	struct qcm_process_device *qpd;
	__u32 tid = current_tid();
	struct evict_call *c;

	op_exit(ret);
	if (!kfd__sched_types_present())
		return 0;
	c = bpf_map_lookup_elem(&evict_calls, &tid);
	if (!c)
		return 0;
	qpd = (struct qcm_process_device *)c->qpd;
	eviction_emit(c, BPF_CORE_READ(qpd, evicted), BPF_CORE_READ(qpd, queue_count), ret);
	bpf_map_delete_elem(&evict_calls, &tid);
	return 0;
}

GPUQ_DQM_QPD_PROGRAMS(evict_process_queues_cpsch, fentry_evict_process_queues_cpsch,
		      kprobe_evict_process_queues_cpsch, fexit_evict_process_queues_cpsch,
		      kretprobe_evict_process_queues_cpsch, handle_evict_entry, GPUQ_EVICTION_EVICT,
		      handle_evict_exit)

GPUQ_DQM_QPD_PROGRAMS(evict_process_queues_nocpsch, fentry_evict_process_queues_nocpsch,
		      kprobe_evict_process_queues_nocpsch, fexit_evict_process_queues_nocpsch,
		      kretprobe_evict_process_queues_nocpsch, handle_evict_entry,
		      GPUQ_EVICTION_EVICT, handle_evict_exit)

GPUQ_DQM_QPD_PROGRAMS(restore_process_queues_cpsch, fentry_restore_process_queues_cpsch,
		      kprobe_restore_process_queues_cpsch, fexit_restore_process_queues_cpsch,
		      kretprobe_restore_process_queues_cpsch, handle_evict_entry,
		      GPUQ_EVICTION_RESTORE, handle_evict_exit)

GPUQ_DQM_QPD_PROGRAMS(restore_process_queues_nocpsch, fentry_restore_process_queues_nocpsch,
		      kprobe_restore_process_queues_nocpsch, fexit_restore_process_queues_nocpsch,
		      kretprobe_restore_process_queues_nocpsch, handle_evict_entry,
		      GPUQ_EVICTION_RESTORE, handle_evict_exit)

/* ---- evict_trigger ----------------------------------------------------- */

SEC("fentry/kfd_process_evict_queues")
int BPF_PROG(fentry_kfd_process_evict_queues, void *p, __u32 trigger)
{
	return eviction_trigger_begin((__u64)p, trigger);
}

SEC("kprobe/kfd_process_evict_queues")
int BPF_KPROBE(kprobe_kfd_process_evict_queues, void *p, __u32 trigger)
{
	return eviction_trigger_begin((__u64)p, trigger);
}

GPUQ_EXIT_PROGRAMS(kfd_process_evict_queues, fexit_kfd_process_evict_queues,
		   kretprobe_kfd_process_evict_queues, eviction_trigger_end)

#endif /* GPUQ_EVICTION_BPF_H */

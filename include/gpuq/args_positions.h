/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Argument positions the args-kprobe tier (bpf/args_tier.bpf.h) reads, one
 * place for the BPF side and for the host test that checks each against the
 * amdgpu BTF of Debian 6.1 and 6.12 (tests/bpf/args_positions_test.cc).
 * Only arguments whose position is the same from 6.1 to 6.12 and in the
 * patches after it (docs/kfd-probe-points.md 1b) are used: not
 * pqm_create_queue (10, 9, then 8 arguments), not unmap_queues_cpsch's
 * arguments after filter (grace_period was inserted before reset).
 */
#ifndef GPUQ_ARGS_POSITIONS_H
#define GPUQ_ARGS_POSITIONS_H

/*
 * kfd_ioctl_{create,update}_queue, kfd_ioctl_create_process(struct file *filep,
 * struct kfd_process *p, void *data)
 */
#define GPUQ_ARG_IOCTL_FILE 0
#define GPUQ_ARG_IOCTL_PROCESS 1
#define GPUQ_ARG_IOCTL_DATA 2
/* kfd_procfs_add_queue(struct queue *q), uninit_queue(struct queue *q) */
#define GPUQ_ARG_QUEUE_Q 0
/* kfd_process_notifier_release(struct mmu_notifier *mn, struct mm_struct *mm) */
#define GPUQ_ARG_NOTIFIER_MM 1
/* create_queue_cpsch(dqm, q, qpd, ...), add_queue_mes(dqm, q, qpd) */
#define GPUQ_ARG_CREATE_DQM 0
#define GPUQ_ARG_CREATE_Q 1
#define GPUQ_ARG_CREATE_QPD 2
/* destroy_queue_cpsch(dqm, qpd, q) */
#define GPUQ_ARG_DESTROY_DQM 0
#define GPUQ_ARG_DESTROY_QPD 1
#define GPUQ_ARG_DESTROY_Q 2
/*
 * process_termination_*, evict_process_queues_*,
 * restore_process_queues_*(dqm, qpd)
 */
#define GPUQ_ARG_OP_DQM 0
#define GPUQ_ARG_OP_QPD 1
/* unmap_queues_cpsch(dqm, filter, ...), map_queues_cpsch(dqm) */
#define GPUQ_ARG_RUNLIST_DQM 0
#define GPUQ_ARG_RUNLIST_FILTER 1
/* kfd_ioctl(struct file *filep, unsigned int cmd, unsigned long arg): the dispatcher */
#define GPUQ_ARG_DISPATCH_FILE 0
/* kfd_release(struct inode *inode, struct file *filep): the file's release */
#define GPUQ_ARG_RELEASE_FILE 1
/* kfd_process_dequeue_from_all_devices(struct kfd_process *p) */
#define GPUQ_ARG_DEQUEUE_PROCESS 0
/* kfd_process_evict_queues(struct kfd_process *p, u32 trigger) */
#define GPUQ_ARG_EVICT_PROCESS 0
#define GPUQ_ARG_EVICT_TRIGGER 1

#endif /* GPUQ_ARGS_POSITIONS_H */

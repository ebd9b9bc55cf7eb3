// SPDX-License-Identifier: GPL-2.0
/*
 * Feature probes the hook planner (agent/loader/kernel_features.cc) runs
 * before it loads anything: can this kernel load and attach a trampoline
 * (fentry), a kprobe and a raw tracepoint, and do they fire? The agent sets
 * the targets at runtime (a vmlinux syscall function it then calls) and
 * reads the hit counters. Loaded one program at a time, so a refusal of one
 * kind says nothing about the others.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* Only the agent's own calls count: other processes may call it too. */
const volatile __u32 target_tgid = 0;

/* Hits per kind: [0] fentry, [1] kprobe, [2] raw tracepoint. */
__u64 hits[3] = {};

static __always_inline void hit(int kind)
{
	if ((bpf_get_current_pid_tgid() >> 32) == target_tgid)
		__sync_fetch_and_add(&hits[kind], 1);
}

SEC("fentry")
int BPF_PROG(probe_fentry)
{
	hit(0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(probe_kprobe)
{
	hit(1);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(probe_tracepoint, struct pt_regs *regs, long id)
{
	hit(2);
	return 0;
}

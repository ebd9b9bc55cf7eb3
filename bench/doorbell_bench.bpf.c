// SPDX-License-Identifier: GPL-2.0
/* The baseline of bench/doorbell_bench: a uprobe that does nothing, so the
 * benchmark can tell the cost of the trap from the cost of gpuq's body. */
#include <linux/bpf.h>
// after linux/bpf.h, which defines its types
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int empty_uprobe(void* ctx) { return 0; }

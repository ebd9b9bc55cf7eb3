# shellcheck shell=sh
# The simulator tier's per-group check lists, read by both sides: the guest
# (sim/guest-init.sh, busybox sh, from /lib/kfd-sim/check_lists.sh) reports
# them and the host (run_sim_tier.sh) expects them, so the two cannot drift.
# A check the guest reports that the host does not expect fails, as does one
# expected and never reported.

# A runtime client group (rocr, rocr-6.4, ... in every probe tier): Debian's
# real ROCr on the null GPU forwarding to the simulator.
# shellcheck disable=SC2034 # read by the files that source this one
ROCR_CHECKS="start queues creates submissions pending drained doorbells destroys teardown stops"
# HIP and rocBLAS: hip_client's serve mode never destroys a stream, so there is
# no destroy ioctl before the exit and no destroys check (HIP 5.2.3 does
# destroy a stream's hardware queue at hipStreamDestroy and makes a new one
# later: the programs groups see that).
# shellcheck disable=SC2034
HIP_CHECKS="start queues creates submissions pending drained doorbells teardown stops"
# shellcheck disable=SC2034
ROCBLAS_CHECKS=$HIP_CHECKS
# The users' GPU_MAX_HW_QUEUES experiment (sim_check's
# max_hw_queues_scenario, beside the btf client runs).
# shellcheck disable=SC2034
MHQ_CHECKS="live report"
# The partitioned GPUs, each group with these checks (partitions: 8 MI300X
# in CPX mode, 64 KFD nodes; partitions-dpx: 4 in DPX mode, 8 nodes).
# shellcheck disable=SC2034
PART_CHECKS="reload queues gpu-info physical once"
# The programs group (the users' experiment with real HIP programs): one
# agent per probe tier, each with these checks.
# shellcheck disable=SC2034
PROG_TIERS="btf-fentry btf-kprobe args-kprobe tracepoint"
# shellcheck disable=SC2034
PROG_CHECKS="start live experiment experiment-7.2 doorbells teardown stops"

#!/usr/bin/env bash
# Partitioned GPUs on the null GPU at the KFD interface (kfd_nullgpu.c, an
# LD_PRELOAD standing for amdkfd; test only): an MI300X node in CPX mode
# (GPUQ_NULLGPU_GPUS=8xgfx942:cpx: 8 GPUs x 8 partitions = 64 KFD nodes)
# and in DPX mode (4xgfx942:dpx: 8 nodes), with Debian's ROCr 6.4.3 and
# 7.2.4 in the cached roots of rocm_stacks.sh. For each stack and mode:
#   - rocminfo lists one gfx942:sramecc+:xnack- agent per partition, in
#     node order, each with the PCI address (BDFID: bus << 8 | partition),
#     UUID (its physical GPU's unique_id) and CU count (the GPU's 304 split
#     over its partitions) that amdkfd gives a partition;
#   - rocr_client holds a queue on every partition (and ROCr its utility
#     queues), each with 1-5 packets the null CP consumed (the truth);
#   - gpuq-agent reads the same KFD sysfs (--sysfs-root on the null GPU's
#     tree, GPUQ_NULLGPU_SYSFS, whose proc/<pid>/queues/ lists the live
#     queues as amdkfd does; no KFD hook attaches on this host, so the
#     queues are the sysfs inventory's): --once's queues per partition and
#     its PHYSICAL GPUS rows (partitions, queues summed) equal the truth;
#     /metrics' gpuq_gpu_info joins each partition to its physical GPU
#     (gpu_partition_id, gpu_physical_index, gpu_physical_pci) as the
#     topology says, and gpuq_queues per gpu_id equals the truth;
#   - when the client has destroyed its queues and exited, its proc/<pid>
#     is gone and the live agent's gpuq_queues drop to 0.
# The simulator tier (tests/kernel/sim, group partitions) checks every
# lifecycle family per partition with the kernel's hooks.
# Usage: kfd_partitions_test.sh SRC AGENT KFDNULL_LIB
set -u
SRC=$1 AGENT=$2 LIB=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/doorbell_agent.sh" # metric_sum
use_background_cleanup
. "$SRC/tests/nullgpu/rocm_stacks.sh" # rocm_root, IN_ROOT
. "$SRC/tests/nullgpu/nullgpu_env.sh" # kfdnull_require, kfdnull_rocr_stack, truth_queues, truth_of
kfdnull_require "Partitioned GPUs" "$LIB"
[ -x "$AGENT" ] || {
  skip "gpuq-agent not built"
  summary
  exit 77
}

# rocminfo_gpus OUT: each GPU agent of rocminfo's output OUT, in agent
# order, as "ISA BDFID UUID CUS".
rocminfo_gpus() {
  awk 'function flush() { if (gpu) print isa, bdf, uuid, cus; gpu = 0; isa = "" }
    /^Agent [0-9]+/ { flush() }
    /^ +Uuid:/ { uuid = $2 }
    /^ +Device Type: +GPU/ { gpu = 1 }
    /^ +BDFID:/ { bdf = $2 }
    /^ +Compute Unit:/ { cus = $3 }
    /^ +Name: +amdgcn-amd-amdhsa--/ && isa == "" { isa = substr($2, 20) }
    END { flush() }' "$1"
}

# want_gpus GPUS PARTS: the same, as the null GPU presents GPUS MI300X of
# PARTS partitions each (null_gpus.h: GPU p on bus p + 1, the partition in
# the function bits; the GPU's unique_id; 304 CUs split evenly).
want_gpus() {
  local p part
  for p in $(seq 0 $(($1 - 1))); do
    for part in $(seq 0 $(($2 - 1))); do
      printf 'gfx942:sramecc+:xnack- %d GPU-%016x %d\n' $(((p + 1) * 256 + part)) \
        $((0x6e756c6c00000000 + p + 1)) $((304 / $2))
    done
  done
}

# wait_line FILE REGEX: up to 60 s for a line of FILE matching REGEX.
wait_line() {
  for _ in $(seq 600); do
    grep -qE "$2" "$1" 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}

STACKS=0
for stack in 6.4 7.2; do
  kfdnull_rocr_stack "$stack" kfdpart "$LIB" || continue
  for mode in cpx:8:8 dpx:4:2; do
    IFS=: read -r m gpus parts <<< "$mode"
    spec=${gpus}xgfx942:$m nodes=$((gpus * parts)) tag=$stack-$m
    PRE=(env "LD_PRELOAD=$D/libgpuq_kfdnull.so" "GPUQ_NULLGPU_GPUS=$spec" "GPUQ_NULLGPU_SYSFS=$D/sysfs-$m")

    # -- rocminfo: one agent per partition, as amdkfd presents partitions
    run_group "${IN_ROOT[@]}" "$R" "${PRE[@]}" rocminfo > "$TMP/ri-$tag.out" 2>&1
    got=$(rocminfo_gpus "$TMP/ri-$tag.out")
    want=$(want_gpus "$gpus" "$parts")
    [ "$RUN_RC" = 0 ] && [ "$got" = "$want" ] &&
      pass "ROCm $stack ($ROCM_VERSION), $spec: rocminfo lists $nodes gfx942:sramecc+:xnack- agents, each with its partition's PCI address, its GPU's UUID and $((304 / parts)) CUs (first $(head -1 <<< "$got" | cut -d' ' -f2-), last $(tail -1 <<< "$got" | cut -d' ' -f2-))" ||
      fail "ROCm $stack, $spec: rocminfo exit $RUN_RC, GPU agents differ" "$(diff <(echo "$want") <(echo "$got") | head -20)"

    # -- a queue on every partition, held while the agent looks
    cmds=$R$D/cmds-$m
    mkfifo "$cmds"
    mkdir -p "$R$D/ctl-$m"
    start_bg "${IN_ROOT[@]}" "$R" "${PRE[@]}" GPUQ_NULLGPU_TRUTH="$D/part-$m.%p" GPUQ_NULLGPU_CONTROL="$D/ctl-$m" \
      bash -c 'exec "$0" < "$1"' "$D/rocr_client" "$D/cmds-$m" > "$TMP/cl-$tag.out" 2>&1
    client=$BG_PID
    exec {feed}> "$cmds"
    for i in $(seq 0 $((nodes - 1))); do
      printf 'queue p%d %d 4096\nsubmit p%d %d\n' "$i" "$i" "$i" $((i % 5 + 1)) >&"$feed"
    done
    printf 'sync held\n' >&"$feed"
    wait_line "$TMP/cl-$tag.out" '^(SYNC held|BAD|EXIT)'
    # the null CP writes its truth now (the control directory's dump file)
    touch "$R$D/ctl-$m/dump"
    for _ in $(seq 600); do [ -e "$R$D/ctl-$m/dump" ] || break; sleep 0.1; done
    f=$(truth_of "$R$D" "part-$m")
    if ! grep -q '^SYNC held' "$TMP/cl-$tag.out" || grep -q '^BAD' "$TMP/cl-$tag.out" || [ -z "$f" ]; then
      fail "ROCm $stack, $spec: rocr_client did not hold a queue on every partition" "$(tail -20 "$TMP/cl-$tag.out")"
      exec {feed}>&-
      stop_bg "$client"
      continue
    fi
    cp "$f" "$TMP/truth-$tag"
    f=$TMP/truth-$tag
    bad=$(for i in $(seq 0 $((nodes - 1))); do
      line=$(truth_queues "$f" "node=$((i + 1)) .*owner=client ")
      [ "$(tv "$line" consumed) $(tv "$line" pending)" = "$((i % 5 + 1)) 0" ] || echo "p$i: $line"
    done)
    [ -z "$bad" ] && pass "ROCm $stack, $spec: a client queue on each of the $nodes partitions, the null CP consumed its 1-5 packets ($(sum "$f" owner=client consumed) in all), none pending; ROCr's own queues: $(truth_queues "$f" 'owner=rocr_internal' | grep -c 'live=1')" ||
      fail "ROCm $stack, $spec: client queues per partition differ from what it wrote" "$(head -5 <<< "$bad")"

    # the truth's live queues per partition ("gpu_id count", the node's
    # gpu_id from the null GPU's topology) and per physical GPU ("index pci
    # partitions count"); GPU p is on bus p + 1
    sys=$R$D/sysfs-$m
    want_nodes=$(for n in $(seq 1 $nodes); do
      echo "$(cat "$sys/kfd/topology/nodes/$n/gpu_id") $(truth_queues "$f" "node=$n .*live=1 " | wc -l)"
    done)
    want_phys=$(for p in $(seq 0 $((gpus - 1))); do
      printf '%d 0000:%02x:00 %d %d\n' "$p" $((p + 1)) "$parts" \
        "$(sed -n "$((p * parts + 1)),$(((p + 1) * parts))p" <<< "$want_nodes" | awk '{ s += $2 } END { print s }')"
    done)
    T=$TMP/sys-$tag # the agent's sysfs: the null GPU's KFD tree, the host's PMUs
    mkdir -p "$T/class/kfd"
    ln -s "$sys/kfd" "$T/class/kfd/kfd"
    ln -s "$sys/module" "$T/module"
    ln -s /sys/bus "$T/bus"
    ln -s /sys/kernel "$T/kernel"

    # -- --once: queues per partition and per physical GPU
    run_group timeout 120 "$AGENT" --once --interval 1s --no-runtime-lookup --sysfs-root "$T" > "$TMP/once-$tag.out" 2>&1
    got=$(sed -n '/^HARDWARE QUEUES/,/^live queues:/p' "$TMP/once-$tag.out" | awk 'NR > 2 && !/^live queues:/ { print $3, $4 + $5 + $6 }')
    [ "$RUN_RC" = 0 ] && [ "$got" = "$want_nodes" ] &&
      pass "ROCm $stack, $spec: --once's queues per partition (gpu_id) = the truth's live queues ($(awk '{ s += $2 } END { print s }' <<< "$got") on $nodes partitions)" ||
      fail "ROCm $stack, $spec: --once exit $RUN_RC, queues per partition differ" "$(diff <(echo "$want_nodes") <(echo "$got") | head; tail -5 "$TMP/once-$tag.out")"
    got=$(sed -n '/^PHYSICAL GPUS/,/^$/p' "$TMP/once-$tag.out" | awk 'NR > 2 && NF { print $1, $2, $3, $4 + $5 + $6 }')
    [ "$got" = "$want_phys" ] &&
      pass "ROCm $stack, $spec: --once's PHYSICAL GPUS: $gpus GPUs of $parts partitions, queues summed = the truth ($(tr '\n' ';' <<< "$got"))" ||
      fail "ROCm $stack, $spec: PHYSICAL GPUS differ" "$(diff <(echo "$want_phys") <(echo "$got"); sed -n '/^PHYSICAL GPUS/,/^$/p' "$TMP/once-$tag.out")"

    # -- the live agent: gpuq_gpu_info and gpuq_queues per partition
    port=$(free_port)
    start_bg "$AGENT" --sysfs-root "$T" --reconcile-interval 1s --no-runtime-lookup \
      --web.listen-address "127.0.0.1:$port" > /dev/null 2> "$TMP/agent-$tag.log"
    agent=$BG_PID
    URL=http://127.0.0.1:$port/metrics
    if wait_http "$URL" 100; then
      curl -s "$URL" > "$TMP/m-$tag.prom"
      got=$(grep '^gpuq_gpu_info{' "$TMP/m-$tag.prom" |
        sed -E 's/.*gpu_id="([0-9]+)".*gpu_partition_id="([0-9]+)",gpu_physical_index="([0-9]+)",gpu_physical_pci="([^"]*)".*[{,]pci="([^"]*)".*/\1 \2 \3 \4 \5/' | sort -n)
      want=$(for n in $(seq 1 $nodes); do
        p=$(((n - 1) / parts)) part=$(((n - 1) % parts))
        printf '%s %d %d 0000:%02x:00 0000:%02x:00.%d\n' "$(cat "$sys/kfd/topology/nodes/$n/gpu_id")" \
          "$part" "$p" $((p + 1)) $((p + 1)) "$part"
      done | sort -n)
      [ "$got" = "$want" ] &&
        pass "ROCm $stack, $spec: $nodes gpuq_gpu_info series, each partition joined to its physical GPU (gpu_partition_id, gpu_physical_index, gpu_physical_pci, pci) as the topology says" ||
        fail "ROCm $stack, $spec: gpuq_gpu_info differs" "$(diff <(echo "$want") <(echo "$got") | head)"
      got=$(grep '^gpuq_queues{' "$TMP/m-$tag.prom" | sed -E 's/.*gpu_id="([0-9]+)".* ([0-9]+)$/\1 \2/' |
        awk '{ s[$1] += $2 } END { for (g in s) print g, s[g] }' | sort -n)
      [ "$got" = "$(sort -n <<< "$want_nodes")" ] &&
        pass "ROCm $stack, $spec: /metrics' gpuq_queues per partition = the truth" ||
        fail "ROCm $stack, $spec: gpuq_queues per partition differ" "$(diff <(sort -n <<< "$want_nodes") <(echo "$got") | head)"
    else
      fail "ROCm $stack, $spec: the agent on the null GPU's sysfs does not serve /metrics" "$(cat "$TMP/agent-$tag.log")"
    fi

    # -- the client destroys its queues and exits: amdkfd's sysfs forgets it
    pid=$(sed -n 's/^READY \([0-9]*\) .*/\1/p' "$TMP/cl-$tag.out")
    for i in $(seq 0 $((nodes - 1))); do echo "destroy p$i" >&"$feed"; done
    printf 'shutdown\nexit\n' >&"$feed"
    exec {feed}>&-
    stop_bg_wait "$client" 30
    for _ in $(seq 50); do
      left=$(metric_sum 'gpuq_queues\{')
      [ "$left" = 0 ] && break
      sleep 0.2
    done
    [ "$STOP_RC" = 0 ] && grep -q '^OK hsa_shut_down' "$TMP/cl-$tag.out" && [ -n "$pid" ] &&
      [ ! -e "$sys/kfd/proc/$pid" ] && [ "$left" = 0 ] &&
      pass "ROCm $stack, $spec: the client destroyed its queues and exited 0; its proc/$pid is gone and the agent's gpuq_queues are 0" ||
      fail "ROCm $stack, $spec: client exit $STOP_RC, proc/$pid $([ -e "$sys/kfd/proc/$pid" ] && echo left || echo gone), agent's queues $left" "$(tail -5 "$TMP/cl-$tag.out")"
    stop_bg "$agent"
    [ "$STOP_RC" = 0 ] || fail "ROCm $stack, $spec: the agent exited $STOP_RC" "$(cat "$TMP/agent-$tag.log")"
  done
done
[ "$STACKS" = 0 ] && {
  summary
  exit 77
}
summary

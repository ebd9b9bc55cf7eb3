#!/usr/bin/env bash
# How many hardware queues does a HIP process create? Measured with the real
# HIP 5.2.3 on the null GPU (2 x gfx90a): `hip_client queues S` (S streams
# per GPU, a kernel on each, one copy each way) under each configuration;
# the counts are read from the null thunk's truth (every hsaKmtCreateQueue
# ROCr made, per node), printed as the table in README.md ("How many hardware
# queues does a HIP process create?") and written to OUT.
# Checked for every run, against the truth and without expected numbers: the
# program completes; every GPU got the same queues; the HIP queue count never
# shrinks with more streams; with GPU_MAX_HW_QUEUES=N it stays within N
# (+1 for the null stream's queue if HIP gives it one); SDMA queues are asked
# for exactly when SDMA is not disabled.
# Usage: queue_count_test.sh SRC NULLGPU_LIB HIP_CLIENT OUT
set -u
SRC=$1 LIB=$2 HIP=$3 OUT=${4:-/dev/null}
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
procs_init
. "$SRC/tests/nullgpu/nullgpu_env.sh"
nullgpu_require "$LIB" "$HIP"

STREAMS="1 2 4 8"
# per_gpu FILE OWNER: "n" if every node has n such queues, else "n1/n2/..."
per_gpu() {
  local c
  c=$(for n in 1 2; do truth_queues "$1" "owner=$2" | grep -c " node=$n "; done | sort -u | tr '\n' '/')
  echo "${c%/}"
}
table="| configuration | 1 stream | 2 streams | 4 streams | 8 streams |
|---|---|---|---|---|"
i=0
for cfg in "default" "GPU_MAX_HW_QUEUES=1" "GPU_MAX_HW_QUEUES=4" "GPU_MAX_HW_QUEUES=8" \
  "HSA_ENABLE_SDMA=0" "HSA_ENABLE_SDMA=0 GPU_MAX_HW_QUEUES=1"; do
  row="| \`$cfg\` |"
  prev=0
  for s in $STREAMS; do
    i=$((i + 1))
    envs=()
    [ "$cfg" = default ] || read -r -a envs <<< "$cfg"
    run_group "${NULLGPU[@]}" GPUQ_NULLGPU_GPUS=2xgfx90a GPUQ_NULLGPU_TRUTH="$TMP/q$i.%p" "${envs[@]}" \
      "$HIP" queues "$s" > "$TMP/q$i.out" 2>&1
    f=$(ls "$TMP"/q$i.[0-9]* 2> /dev/null | head -1)
    if [ "$RUN_RC" != 0 ] || [ -z "$f" ]; then
      fail "$cfg, $s streams: exit $RUN_RC" "$(tail -5 "$TMP/q$i.out")"
      row="$row failed |"
      continue
    fi
    hip=$(per_gpu "$f" client) internal=$(per_gpu "$f" rocr_internal)
    sdma=$(sed -n 's/.*sdma_refused=\([0-9]*\).*/\1/p' "$f")
    sdma_per_gpu=$((sdma / 2))
    ok=1
    case $hip$internal in */*) ok=0 ;; esac
    [ "$hip" -ge "$prev" ] 2> /dev/null || ok=0
    max=$(sed -n 's/.*GPU_MAX_HW_QUEUES=\([0-9]*\).*/\1/p' <<< "$cfg")
    [ -z "$max" ] || [ "$hip" -le $((max + 1)) ] || ok=0
    case $cfg in
      *HSA_ENABLE_SDMA=0*) [ "$sdma" = 0 ] || ok=0 ;;
      *) [ "$sdma" -gt 0 ] || ok=0 ;;
    esac
    if [ "$ok" = 1 ]; then
      pass "$cfg, $s streams: $hip HIP + $internal ROCr-internal compute queues per GPU, $sdma_per_gpu SDMA asked"
    else
      fail "$cfg, $s streams: HIP $hip, internal $internal, SDMA asked $sdma (previous HIP count $prev)" "$(cat "$f")"
    fi
    prev=${hip%%/*}
    cell="$hip + $internal"
    [ "$sdma_per_gpu" -gt 0 ] && cell="$cell + ${sdma_per_gpu} SDMA"
    row="$row $cell |"
  done
  table="$table
$row"
done
printf '%s\n' "$table" | tee "$OUT"
summary

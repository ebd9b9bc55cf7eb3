#!/usr/bin/env bash
# How many hardware queues does a HIP process create? Measured with the real
# HIP 5.2.3 on the null GPU (2 x gfx90a): `hip_client queues S` (S streams
# per GPU, a kernel on each, one copy each way) under each configuration;
# the counts are read from the null thunk's truth (every hsaKmtCreateQueue
# ROCr made, per node), printed as the 5.2.3 rows of the table in docs/user-guide.md
# ("How many hardware queues does a HIP process create?"; kfd_hip_test.sh
# measures the 6.4.3 and 7.2.4 rows) and written to OUT; docs/user-guide.md's 5.2.3
# rows must be these (a difference fails).
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
# HIP's version as the table names it (5.2.3 from Debian's 5.2.3-8)
V=$(dpkg-query -W -f '${Version}' libamdhip64-5 2> /dev/null)
V=${V%%[-+]*}
[ -n "$V" ] || V=5
head="| HIP | configuration | 1 stream | 2 streams | 4 streams | 8 streams |"
table="$head
|---|---|---|---|---|---|"
i=0
for cfg in "default" "GPU_MAX_HW_QUEUES=1" "GPU_MAX_HW_QUEUES=2" "GPU_MAX_HW_QUEUES=4" "GPU_MAX_HW_QUEUES=8" \
  "HSA_ENABLE_SDMA=0" "HSA_ENABLE_SDMA=0 GPU_MAX_HW_QUEUES=1"; do
  row="| $V | \`$cfg\` |"
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
readme=$(grep -F -x -A 100 -- "$head" "$SRC/docs/user-guide.md" | sed '/^$/q' | sed '/^$/d')
want=$(grep -F "| $V |" <<< "$table") have=$(grep -F "| $V |" <<< "$readme")
[ "$want" = "$have" ] && pass "docs/user-guide.md's queue table rows for HIP $V = the measurement" ||
  fail "docs/user-guide.md's queue table rows for HIP $V differ from the measurement (regenerate: $OUT)" "$(diff <(echo "$have") <(echo "$want"))"
summary

#!/bin/sh
# `report` against `--once --replay` on the same capture, side by side in one
# run: the generated `scale` captures the report issue measures (403,308
# records: 300 containers, 3000 queues, churn 200000; 1,011,008 records: 1000
# containers, 10000 queues, churn 500000). Each command runs RUNS times,
# alternated; the median wall time and the largest RSS (GNU time) are kept.
# Prints, per capture: its size compressed by `record` against raw, once's
# time and RSS, each report format's, the
# throughput ratio once/report (1.0: as fast as a replay) and RSS ratios.
# Usage: report_bench.sh [BUILD_DIR]   (RUNS=3 by default)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${BUILD_DIR:-$root/build}}
agent=$build/gpuq-agent gen=$build/gpuq-gen-capture
runs=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "report_bench: needs GNU time (Debian: time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# measure NAME CMD...: appends "NAME seconds kilobytes" to $tmp/raw.
measure() {
  name=$1
  shift
  /usr/bin/time -f "$name %e %M" -a -o "$tmp/raw" "$@" > /dev/null
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for size in "300 200000" "1000 500000"; do
  set -- $size
  cap=$tmp/scale-$1.gpuqcap
  "$gen" --scenario scale --containers "$1" --churn "$2" -o "$cap" > "$tmp/gen.log" 2>&1
  : > "$tmp/raw"
  i=0
  while [ $i -lt "$runs" ]; do
    measure once "$agent" --once --replay "$cap"
    for f in text json perfetto; do measure "$f" "$agent" report -o "$f" "$cap"; done
    i=$((i + 1))
  done
  "$agent" record --replay "$cap" -o "$tmp/zst.gpuqcap" > /dev/null 2>&1
  echo "== compressed (record's zstd) / raw: $(stat -c %s "$tmp/zst.gpuqcap") / $(stat -c %s "$cap") bytes = $(awk -v z="$(stat -c %s "$tmp/zst.gpuqcap")" -v r="$(stat -c %s "$cap")" 'BEGIN { printf "%.3f", z / r }')"
  echo "== $(sed -n 's/.*: \([0-9]* records\).*/\1/p' "$tmp/gen.log"), $1 containers, churn $2, $(du -m "$cap" | cut -f1) MB; median of $runs"
  once_s=$(awk '$1 == "once" { print $2 }' "$tmp/raw" | median)
  once_kb=$(awk '$1 == "once" { print $3 }' "$tmp/raw" | sort -n | tail -1)
  text_s=$(awk '$1 == "text" { print $2 }' "$tmp/raw" | median)
  printf "%-16s %8s s %8s MB\n" "--once" "$once_s" "$((once_kb / 1024))"
  for f in text json perfetto; do
    s=$(awk -v f="$f" '$1 == f { print $2 }' "$tmp/raw" | median)
    kb=$(awk -v f="$f" '$1 == f { print $3 }' "$tmp/raw" | sort -n | tail -1)
    awk -v f="$f" -v s="$s" -v kb="$kb" -v os="$once_s" -v okb="$once_kb" -v ts="$text_s" 'BEGIN {
      printf "%-16s %8s s %8d MB   once/report %.2f   /text %.2f   RSS/once %.2f\n",
        "report " f, s, kb / 1024, (s > 0 ? os / s : 0), (ts > 0 ? s / ts : 0), kb / okb }'
  done
done

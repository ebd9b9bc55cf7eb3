#!/bin/sh
# A capture ten times a memory limit, replayed and reported under that limit
# (`ulimit -v`): captures are read as a stream (sources/capture_stream.h), so
# memory follows the live state and the analysis, not the file. Generates a
# `scale` capture (100 containers, 1000 live queues, churn sized to pass ten
# times the limit), then runs `--once --replay` and `report` under the limit
# and prints, for each, its exit status, wall time and largest RSS (GNU
# time) beside the capture's size against the limit.
# Usage: stream_bench.sh [BUILD_DIR]   (LIMIT_MB=300 by default; the
# capture takes ten times that on /tmp's disk)
set -u
build=${1:-build}
agent=$build/gpuq-agent gen=$build/gpuq-gen-capture
limit_mb=${LIMIT_MB:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
for tool in "$agent" "$gen" /usr/bin/time; do
  [ -x "$tool" ] || { echo "stream_bench: $tool is missing (build first; GNU time: apt-get install time)" >&2; exit 1; }
done
# A record of this scenario is 96 bytes on average: two per churn step.
churn=$((limit_mb * 1024 * 1024 * 10 / 96 / 2 + 100000))
"$gen" --scenario scale --containers 100 --churn "$churn" -o "$tmp/big.gpuqcap" > "$tmp/gen.out" 2>&1 ||
  { cat "$tmp/gen.out" >&2; exit 1; }
size=$(stat -c %s "$tmp/big.gpuqcap")
limit_kb=$((limit_mb * 1024))
echo "== capture $((size / 1048576)) MB ($(sed -n 's/.*: \([0-9]* records\).*/\1/p' "$tmp/gen.out")), ulimit -v ${limit_mb} MB: capture/limit $(awk -v s="$size" -v l="$limit_kb" 'BEGIN { printf "%.1f", s / 1024 / l }')"
run() {
  name=$1
  shift
  (
    ulimit -v "$limit_kb"
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err"
    echo $? > "$tmp/rc"
  )
  rc=$(cat "$tmp/rc")
  set -- $(tail -n 1 "$tmp/time")
  printf '%-22s exit %s  %8.2f s  %6d MB RSS%s\n' "$name" "$rc" "$1" $(($2 / 1024)) \
    "$([ "$rc" = 0 ] || printf '  (%s)' "$(head -c 120 "$tmp/err")")"
}
run "--once --replay" "$agent" --once --replay "$tmp/big.gpuqcap" -o table
run "report" "$agent" report "$tmp/big.gpuqcap"
run "report -o json" "$agent" report -o json "$tmp/big.gpuqcap"

#!/usr/bin/env bash
# Shortest container life that is still named: one agent (--doorbells=uprobe
# on the stand-in libhsa-runtime64), then `podman run --rm` containers that
# ring 5 doorbells and live for LIFE seconds more, each LIFE tried ROUNDS
# times; prints the label each one's doorbells ended up under (name, short
# id or unresolved). Root, podman (tests/lib/podman_env.sh setup), a build.
# Usage: bench/short_lived_attribution.sh BUILD_DIR [ROUNDS] [LIFE...]
set -u
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
shift 2 2> /dev/null || shift $#
LIVES=("$@")
[ ${#LIVES[@]} = 0 ] && LIVES=(2 1 0.5 0.2 0)
SRC=$(cd "$(dirname "$0")/.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$SRC/tests/lib/containers.conf}
LIB=$BUILD/tests/bpf/hsa_standin/libhsa-runtime64.so.1
CALLER=$BUILD/tests/bpf/hsa_standin/hsa_standin_caller
DIR=$(dirname "$LIB")
PORT=${PORT:-19210}
TMP=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; rm -rf "$TMP"' EXIT

podman system service --time=0 "unix://$TMP/p.sock" > /dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$TMP/p.sock" ] && break; sleep 0.1; done
"$BUILD/gpuq-agent" --doorbells=uprobe --hsa-runtime "$LIB" --sample-interval 1s \
  --runtime.docker-socket "$TMP/p.sock" --web.listen-address "127.0.0.1:$PORT" > /dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics" && break; sleep 0.1; done

printf '%-6s %-5s %-10s %s\n' LIFE_S ROUND RUN_S LABEL
for life in "${LIVES[@]}"; do
  for r in $(seq "$ROUNDS"); do
    name=gpuq-sl-bench-$$-$r-${life/./_}
    start=$(date +%s.%N)
    podman run --rm --name "$name" -v "$DIR:$DIR:ro" localhost/debian:bookworm-slim \
      sh -c "$CALLER dispatch=5 > /dev/null; sleep $life" > /dev/null 2>&1
    run_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    for _ in $(seq 50); do  # the next doorbell poll (1 s) and the name
      named=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -c "^gpuq_doorbells_total{container=\"$name\"")
      [ "$named" = 1 ] && break
      sleep 0.1
    done
    if [ "$named" = 1 ]; then
      out=name
    else
      out=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep '^gpuq_doorbells_total{' | grep -v 'container=""' |
        grep -vE 'container="gpuq-sl-bench-' | sed 's/.*container="\([^"]*\)".*/\1/' | sort -u | tr '\n' ' ')
      out="NOT named (other labels: ${out:-none})"
    fi
    printf '%-6s %-5s %-10.2f %s\n' "$life" "$r" "$run_s" "$out"
  done
done

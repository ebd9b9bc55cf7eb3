#!/usr/bin/env bash
# Short-lived containers keep their names: two real podman containers
# (`podman run --rm`) each ring doorbells through the stand-in
# libhsa-runtime64.so.1 for about 2 s and exit, and are removed. Three real
# agents watch: the daemon (/metrics), a live --once whose window covers the
# containers (its doorbell poll runs after they are gone), and `record`
# (whose capture is replayed). Every series of theirs must be under their
# names: never `unresolved` (cgroup ids first seen after the cgroup was
# removed resolve through the cgroup_mkdir watcher) and never the short id
# (names learned from podman's events stream when the containers start).
# `record` and a live --once need amdkfd (without it they exit 1 by design):
# on a host without it they are skipped with a message, and the capture path
# is covered by tests/unit/pipeline_runtime_test.cc (late metadata records).
# Usage: short_lived_podman_test.sh AGENT SRC CALLER LIB
set -u
AGENT=$1 SRC=$2 CALLER=$3 LIB=$4
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
export CONTAINERS_CONF=${CONTAINERS_CONF:-$SRC/tests/lib/containers.conf}
IMAGE=localhost/debian:bookworm-slim
PORT=19201
NAMES=(gpuq-sl-a-$$ gpuq-sl-b-$$)

if [ "$(id -u)" != 0 ]; then
  skip "short-lived podman containers: needs root (BPF, uprobes, podman)"
  summary
  exit 77
fi
if ! podman image exists "$IMAGE" 2> /dev/null; then
  skip "short-lived podman containers: podman or $IMAGE missing (tests/lib/podman_env.sh setup makes it)"
  summary
  exit 77
fi
remove_containers() {
  for n in "${NAMES[@]}"; do podman rm -f -t 0 "$n" > /dev/null 2>&1; done
}
trap 'remove_containers; cleanup_background' EXIT

SOCK=$TMP/podman.sock
podman system service --time=0 "unix://$SOCK" > "$TMP/service.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { fail "podman system service did not create $SOCK" "$(cat "$TMP/service.log")"; summary; exit 1; }

# --sample-interval 10s: the doorbell poll after the one at start runs once
# both containers are gone (they are done about 6 s in), so their cgroup ids
# are first seen after their cgroups were removed, and nothing scrapes or
# asks podman while they run.
COMMON=(--doorbells=uprobe --hsa-runtime "$LIB" --sample-interval 10s --runtime.docker-socket "$SOCK")
"$AGENT" "${COMMON[@]}" --web.listen-address "127.0.0.1:$PORT" > /dev/null 2> "$TMP/daemon.log" &
PIDS+=($!)
KFD=
[ -d /sys/class/kfd/kfd ] && KFD=yes
if [ -n "$KFD" ]; then
  "$AGENT" record -o "$TMP/run.gpuqcap" "${COMMON[@]}" > /dev/null 2> "$TMP/record.log" &
  RECORD=$!
  PIDS+=($RECORD)
  "$AGENT" --once --interval 15s --output json "${COMMON[@]}" > "$TMP/once.json" 2> "$TMP/once.log" &
  ONCE=$!
  PIDS+=($ONCE)
fi
URL=http://127.0.0.1:$PORT/metrics
if ! wait_http "$URL" 100; then
  fail "the daemon does not serve /metrics" "$(cat "$TMP/daemon.log")"
  summary
  exit 1
fi
m=$(curl -s "$URL")
grep -q '^gpuq_probe_attached{probe="cgroup_mkdir",mode="raw_tp",tier="tracepoint"} 1' <<< "$m" &&
  pass "the cgroup_mkdir raw tracepoint is attached" ||
  fail "cgroup_mkdir not attached" "$(grep -E 'cgroup|probe_attached' <<< "$m"; cat "$TMP/daemon.log")"
sleep 1 # the record and --once agents attach their probes meanwhile

# Each container: 20 rounds of 5 dispatch doorbells (a new process each
# round), 0.1 s apart: about 2 s, exactly 100 doorbells.
DIR=$(dirname "$LIB")
CALLER_DIR=$(dirname "$CALLER")
for n in "${NAMES[@]}"; do
  podman run --rm --name "$n" -v "$DIR:$DIR:ro" -v "$CALLER_DIR:$CALLER_DIR:ro" "$IMAGE" \
    sh -c "i=0; while [ \$i -lt 20 ]; do $CALLER dispatch=5 > /dev/null || exit 1; i=\$((i+1)); sleep 0.1; done" \
    > "$TMP/$n.out" 2>&1 &
  PIDS+=($!)
  CTR_PIDS+=($!)
done
for p in "${CTR_PIDS[@]}"; do
  wait "$p" || fail "a container failed" "$(cat "$TMP"/gpuq-sl-*.out)"
done
for n in "${NAMES[@]}"; do
  podman container exists "$n" 2> /dev/null && fail "$n was not removed (--rm)" || pass "$n ran and was removed"
done
[ "$(curl -s "$URL" | grep -c '^gpuq_doorbells_total{')" = 0 ] &&
  pass "no doorbell was polled while the containers existed (first seen after removal)" ||
  fail "doorbells were polled before the containers were gone: the test would not show late attribution" "$(curl -s "$URL" | grep '^gpuq_doorbells_total')"

# value SERIES-REGEX [TEXT]: the sum of matching samples in TEXT (/metrics),
# "absent" without any.
value() {
  local text
  if [ $# -ge 2 ]; then text=$2; else text=$(curl -s "$URL"); fi
  series_sum "$1 " "$text"
}
for _ in $(seq 200); do
  m=$(curl -s "$URL")
  [ "$(value "gpuq_doorbells_total\\{container=\"${NAMES[0]}\",[^}]*\\}" "$m")" = 100 ] &&
    [ "$(value "gpuq_doorbells_total\\{container=\"${NAMES[1]}\",[^}]*\\}" "$m")" = 100 ] && break
  sleep 0.1
done
for n in "${NAMES[@]}"; do
  got=$(value "gpuq_doorbells_total\\{container=\"$n\",[^}]*\\}" "$m")
  [ "$got" = 100 ] && pass "/metrics: the 100 doorbells of $n under its name" ||
    fail "/metrics: $got doorbells under container=\"$n\", want 100" "$(grep -E '^gpuq_(doorbell|container_info|cgroup)' <<< "$m")"
  grep -q "^gpuq_container_info{container=\"$n\",[^}]*name=\"$n\",runtime=\"podman\"" <<< "$m" &&
    pass "/metrics: gpuq_container_info names $n (podman)" ||
    fail "/metrics: no gpuq_container_info for $n" "$(grep '^gpuq_container_info' <<< "$m")"
done
# Every per-container series of the doorbell families: a name, or the host.
bad=$(grep -E '^gpuq_doorbell(s|_packets)_total\{' <<< "$m" | grep -vE "container=\"(${NAMES[0]}|${NAMES[1]}|)\"")
[ -z "$bad" ] && pass "/metrics: no doorbell series under unresolved or a short id" ||
  fail "/metrics: series not under a name" "$bad"
[ "$(value 'gpuq_cgroups_unresolved_total' "$m")" = 0 ] && pass "/metrics: gpuq_cgroups_unresolved_total 0" ||
  fail "/metrics: cgroups unresolved" "$(grep unresolved <<< "$m")"
[ "$(value 'gpuq_cgroup_events_lost_total' "$m")" = 0 ] && pass "/metrics: no cgroup event lost" ||
  fail "/metrics: cgroup events lost" "$(grep cgroup_events_lost <<< "$m")"

if [ -z "$KFD" ]; then
  skip "live --once and record on short-lived containers: they need amdkfd (/sys/class/kfd), this host has none"
  summary
  exit 0
fi
# --once: its window covered the containers; its last doorbell poll ran
# after both were removed.
if wait "$ONCE"; then
  pass "--once (live, 15 s window) exited 0"
else
  fail "--once failed" "$(cat "$TMP/once.log")"
fi
for n in "${NAMES[@]}"; do
  grep -q "\"container\": \"$n\"" "$TMP/once.json" && pass "--once: $n by name" ||
    fail "--once: $n missing" "$(grep -E '"container"' "$TMP/once.json" | sort | uniq -c)"
done
others=$(grep -E '"container": "' "$TMP/once.json" | grep -vE "\"container\": \"(${NAMES[0]}|${NAMES[1]}|)\"" | sort -u)
[ -z "$others" ] && pass "--once: no container label other than the two names and the host" ||
  fail "--once: other container labels" "$others"

# record -> replay: the capture names them (its container meta records).
kill -INT "$RECORD"
if wait "$RECORD"; then
  pass "record stopped cleanly on SIGINT"
else
  fail "record failed" "$(cat "$TMP/record.log")"
fi
run "$AGENT" --once --replay "$TMP/run.gpuqcap" --output prometheus
expect_rc "the capture replays" 0
for n in "${NAMES[@]}"; do
  got=$(value "gpuq_doorbells_total\\{container=\"$n\",[^}]*\\}" "$OUT")
  [ "$got" = 100 ] && pass "replay: the 100 doorbells of $n under its name" ||
    fail "replay: $got doorbells under $n, want 100" "$(grep -E '^gpuq_(doorbells_total|container_info)' <<< "$OUT")"
done
bad=$(grep -E '^gpuq_doorbell(s|_packets)_total\{' <<< "$OUT" | grep -vE "container=\"(${NAMES[0]}|${NAMES[1]}|)\"")
[ -z "$bad" ] && pass "replay: no doorbell series under unresolved or a short id" || fail "replay: series not under a name" "$bad"
summary

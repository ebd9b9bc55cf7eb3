#!/usr/bin/env bash
# --doorbells=uprobe end to end through the real agent binary: the daemon
# (live, degraded on a host without amdkfd) attaches its uprobes to the
# stand-in libhsa-runtime64.so.1, two ROCr-like callers ring doorbells, one in
# a docker-shaped cgroup, and /metrics must show exactly what they rang, per
# container and packet class, without their completion-signal stores.
# Usage: doorbell_agent_test.sh AGENT SRC CALLER LIB
set -u
AGENT=$1 SRC=$2 CALLER=$3 LIB=$4
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/doorbell_agent.sh"
use_background_cleanup

if [ "$(id -u)" != 0 ]; then
  skip "doorbell uprobes through the agent: needs root (uprobes, BPF)"
  summary
  exit 77
fi
UNIFIED=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup; do
  [ -f "$d/cgroup.procs" ] && [ "$(stat -f -c %T "$d")" = cgroup2fs ] && UNIFIED=$d && break
done
ID=$(printf 'd0e1%060d' $$)
CG=
if [ -n "$UNIFIED" ] && mkdir -p "$UNIFIED/docker/$ID" 2> /dev/null; then
  CG=$UNIFIED/docker/$ID
fi
cleanup_cgroup() { [ -n "$CG" ] && rmdir "$CG" "$UNIFIED/docker" 2> /dev/null; }
# Composes with the process cleanup (tests/lib/procs.sh): runs after the
# agent and the callers are stopped. (A plain `trap ... EXIT` here used to
# replace that cleanup and leave the agent running.)
on_exit cleanup_cgroup

start_doorbell_agent "$LIB" "to the --hsa-runtime library"

# Host process: 30 dispatches, 10 barriers, 2 vendor packets on 2 queues, 5
# completion stores, through all three store functions.
"$CALLER" dispatch=30 barrier=10 vendor=2 completions=5 queues=2 via=mix > "$TMP/host.out" 2>&1 ||
  fail "host caller failed" "$(cat "$TMP/host.out")"
# Container process: 7 dispatches, 3 completion stores.
if [ -n "$CG" ]; then
  (echo $BASHPID > "$CG/cgroup.procs" && exec "$CALLER" dispatch=7 completions=3) > "$TMP/ctr.out" 2>&1 ||
    fail "container caller failed" "$(cat "$TMP/ctr.out")"
fi

# value SERIES-REGEX: the sum of matching samples ("absent" without any).
value() { series_sum "$1 " "$(curl -s "$URL")"; }
want_total=42
[ -n "$CG" ] && want_total=49
for _ in $(seq 100); do
  [ "$(value 'gpuq_doorbells_total\{[^}]*\}')" = "$want_total" ] && break
  sleep 0.1
done
got=$(value 'gpuq_doorbells_total\{[^}]*\}')
[ "$got" = "$want_total" ] && pass "gpuq_doorbells_total sums to the $want_total doorbells rung (completion stores ignored)" ||
  fail "gpuq_doorbells_total sums to $got, want $want_total" "$(curl -s "$URL" | grep '^gpuq_doorbell')"
host=$(value 'gpuq_doorbells_total\{container="",[^}]*gpu_id="unknown"[^}]*\}')
[ "$host" = 42 ] && pass "host process: 42 doorbells, gpu_id unknown (no KFD queue learned here)" ||
  fail "host doorbells $host, want 42" "$(curl -s "$URL" | grep '^gpuq_doorbells_total')"
for class in kernel_dispatch:30 barrier:10 other:2; do
  got=$(value "gpuq_doorbell_packets_total\\{container=\"\",[^}]*packet_type=\"${class%%:*}\"[^}]*\\}")
  [ "$got" = "${class#*:}" ] && pass "host packet class ${class%%:*}: ${class#*:}" ||
    fail "host packet class ${class%%:*}: $got, want ${class#*:}"
done
if [ -n "$CG" ]; then
  ctr=$(value "gpuq_doorbells_total\\{container=\"${ID:0:12}\",[^}]*\\}")
  [ "$ctr" = 7 ] && pass "docker-shaped cgroup: 7 doorbells under container=\"${ID:0:12}\"" ||
    fail "container doorbells $ctr, want 7" "$(curl -s "$URL" | grep '^gpuq_doorbells_total')"
else
  skip "per-container doorbells: no writable cgroup v2 hierarchy here"
fi
dropped=$(value 'gpuq_events_dropped_total\{reason="doorbell_map_full"\}')
[ "$dropped" = 0 ] && pass "no doorbell lost to a full map" || fail "doorbell_map_full $dropped"
stop_bg "$AGENT_PID"
[ "$STOP_RC" = 0 ] && pass "the agent exits 0 on SIGTERM" || fail "the agent exited $STOP_RC on SIGTERM" "$(cat "$TMP/agent.log")"
summary

#!/usr/bin/env bash
# The process-leak check around a whole test run: every process the run
# started carries GPUQ_TEST_RUN=<id> in its environment (scripts/test.sh
# exports it before ctest; environments are inherited through setsid, nohup,
# podman's conmon, tmux servers, qemu), so whatever still carries it once
# the run is over was left behind. Processes of other runs on the same
# machine carry another id, or none, and are never judged.
#
#   survivors.sh ID [GRACE_SECONDS]
#
# Waits up to GRACE_SECONDS (5) for stragglers to finish exiting, then lists
# each survivor (pid, parent, command line) on stderr, stops it (SIGTERM,
# then SIGKILL) so nothing stays behind, and exits 1. Exit 0: none.
set -u
# This check and the commands it runs must not carry the marker themselves.
[ -n "${GPUQ_TEST_RUN:-}" ] && exec env -u GPUQ_TEST_RUN bash "$0" "$@"
ID=$1
GRACE=${2:-5}
[ -n "$ID" ] || { echo "survivors.sh: empty run id" >&2; exit 2; }

# Ancestors of this check (the test.sh that runs it): not survivors.
declare -A SELF=()
p=$$
while [ -n "$p" ] && [ "$p" != 0 ]; do
  SELF[$p]=1
  p=$(awk '{ print $4 }' "/proc/$p/stat" 2> /dev/null)
done

# survivors: pids (not zombies, not ours) whose environment holds the marker.
survivors() {
  local dir pid state
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    [ -n "${SELF[$pid]:-}" ] && continue
    [ "$pid" = "$BASHPID" ] && continue
    { read -r _ _ state _ < "$dir/stat"; } 2> /dev/null || continue
    [ "$state" = Z ] && continue
    { tr '\0' '\n' < "$dir/environ"; } 2> /dev/null | grep -qxF "GPUQ_TEST_RUN=$ID" && echo "$pid"
  done
}

left=$(survivors)
for _ in $(seq $((GRACE * 10))); do
  [ -z "$left" ] && break
  sleep 0.1
  left=$(survivors)
done
if [ -z "$left" ]; then
  echo "process-leak check: no process of this test run is left"
  exit 0
fi
echo "process-leak check: FAIL - processes started by this test run are still running:" >&2
for pid in $left; do
  echo "  pid $pid (parent $(awk '{ print $4 }' "/proc/$pid/stat" 2> /dev/null)): $({ tr '\0' ' ' < "/proc/$pid/cmdline"; } 2> /dev/null)" >&2
done
for pid in $left; do kill -TERM "$pid" 2> /dev/null; done
sleep 2
for pid in $left; do kill -KILL "$pid" 2> /dev/null; done
exit 1

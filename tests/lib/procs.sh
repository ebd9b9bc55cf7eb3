# shellcheck shell=bash
# Process and cleanup helpers for every shell test that starts processes
# (source after assert.sh). One EXIT trap, installed by procs_init, runs:
#   1. every process started with start_bg is stopped: SIGTERM to its whole
#      process group, SIGKILL to what is left after 5 s, then reaped;
#   2. the commands registered with on_exit, last registered first;
#   3. TMP (a fresh temp dir made by procs_init) is removed.
# The trap cannot be clobbered: `trap CMD EXIT` in a test that sourced this
# file is turned into `on_exit CMD` (the shell function below shadows the
# builtin for EXIT only), so a second cleanup composes with the first
# instead of replacing it. The script's exit status is kept.
#
#   procs_init                 set up PIDS, TMP and the trap (once; idempotent)
#   start_bg CMD [ARGS...]     CMD in the background in a process group of its
#                              own; BG_PID is its pid (and group id). Redirect
#                              the call: start_bg "$AGENT" ... > "$TMP/log" 2>&1
#   stop_bg PID                SIGTERM its group now, SIGKILL after 5 s, reap;
#                              STOP_RC is its exit status
#   run_group CMD [ARGS...]    CMD in the foreground, but in a process group
#                              of its own (stopped at exit if the script is
#                              interrupted meanwhile); RUN_RC is its status
#   on_exit CMD                run CMD (a string, eval'd) at exit

procs_init() {
  [ -n "${_PROCS_INIT:-}" ] && return 0
  _PROCS_INIT=1
  PIDS=()
  _ON_EXIT=()
  TMP=$(mktemp -d)
  builtin trap _procs_cleanup EXIT
  # A signal ends the script through the EXIT trap as well.
  builtin trap 'exit 143' TERM
  builtin trap 'exit 130' INT
}

on_exit() { _ON_EXIT+=("$*"); }

# trap: the builtin, except that EXIT (or 0) appends to the on_exit list.
trap() {
  if [ $# -ge 2 ]; then
    local cmd=$1 sig other=()
    shift
    for sig in "$@"; do
      case $sig in
        EXIT | 0) [ "$cmd" = - ] || [ -z "$cmd" ] || on_exit "$cmd" ;;
        *) other+=("$sig") ;;
      esac
    done
    [ ${#other[@]} -eq 0 ] || builtin trap "$cmd" "${other[@]}"
    return 0
  fi
  builtin trap "$@"
}

start_bg() {
  procs_init
  # setsid: a new session and process group, so stop_bg and the cleanup
  # reach everything CMD starts (a child of a background job of a
  # non-interactive shell is never a group leader, so setsid does not fork
  # and $! is CMD's own pid).
  setsid "$@" &
  BG_PID=$!
  PIDS+=("$BG_PID")
}

# _procs_alive PID: PID or a member of its process group is still running
# (zombies waiting to be reaped do not count).
_procs_alive() {
  local s
  for s in $(ps -o stat= --pgid "$1" 2> /dev/null) $(ps -o stat= -p "$1" 2> /dev/null); do
    [ "${s#Z}" = "$s" ] && return 0
  done
  return 1
}

stop_bg() {
  local pid=$1 i
  kill -TERM -- "-$pid" 2> /dev/null || kill -TERM "$pid" 2> /dev/null
  for i in $(seq 50); do
    _procs_alive "$pid" || break
    sleep 0.1
  done
  if _procs_alive "$pid"; then
    echo "procs.sh: pid $pid still running 5 s after SIGTERM: SIGKILL" >&2
    kill -KILL -- "-$pid" 2> /dev/null || kill -KILL "$pid" 2> /dev/null
  fi
  wait "$pid" 2> /dev/null
  STOP_RC=$?
  _procs_forget "$pid"
  return 0
}

# stop_bg_wait PID [SECONDS]: stop_bg once PID has ended by itself, or
# after SECONDS (10).
stop_bg_wait() {
  for _ in $(seq $((${2:-10} * 10))); do kill -0 "$1" 2> /dev/null || break; sleep 0.1; done
  stop_bg "$1"
}

run_group() {
  start_bg "$@"
  local pid=$BG_PID
  wait "$pid"
  RUN_RC=$?
  _procs_forget "$pid"
  return 0
}

_procs_forget() {
  local kept=() p
  for p in "${PIDS[@]}"; do [ "$p" != "$1" ] && kept+=("$p"); done
  PIDS=("${kept[@]}")
}

_procs_cleanup() {
  local rc=$? pid i
  builtin trap - EXIT TERM INT
  for pid in "${PIDS[@]}"; do
    kill -TERM -- "-$pid" 2> /dev/null || kill -TERM "$pid" 2> /dev/null
  done
  for pid in "${PIDS[@]}"; do
    for i in $(seq 50); do
      _procs_alive "$pid" || break
      sleep 0.1
    done
    _procs_alive "$pid" && kill -KILL -- "-$pid" 2> /dev/null
    _procs_alive "$pid" && kill -KILL "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
  done
  for ((i = ${#_ON_EXIT[@]} - 1; i >= 0; i--)); do
    eval "${_ON_EXIT[i]}" || true
  done
  [ -n "${TMP:-}" ] && rm -rf "$TMP"
  exit "$rc"
}

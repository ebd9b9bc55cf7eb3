#!/usr/bin/env bash
# SIGTERM and SIGINT stop the agent in every mode, promptly and cleanly: the
# process exits with status 0 before a generous deadline (5 s; the measured
# time is printed, the tight figure lives in docs/shutdown.md), and in the
# bpf tier every BPF program and link the agent held is gone afterwards.
# Usage: shutdown_test.sh AGENT SRC TIER [LIB]
#   TIER e2e: the replay daemon and the live daemon (degraded here without
#             amdkfd, or with its probes as root).
#   TIER bpf: as root, the live modes with probes: daemon with doorbell
#             uprobes on LIB (the stand-in libhsa-runtime64.so.1), --once
#             with a long --interval (and the uprobes), record (only where
#             amdkfd's hooks attach); bpftool must list none of the programs
#             and links each held once it has exited.
set -u
AGENT=$1 SRC=$2 TIER=$3 LIB=${4:-}
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
. "$SRC/tests/lib/procs.sh"
procs_init
CAP=$SRC/examples/default.gpuqcap
DEADLINE_S=5

# running PID: PID exists and is not a zombie.
running() {
  local state=""
  [ -r "/proc/$1/stat" ] || return 1
  read -r _ _ state _ < "/proc/$1/stat" 2> /dev/null || return 1
  [ "$state" != Z ]
}

# stop_timed NAME PID [SIGNAL]: sends SIGNAL (TERM), waits up to DEADLINE_S
# for the exit; checks exit status 0 and prints the measured time.
stop_timed() {
  local name=$1 pid=$2 sig=${3:-TERM} t0 t1 ms rc
  t0=$(date +%s%N)
  kill -"$sig" "$pid"
  while running "$pid" && [ $(($(date +%s%N) - t0)) -lt $((DEADLINE_S * 1000000000)) ]; do
    sleep 0.005
  done
  t1=$(date +%s%N)
  ms=$(((t1 - t0) / 1000000))
  if running "$pid"; then
    fail "$name: still running ${DEADLINE_S} s after SIG$sig" "$(cat "$TMP/$name.err" 2> /dev/null)"
    stop_bg "$pid"
    return 1
  fi
  stop_bg "$pid" # reaps it (already gone), STOP_RC is its status
  rc=$STOP_RC
  echo "stop-time $name SIG$sig ${ms} ms"
  if [ "$rc" = 0 ]; then
    pass "$name: exit 0, ${ms} ms after SIG$sig (deadline ${DEADLINE_S} s)"
  else
    fail "$name: exit $rc after SIG$sig, want 0" "$(cat "$TMP/$name.err" 2> /dev/null)"
  fi
}

# bpf_ids KIND PID: ids of the BPF objects (prog or link) PID holds open,
# from its fdinfo (prog_id: / link_id: lines): other agents running on this
# machine at the same time hold programs of the same names.
bpf_ids() {
  { cat /proc/"$2"/fdinfo/* ; } 2> /dev/null | awk -v k="$1_id:" '$1 == k { print $2 }' | sort -un | tr '\n' ' '
}

# check_released NAME KIND IDS: none of IDS (of KIND) exists any more. The
# kernel may free an object a moment after its last holder exits (bpf_link_put
# frees a link, and with it its program's reference, from a workqueue; CI once
# listed two doorbell programs that were gone by the next bpftool call), so
# the ids are given up to 3 s; one still there after that is a leak.
check_released() {
  local name=$1 kind=$2 ids=$3 id left try
  for try in $(seq 30); do
    left=""
    for id in $ids; do
      bpftool "$kind" show id "$id" > /dev/null 2>&1 && left="$left $id"
    done
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -z "$left" ]; then
    pass "$name: every BPF $kind it held is gone after exit ($(echo $ids | wc -w))"
  else
    fail "$name: BPF ${kind}s still loaded after exit:$left" "$(for id in $left; do bpftool "$kind" show id "$id"; done)"
  fi
}

# daemon NAME SIGNAL ARGS...: starts the daemon, waits for /metrics, stops it.
daemon() {
  local name=$1 sig=$2 port progs links
  shift 2
  port=$(free_port)
  start_bg "$AGENT" --web.listen-address "127.0.0.1:$port" --no-runtime-lookup "$@" \
    > /dev/null 2> "$TMP/$name.err"
  local pid=$BG_PID
  if ! wait_http "http://127.0.0.1:$port/metrics" 300; then
    fail "$name: does not serve /metrics" "$(cat "$TMP/$name.err")"
    return
  fi
  if [ "$TIER" = bpf ]; then
    progs=$(bpf_ids prog "$pid")
    links=$(bpf_ids link "$pid")
    if [ -n "$progs" ]; then
      pass "$name: holds BPF programs ($(echo $progs | wc -w)) and links ($(echo $links | wc -w)) while running"
    else
      fail "$name: pid $pid holds no BPF program" "$(cat "$TMP/$name.err")"
    fi
  fi
  stop_timed "$name" "$pid" "$sig" || return
  if [ "$TIER" = bpf ]; then
    check_released "$name" prog "$progs"
    check_released "$name" link "$links"
  fi
}

if [ "$TIER" = e2e ]; then
  daemon replay-daemon TERM --replay "$CAP"
  daemon replay-daemon-sigint INT --replay "$CAP"
  daemon live-daemon TERM
  summary
  exit
fi

if [ "$(id -u)" != 0 ]; then
  skip "live modes with probes: needs root (BPF, uprobes)"
  summary
  exit 77
fi
if ! command -v bpftool > /dev/null; then
  echo "bpftool missing: install Debian's bpftool package"
  exit 1
fi

daemon doorbell-daemon TERM --doorbells=uprobe --hsa-runtime "$LIB" --sample-interval 200ms

# once / record NAME ARGS...: started, given time to load, stopped.
oneshot() {
  local name=$1 ready=$2 progs="" links="" i
  shift 2
  start_bg "$AGENT" --no-runtime-lookup "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
  local pid=$BG_PID
  # Loaded when it holds links (or after 10 s: then the check below fails).
  for i in $(seq 100); do
    links=$(bpf_ids link "$pid")
    [ -n "$links" ] && break
    running "$pid" || break
    sleep 0.1
  done
  progs=$(bpf_ids prog "$pid")
  if [ -n "$progs" ]; then
    pass "$name: holds BPF programs ($(echo $progs | wc -w)) and links ($(echo $links | wc -w)) while running"
  else
    fail "$name: no BPF program held by pid $pid" "$(cat "$TMP/$name.err")"
  fi
  stop_timed "$name" "$pid" TERM || return
  if grep -qE "$ready" "$TMP/$name.out" "$TMP/$name.err"; then
    pass "$name: finished its work on SIGTERM (/$ready/)"
  else
    fail "$name: output lacks /$ready/" "$(cat "$TMP/$name.out" "$TMP/$name.err")"
  fi
  check_released "$name" prog "$progs"
  check_released "$name" link "$links"
}
# --once on the fixture host (KFD sysfs, no hooks here) with the doorbell
# uprobes: the window is cut short by SIGTERM and the snapshot printed.
# The fixture's sysfs (a KFD to snapshot), plus the mark of this kernel's
# uprobe PMU the doorbell poller looks for under the sysfs root.
mkdir -p "$TMP/sys"
cp -r "$SRC/tests/fixtures/root/sys/." "$TMP/sys/"
[ -e /sys/bus/event_source/devices/uprobe ] && mkdir -p "$TMP/sys/bus/event_source/devices/uprobe"
oneshot once-doorbells 'HARDWARE QUEUES' --once --sysfs-root "$TMP/sys" \
  --interval 60s --doorbells=uprobe --hsa-runtime "$LIB"
if [ -e /sys/class/kfd/kfd ]; then
  oneshot record 'wrote [0-9]+ records' record -o "$TMP/run.gpuqcap" --duration 60s
else
  skip "record stopped by SIGTERM: needs amdkfd's hooks to record from (no amdkfd on this kernel)"
fi
summary

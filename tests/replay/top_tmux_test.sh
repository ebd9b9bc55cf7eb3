#!/usr/bin/env bash
# `gpuq-agent top` on a real terminal: a detached tmux session of fixed size
# (a tmux server of its own, -L, so no other tmux is touched) runs top on the
# bundled capture; the pane's text is checked against examples/README.md's
# end state, then sort keys, a resize, Ctrl-C and `q`. Also: record's
# progress line on a terminal, and top without a terminal.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
CAP=$SRC/examples/default.gpuqcap
command -v tmux > /dev/null || { echo "skip: tmux is not installed (scripts/install-deps.sh --test)"; exit 77; }
tmp=$(mktemp -d)
SOCK=gpuq-tr-top-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2> /dev/null; rm -rf "$tmp"' EXIT

# start NAME WIDTH CMD: CMD in a new detached session; its exit status goes
# to $tmp/NAME.rc, and the pane stays (sleep) so its last screen can be read.
start() {
  tm new-session -d -x "$2" -y 40 -s "$1" \
    "TERM=screen $3; echo \$? > $tmp/$1.rc; sleep 600"
}
pane() { tm capture-pane -p -t "$1"; }
# wait_for NAME REGEX: the pane shows REGEX (gives up after 30 s).
wait_for() {
  for _ in $(seq 300); do
    pane "$1" | grep -qE -- "$2" && return 0
    sleep 0.1
  done
  return 1
}
check() { # check NAME REGEX DESCRIPTION
  if wait_for "$1" "$2"; then pass "$3"; else fail "$3: pane lacks /$2/" "$(pane "$1")"; fi
}
# line_of NAME REGEX: the first pane line matching REGEX (number).
line_of() { pane "$1" | grep -nE -- "$2" | head -1 | cut -d: -f1; }
# order NAME DESC RE1 RE2 RE3: the rows appear in this order.
order() {
  local a b c
  a=$(line_of "$1" "$3") b=$(line_of "$1" "$4") c=$(line_of "$1" "$5")
  if [ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && [ "$a" -lt "$b" ] && [ "$b" -lt "$c" ]; then
    pass "$2"
  else
    fail "$2 (lines $a $b $c)" "$(pane "$1")"
  fi
}
wait_rc() { # wait_rc NAME: prints the session's exit status once written
  for _ in $(seq 300); do
    [ -s "$tmp/$1.rc" ] && { cat "$tmp/$1.rc"; return 0; }
    sleep 0.1
  done
  echo none
}

# --- the capture's end state ------------------------------------------------
start top 132 "$AGENT top --replay $CAP --speed 20 --interval 200ms"
check top "replay finished" "the end of the replay is announced"
check top "probes: replay" "the header names the probe mode"
check top "live queues: 43" "43 live queues (examples/README.md)"
check top "^vllm +40 +24 +16 +0 +8 +[0-9]+\.[0-9] " \
  "vllm: 40 queues (24 compute, 16 SDMA), 8 processes, a submission rate"
check top "^\(host\) +3 +3 +0 +0 +2 " "host: 3 compute queues, one process on 2 GPUs"
check top "^trainer \(ml-train/trainer-0\) +0 +0 +0 +0 +0 " "trainer: no queue left"
check top "^  gpu 47101 +1 +1 " "the W7900 (gpu 47101) holds the host's queue"
check top "QUEUES\*" "the sort column is marked"
order top "sorted by queues: vllm, host, trainer" "^vllm " "^\(host\) " "^trainer "

# --- sort keys -----------------------------------------------------------------
check top "^vllm .* 12\.789( +[0-9]+)* *$" "vllm: its queues 12.789 s off the GPU after preemptions (OFF_S; HIGH_PRIO and CU_RESTRICTED may follow)"
tm send-keys -t top 6
check top "PREEMPT/S\*" "key 6 sorts by preemptions suffered per second"
tm send-keys -t top 7
check top "sort: NAME" "key 7 sorts by name"
order top "sorted by name: host, trainer, vllm" "^\(host\) " "^trainer " "^vllm "
tm send-keys -t top s
check top "sort: QUEUES" "s cycles from NAME back to QUEUES"
order top "back to queues: vllm, host, trainer" "^vllm " "^\(host\) " "^trainer "
tm send-keys -t top 4
check top "UNMAPS/S\*" "key 4 sorts by unmaps per second"

# --- resize ----------------------------------------------------------------------
check top "COMPUTE" "132 columns show COMPUTE"
tm resize-window -t top -x 60 -y 30
for _ in $(seq 300); do pane top | grep -q COMPUTE || break; sleep 0.1; done
if pane top | grep -q "COMPUTE"; then
  fail "60 columns: COMPUTE is left out" "$(pane top)"
else
  pass "60 columns: COMPUTE is left out"
fi
check top "UNMAPS/S\*" "60 columns keep the sort column"
longest=$(pane top | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
if [ "$longest" -le 60 ]; then pass "60 columns: no line is wider ($longest)"; else fail "a line of $longest columns on 60" "$(pane top)"; fi
tm resize-window -t top -x 132 -y 40
check top "COMPUTE" "back to 132 columns: COMPUTE again"

# --- q ------------------------------------------------------------------------------
tm send-keys -t top q
rc=$(wait_rc top)
if [ "$rc" = 0 ]; then pass "q quits with status 0"; else fail "q: status $rc" "$(pane top)"; fi

# --- Ctrl-C ends top too, with status 0 ------------------------------------------
start intr 100 "$AGENT top --replay $CAP --speed max"
check intr "replay finished" "--speed max plays the capture at once"
tm send-keys -t intr C-c
rc=$(wait_rc intr)
if [ "$rc" = 0 ]; then pass "Ctrl-C quits with status 0"; else fail "Ctrl-C: status $rc" "$(pane intr)"; fi

# --- record's progress line on a terminal ---------------------------------------
start rec 100 "$AGENT record --replay $CAP -o $tmp/p.cap -- sleep 3"
check rec "recording [0-9]+s, [0-9]+ events, [0-9]+ queues now" \
  "record shows its progress on a terminal"
rc=$(wait_rc rec)
if [ "$rc" = 0 ]; then pass "record -- sleep 3 returns 0"; else fail "record: status $rc" "$(pane rec)"; fi

# --- without a terminal ---------------------------------------------------------------
run "$AGENT" top --replay "$CAP"
expect_rc "top without a terminal" 1
expect_err "... says so in one line" "top needs a terminal; use --once for a snapshot"
run "$AGENT" top --replay "$CAP" --speed fast
expect_rc "a bad --speed" 2

summary

#!/usr/bin/env bash
# top's help screen, pause and replay clock on a real terminal: a detached
# tmux session of fixed size on a server of its own (-L), as
# top_tmux_test.sh does, running top on the generated 60 s deepseek8
# capture (a sample of every queue each second, so its events and clock
# keep moving) at the recorded pace. `?` lists every key and goes back
# (`?` or Esc); `p` and space freeze the rows while the replay goes on, so
# resuming shows more events and a later capture time at once; the capture
# time moves with the replay, in the wall time the capture was recorded at.
set -u
AGENT=$1 GEN=$2 SRC=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
command -v tmux > /dev/null || { echo "skip: tmux is not installed (scripts/install-deps.sh --test)"; exit 77; }
procs_init
SOCK=gpuq-tk-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
on_exit 'tm kill-server 2> /dev/null'

"$GEN" --scenario deepseek8 -o "$TMP/ds.gpuqcap" > /dev/null 2>&1 ||
  { fail "gpuq-gen-capture --scenario deepseek8"; summary; exit 1; }

# start NAME CMD: CMD in a new detached session of 132x40; its exit status
# goes to $TMP/NAME.rc, and the pane stays so its last screen can be read.
start() {
  tm new-session -d -x 132 -y 40 -s "$1" \
    "TERM=screen $2; echo \$? > $TMP/$1.rc; sleep 600"
}
pane() { tm capture-pane -p -t "$1"; }
wait_for() { # wait_for NAME REGEX: the pane shows REGEX (gives up after 30 s)
  for _ in $(seq 300); do
    pane "$1" | grep -qE -- "$2" && return 0
    sleep 0.1
  done
  return 1
}
gone() { # gone NAME REGEX: the pane stops showing REGEX (30 s at most)
  for _ in $(seq 300); do
    pane "$1" | grep -qE -- "$2" || return 0
    sleep 0.1
  done
  return 1
}
check() { # check NAME REGEX DESCRIPTION
  if wait_for "$1" "$2"; then pass "$3"; else fail "$3: pane lacks /$2/" "$(pane "$1")"; fi
}
check_gone() { # check_gone NAME REGEX DESCRIPTION
  if gone "$1" "$2"; then pass "$3"; else fail "$3: pane still shows /$2/" "$(pane "$1")"; fi
}
events() { pane "$1" | grep -oE 'events: [0-9]+' | grep -oE '[0-9]+'; }
into() { pane "$1" | grep -oE '[0-9]+\.[0-9]+ s of' | cut -d' ' -f1; }

start top "$AGENT top --replay $TMP/ds.gpuqcap --speed 1 --interval 200ms"
check top "probes: replay" "top runs on the capture"
check top "\? help +q quits" "the title line points at the help"

# --- the replay clock ---------------------------------------------------------------
clock_re='^capture time: 2023-11-14T22:1[34]:[0-9]{2}\.[0-9]{3}Z +[0-9]+\.[0-9]{3} s of 60\.000 s +speed 1x$'
check top "$clock_re" "the capture's time is shown: wall time, seconds into the capture of 60, the speed"
check top "^capture time: .* [1-9][0-9]*\.[0-9]{3} s of" "... and it moves as the capture plays"
t1=$(into top)
sleep 1.2
t2=$(into top)
if awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(b - a >= 0.8 && b - a <= 2.5) }'; then
  pass "the clock advances with the replay at --speed 1 ($t1 s, then $t2 s 1.2 s later)"
else
  fail "the clock went from $t1 s to $t2 s in 1.2 s" "$(pane top)"
fi

# --- help ----------------------------------------------------------------------------
tm send-keys -t top '?'
check top "^gpuq-agent top: keys" "? shows the help"
for key in '1 \.\. 7 +sort by QUEUES' 's +next sort key' 'p, space +pause' \
  '\?, Esc +this help' 'q, Q +quit' 'Ctrl-C +quit'; do
  check top "^  $key" "the help lists /$key/"
done
if pane top | grep -q "CONTAINER/GPU"; then fail "the help still shows the rows" "$(pane top)"; else pass "the help replaces the rows"; fi
tm send-keys -t top '?'
check top "CONTAINER/GPU" "? again goes back to the rows"
check_gone top "top: keys" "... and the help is gone"
tm send-keys -t top '?'
check top "^gpuq-agent top: keys" "? shows the help again"
tm send-keys -t top Escape
check top "CONTAINER/GPU" "Esc goes back to the rows too"

# --- pause -----------------------------------------------------------------------------
tm send-keys -t top p
check top "^PAUSED: rows frozen, events still read; p or space resumes" "p pauses, and the status line says so"
before=$(pane top)
e1=$(events top) t1=$(into top)
sleep 3
after=$(pane top)
if [ "$before" = "$after" ]; then
  pass "paused: the screen does not change for 3 s (events $e1, $t1 s into the capture)"
else
  fail "paused: the screen changed" "$(diff <(echo "$before") <(echo "$after"))"
fi
tm send-keys -t top 7
check top "sort: NAME" "a sort key still works while paused"
tm send-keys -t top ' '
check_gone top "PAUSED" "space resumes"
e2=$(events top) t2=$(into top)
if [ -n "$e1" ] && [ -n "$e2" ] && [ "$e2" -gt "$e1" ] &&
  awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(b - a >= 2) }'; then
  pass "the replay went on while paused: events $e1 -> $e2, $t1 s -> $t2 s at once"
else
  fail "after the pause: events $e1 -> $e2, $t1 s -> $t2 s" "$(pane top)"
fi
tm send-keys -t top ' '
check top "^PAUSED" "space pauses too"
tm send-keys -t top p
check_gone top "PAUSED" "p resumes"

tm send-keys -t top q
for _ in $(seq 300); do [ -s "$TMP/top.rc" ] && break; sleep 0.1; done
rc=$(cat "$TMP/top.rc" 2> /dev/null)
if [ "$rc" = 0 ]; then pass "q quits with status 0"; else fail "q: status ${rc:-none}" "$(pane top)"; fi
summary

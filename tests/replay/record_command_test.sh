#!/usr/bin/env bash
# `record -- COMMAND` and `record --container` through the real binary. The
# event source is the bundled capture (--replay): this host has no amdkfd;
# the simulator tier (tests/kernel/sim/guest-init.sh) runs the same around a
# driver process on the live probes. What this checks: the command's exit
# status comes back (0, 3, killed by a signal, not found, not executable),
# signals and --duration end the command and leave a capture that replays,
# and --container keeps one container.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
CAP=$SRC/examples/default.gpuqcap
tmp=$(mktemp -d)
BG=
cleanup() {
  if [ -n "$BG" ]; then
    for c in $(pgrep -P "$BG" 2>/dev/null); do kill -KILL "$c" 2>/dev/null; done
    kill -KILL "$BG" 2>/dev/null
    wait "$BG" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# replays NAME FILE QUEUES: FILE replays and ends with QUEUES live queues.
replays() {
  run "$AGENT" --once --replay "$2"
  if [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qx "live queues: $3"; then
    pass "$1: the capture replays ($3 live queues)"
  else
    fail "$1: the capture does not replay to $3 live queues (exit $RC)" "$ERR$OUT"
  fi
}

# --- the command's exit status ---------------------------------------------
run "$AGENT" record --replay "$CAP" -o "$tmp/ok.cap" -- true
expect_rc "record -- true" 0
replays "record -- true" "$tmp/ok.cap" 43
# --- how the capture is stored -------------------------------------------------
# zstd by default (its frame magic 28 b5 2f fd), the raw capture with
# --compress none (magic GPUQCAP1); both replay, and the compressed one is
# the smaller by far.
magic() { od -An -tx1 -N4 "$1" | tr -d ' \n'; }
if [ "$(magic "$tmp/ok.cap")" = 28b52ffd ]; then pass "record writes a zstd-compressed capture by default"; else fail "record's capture is not zstd: $(magic "$tmp/ok.cap")"; fi
run "$AGENT" record --replay "$CAP" --compress none -o "$tmp/raw.cap"
expect_rc "record --compress none" 0
if [ "$(head -c 8 "$tmp/raw.cap")" = GPUQCAP1 ]; then pass "--compress none writes the raw capture"; else fail "--compress none: not a raw capture"; fi
replays "--compress none" "$tmp/raw.cap" 43
raw_size=$(stat -c %s "$tmp/raw.cap") zst_size=$(stat -c %s "$tmp/ok.cap")
if [ $((zst_size * 4)) -lt "$raw_size" ]; then pass "compressed $zst_size bytes against $raw_size raw"; else fail "compressed $zst_size bytes against $raw_size raw: not a quarter"; fi
run "$AGENT" record --replay "$CAP" --compress xz -o "$tmp/xz.cap"
expect_rc "record --compress xz is refused" 2
expect_err "... naming the choices" "zstd,none"
head -c 40 "$tmp/ok.cap" > "$tmp/cut.cap"
run "$AGENT" --once --replay "$tmp/cut.cap"
expect_rc "a compressed capture cut in its first block" 1
expect_err "... says so in one line" "truncated: its zstd stream ends before the capture's header"
run "$AGENT" record --replay "$CAP" -o "$tmp/three.cap" -- sh -c 'exit 3'
expect_rc "record -- sh -c 'exit 3' returns 3" 3
expect_err "the command's status is said" "sh -c exit 3 exited with status 3"
replays "exit 3" "$tmp/three.cap" 43
run "$AGENT" record --replay "$CAP" -o "$tmp/sig.cap" -- sh -c 'kill -KILL $$'
expect_rc "a command killed by SIGKILL: 128+9" 137
run "$AGENT" record --replay "$CAP" -o "$tmp/none.cap" -- "$tmp/no-such-command" arg
expect_rc "a command that does not exist: 127 like a shell" 127
expect_err "... in one line naming it" "cannot run .*no-such-command: No such file"
replays "not found" "$tmp/none.cap" 43
run "$AGENT" record --replay "$CAP" -o "$tmp/noexec.cap" -- /dev/null
expect_rc "a command that cannot be executed: 126 like a shell" 126
run "$AGENT" record --replay "$CAP" -o "$tmp/args.cap" -- sh -c 'test "$1" = "a b"' sh "a b"
expect_rc "arguments reach the command unchanged" 0
if printf '%s\n' "$ERR" | grep -q "recording "; then
  fail "no progress line when stderr is not a terminal" "$ERR"
else
  pass "no progress line when stderr is not a terminal"
fi

# --- signals and --duration end the command; the capture is valid ----------
# start_bg FILE ARGS...: the agent in the background around `sleep 300`,
# once the sleep runs (it starts after the start state is written).
start_bg() {
  local out=$1
  shift
  "$AGENT" record --replay "$CAP" -o "$out" "$@" -- sleep 300 2> "$tmp/bg.err" &
  BG=$!
  for _ in $(seq 100); do
    pgrep -P "$BG" > /dev/null && return 0
    sleep 0.1
  done
  return 1
}
for sig in INT TERM; do
  if start_bg "$tmp/$sig.cap"; then
    kill -"$sig" "$BG"
    wait "$BG"
    RC=$? ERR=$(cat "$tmp/bg.err")
    BG=
    want=$((128 + $(kill -l "$sig")))
    expect_rc "SIG$sig to record: the command gets it and its status comes back" "$want"
    replays "SIG$sig" "$tmp/$sig.cap" 43
  else
    fail "SIG$sig: the command never started" "$(cat "$tmp/bg.err")"
  fi
done
run "$AGENT" record --replay "$CAP" -o "$tmp/dur.cap" --duration 1s -- sleep 300
expect_rc "--duration before the command ends: SIGTERM to it, its status" 143
replays "--duration" "$tmp/dur.cap" 43

# --- --container -------------------------------------------------------------
run "$AGENT" record --replay "$CAP" -o "$tmp/vllm.cap" --container vllm
expect_rc "record --container vllm" 0
replays "--container vllm" "$tmp/vllm.cap" 40
run "$AGENT" --once --replay "$tmp/vllm.cap"
if printf '%s\n' "$OUT" | grep -Eq '^(trainer|\(host\)) '; then
  fail "--container vllm keeps no other container's rows" "$OUT"
else
  pass "--container vllm keeps no other container's rows"
fi
expect_out "--container vllm keeps the GPU-wide runlist records" "^64512 +hws"
run "$AGENT" record --replay "$CAP" -o "$tmp/trainer.cap" --container trainer -- true
expect_rc "record --container trainer (Kubernetes name) -- true" 0
replays "--container trainer" "$tmp/trainer.cap" 0
run "$AGENT" --once --replay "$tmp/trainer.cap" --output wide
expect_out "--container trainer keeps the trainer" "^trainer +f14ff07ef228"
run "$AGENT" record --replay "$CAP" -o "$tmp/nosuch.cap" --container nosuch
expect_rc "a container that never appears is not an error" 0
expect_err "... but a warning at the end" "no records of container nosuch"
replays "--container nosuch" "$tmp/nosuch.cap" 0
run "$AGENT" record --replay "$CAP" -o "$tmp/x.cap" --container
expect_rc "--container without a value" 2

summary

#!/usr/bin/env bash
# --log.format on the real agent (docs/operations.md): in logfmt (the
# default) and in JSON, every stderr line of a run is one log line with ts,
# level and msg (tests/e2e/log_lines.py reads them as go-logfmt and a JSON
# reader would), whatever wrote it: warnings, errors, the listening line,
# record's results, libbpf's debug messages. stdout stays as it was. Usage
# errors are written before the flags are read: the plain line, exit 2.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
CAP=$SRC/examples/default.gpuqcap
FIXTURE=$SRC/tests/fixtures/root
PY=/usr/bin/python3
LINES=$SRC/tests/e2e/log_lines.py

# A capture cut inside its last record (replayed with --allow-truncated: a
# warning), a web config with no users (a warning), one whose user name
# holds an escape sequence and a carriage return (an error echoing them).
size=$(stat -c %s "$CAP")
head -c $((size - 50)) "$CAP" > "$TMP/cut.gpuqcap"
printf 'basic_auth_users: {}\n' > "$TMP/nousers.yml"
printf 'basic_auth_users:\n  "\\e[2Jroot\\rx": not-a-hash\n' > "$TMP/ctrl.yml"
mkdir -p "$TMP/bare/sys" "$TMP/bare/proc"

# valid FORMAT NAME FILE: every line of FILE is a FORMAT log line; their
# levels and messages go to $TMP/NAME.msgs.
valid() {
  local out
  if [ ! -s "$3" ]; then
    fail "$1 $2: nothing on stderr"
  elif out=$("$PY" "$LINES" "$1" "$3" "$TMP/$2.msgs"); then
    pass "$1 $2: all $(wc -l < "$3") stderr lines are $1 log lines"
  else
    fail "$1 $2: stderr lines that are not $1 log lines" "$out"
  fi
}
# said NAME LEVEL REGEX: a line of run NAME has LEVEL and a message
# matching REGEX.
said() {
  if grep -qE -- "^$2"$'\t'"$3" "$TMP/$1.msgs" 2> /dev/null; then
    pass "$1: $2 \"$3\""
  else
    fail "$1: no $2 line /$3/" "$(cat "$TMP/$1.msgs" 2> /dev/null)"
  fi
}

for format in logfmt json default; do
  flag=(--log.format "$format")
  [ "$format" = default ] && flag=()
  want=$format
  [ "$format" = default ] && want=logfmt

  # The daemon: warnings at start, the listening line, then SIGTERM.
  port=$(free_port)
  start_bg "$AGENT" "${flag[@]}" --replay "$TMP/cut.gpuqcap" --allow-truncated \
    --web.config.file "$TMP/nousers.yml" --web.listen-address "127.0.0.1:$port" \
    > "$TMP/daemon-$format.out" 2> "$TMP/daemon-$format.err"
  for _ in $(seq 100); do
    grep -q "serving /metrics on port $port" "$TMP/daemon-$format.err" && break
    sleep 0.1
  done
  stop_bg "$BG_PID"
  valid "$want" "daemon-$format" "$TMP/daemon-$format.err"
  said "daemon-$format" warn "capture $TMP/cut.gpuqcap is truncated at byte"
  said "daemon-$format" warn ".*nousers.yml has no basic_auth_users: /metrics is not protected"
  said "daemon-$format" info "serving /metrics on port $port \(127\.0\.0\.1:$port\)$"

  # An error that echoes control bytes: escaped once in the message (the
  # decoded msg has the text \x1b), never raw on the line.
  run "$AGENT" "${flag[@]}" --replay "$CAP" --web.config.file "$TMP/ctrl.yml"
  expect_rc "$format: a bad web config" 1
  printf '%s\n' "$ERR" > "$TMP/ctrl-$format.err"
  valid "$want" "ctrl-$format" "$TMP/ctrl-$format.err"
  said "ctrl-$format" error ".*the hash of user '\\\\x1b\[2Jroot\\\\x0dx' is not bcrypt"

  # A live --once without amdkfd: an error, exit 1 (not on a machine with
  # amdkfd, where the hooks may attach whatever the host root).
  if [ -e /sys/class/kfd/kfd ]; then
    skip "$format: --once without amdkfd: this machine has amdkfd"
  else
    run "$AGENT" "${flag[@]}" --once --host-root "$TMP/bare"
    expect_rc "$format: --once without amdkfd" 1
    printf '%s\n' "$ERR" > "$TMP/bare-$format.err"
    valid "$want" "bare-$format" "$TMP/bare-$format.err"
    said "bare-$format" error ".*--replay examples/default.gpuqcap"
  fi

  # record around a command: its two result lines.
  run "$AGENT" "${flag[@]}" record --replay "$CAP" -o "$TMP/rec.gpuqcap" -- sh -c 'exit 3'
  expect_rc "$format: record -- sh -c 'exit 3'" 3
  printf '%s\n' "$ERR" > "$TMP/record-$format.err"
  valid "$want" "record-$format" "$TMP/record-$format.err"
  said "record-$format" info "wrote [0-9]+ records to $TMP/rec.gpuqcap"
  said "record-$format" info "sh -c exit 3 exited with status 3"

  # Debug level on the fixture host: libbpf's own messages (as root; without
  # privileges, the warning that says so) and the agent's.
  run "$AGENT" "${flag[@]}" -v --once --host-root "$FIXTURE" --interval 100ms --no-runtime-lookup
  printf '%s\n' "$ERR" > "$TMP/debug-$format.err"
  valid "$want" "debug-$format" "$TMP/debug-$format.err"
done

# --log.level still filters; the listening line is written at every level.
port=$(free_port)
start_bg "$AGENT" --log.format json --log.level error --replay "$CAP" \
  --web.config.file "$TMP/nousers.yml" --web.listen-address "127.0.0.1:$port" \
  > /dev/null 2> "$TMP/quiet.err"
for _ in $(seq 100); do grep -q "serving /metrics" "$TMP/quiet.err" && break; sleep 0.1; done
stop_bg "$BG_PID"
valid json quiet "$TMP/quiet.err"
said quiet info "serving /metrics on port $port"
if grep -q "^warn" "$TMP/quiet.msgs"; then fail "--log.level error still wrote a warning" "$(cat "$TMP/quiet.err")"; else pass "--log.level error leaves the warning out"; fi

# stdout is the command's result, in either format the same.
run "$AGENT" --once --replay "$CAP"
plain=$OUT
run "$AGENT" --once --replay "$CAP" --log.format json
if [ "$OUT" = "$plain" ] && printf '%s\n' "$OUT" | grep -q '^HARDWARE QUEUES$' &&
  ! printf '%s\n' "$OUT" | grep -qE '^(ts=|\{"ts")'; then
  pass "--once's stdout is the same table under --log.format json"
else
  fail "--once's stdout changed with --log.format json" "$(diff <(echo "$plain") <(echo "$OUT") | head)"
fi

# Usage errors come before the format is known: the plain line, exit 2.
run "$AGENT" --log.format xml --once --replay "$CAP"
expect_rc "--log.format xml" 2
expect_err "... names the two formats" '^gpuq-agent: error: --log.format: xml not in \{logfmt,json\}'
run "$AGENT" --log.format json --interval soon --once --replay "$CAP"
expect_rc "a bad flag with --log.format json" 2
expect_err "... is the plain usage line" '^gpuq-agent: error: .*not a duration'
summary

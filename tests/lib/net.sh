# shellcheck shell=bash
# Loopback helpers for the shell tiers (source after assert.sh).

# free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_http URL [TRIES] [CURL ARGS...]: polls every 0.1 s until curl -f succeeds.
wait_http() {
  local url=$1 tries=${2:-100}
  shift 2 || shift $#
  for _ in $(seq "$tries"); do
    curl -sf -o /dev/null "$@" "$url" && return 0
    sleep 0.1
  done
  return 1
}

# use_background_cleanup: procs_init of tests/lib/procs.sh (PIDS, TMP, and
# the one EXIT trap that stops every start_bg process and runs on_exit).
use_background_cleanup() {
  . "$(dirname "${BASH_SOURCE[0]}")/procs.sh"
  procs_init
}

# bcrypt PASSWORD: a $2b$ hash (cost 10) from Debian's python3 crypt module
# (libxcrypt), else htpasswd (apache2-utils), as users would make one.
bcrypt() {
  local py=${PY:-/usr/bin/python3}
  if "$py" -W ignore -c 'import crypt' 2> /dev/null; then
    "$py" -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))' "$1"
  elif command -v htpasswd > /dev/null; then
    htpasswd -nbBC 10 x "$1" | cut -d: -f2
  fi
}

# start_serving NAME CMD [ARGS...]: CMD (the agent, or a wrapper that execs
# it) in the background with --web.listen-address on a free port (PORT,
# BASE) and --no-runtime-lookup, once it says where it serves; its output in
# $TMP/NAME.out and $TMP/NAME.err. Fails the test and returns 1 otherwise.
start_serving() {
  local name=$1
  shift
  PORT=$(free_port)
  BASE=http://127.0.0.1:$PORT
  start_bg "$@" --web.listen-address "127.0.0.1:$PORT" --no-runtime-lookup \
    > "$TMP/$name.out" 2> "$TMP/$name.err"
  for _ in $(seq 100); do
    grep -q "serving /metrics on port $PORT" "$TMP/$name.err" && return 0
    sleep 0.1
  done
  fail "$name: the agent does not serve" "$(cat "$TMP/$name.err")"
  return 1
}

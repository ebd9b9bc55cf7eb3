#!/usr/bin/env bash
# The recording API (docs/recording-api.md) on the real agent, over HTTP with
# curl and with `gpuq-agent record --from`: behind basic auth, one recording
# at a time, a capture that replays to the gauges the agent exported, a
# client that leaves mid-download, the API off, and a full disk. The agents
# replay captures (no amdkfd here); the simulator tier records through the
# API against a live agent and a workload (tests/kernel).
set -u
AGENT=$1 GEN=$2 SRC=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
CAP=$SRC/examples/default.gpuqcap
API=/api/v1/recordings

# start NAME CMD ARGS...: start_serving (PORT, BASE).
start() { start_serving "$@"; }

# call METHOD PATH [CURL ARGS...]: CODE and BODY of one request.
call() {
  local method=$1 path=$2
  shift 2
  CODE=$(curl -s --max-time 10 -o "$TMP/body" -w '%{http_code}' -X "$method" "$@" "$BASE$path")
  BODY=$(cat "$TMP/body" 2> /dev/null)
}
field() { python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(v)' "$1" <<< "$BODY"; }

# The gauges a capture of the agent's state must give back exactly. A
# series at 0 is the same as none: the agent keeps an idle container's
# (the trainer's, exited) until its grace ends; a capture of a window in
# which it did nothing does not hold it.
GAUGES='^gpuq_(queues|queues_by_priority|queues_cu_masked|unsampled_queues|queue_pending_packets|processes|sampled_queues|gpu_info)\{.* [1-9][0-9.e+]*$'

h=$(bcrypt secret)
if [[ ! $h =~ ^\$2[aby]\$ ]]; then
  skip "cannot make a bcrypt hash (Debian: python3, or apache2-utils)"
  summary
  exit
fi
printf 'basic_auth_users:\n  prom: %s\n' "$h" > "$TMP/auth.yml"
AUTH=(-u prom:secret)

# --- behind the web config -------------------------------------------------------
mkdir "$TMP/recs"
# A capture of an earlier run, larger than any socket buffer: listed, and
# downloaded below by a client that leaves half way.
"$GEN" --scenario scale --containers 300 --churn 200000 -o "$TMP/recs/20261201T000000Z.gpuqcap" > /dev/null
start auth "$AGENT" --replay "$CAP" --web.config.file "$TMP/auth.yml" \
  --recording.dir "$TMP/recs" || { summary; exit 1; }
call POST "$API"
[ "$CODE" = 401 ] && pass "starting without credentials: 401" || fail "no credentials: HTTP $CODE" "$BODY"
call POST "$API" -u prom:wrong
[ "$CODE" = 401 ] && pass "a wrong password: 401" || fail "wrong password: HTTP $CODE" "$BODY"
run "$AGENT" record --from "http://prom:wrong@127.0.0.1:$PORT" -o "$TMP/never.gpuqcap"
expect_rc "record --from with a wrong password fails" 1
expect_err "... in one line naming the 401" 'wrong or missing credentials \(401\)'
[ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && pass "... and nothing more" || fail "more than one line" "$ERR"
[ ! -e "$TMP/never.gpuqcap" ] && [ ! -e "$TMP/never.gpuqcap.part" ] &&
  pass "... leaving no file" || fail "a file was left"

call GET /metrics "${AUTH[@]}"
metrics_before=$BODY
call GET "$API" "${AUTH[@]}"
[ "$CODE" = 200 ] && [ "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["recordings"]))' <<< "$BODY")" = 1 ] &&
  pass "the earlier run's capture is listed" || fail "list: HTTP $CODE" "$BODY"

call POST "$API" "${AUTH[@]}"
[ "$CODE" = 201 ] && pass "POST $API starts a recording (201)" || fail "start: HTTP $CODE" "$BODY"
id=$(field id)
call POST "$API" "${AUTH[@]}"
if [ "$CODE" = 409 ] && grep -q "recording $id is running" <<< "$BODY"; then
  pass "a second recording at once: 409 naming the running one"
else
  fail "second start: HTTP $CODE" "$BODY"
fi
call GET "$API/$id/capture" "${AUTH[@]}"
[ "$CODE" = 409 ] && pass "downloading a running recording: 409" || fail "download while running: HTTP $CODE" "$BODY"
call POST "$API/$id/stop" "${AUTH[@]}"
[ "$CODE" = 200 ] && [ "$(field state)" = done ] && pass "stop: 200, done" || fail "stop: HTTP $CODE" "$BODY"
curl -s --max-time 10 -o "$TMP/api.gpuqcap" -D "$TMP/headers" "${AUTH[@]}" "$BASE$API/$id/capture"
grep -qi "^content-disposition: attachment; filename=\"$id.gpuqcap\"" "$TMP/headers" &&
  pass "the download is named $id.gpuqcap" || fail "download headers" "$(cat "$TMP/headers")"
cmp -s "$TMP/api.gpuqcap" "$TMP/recs/$id.gpuqcap" && pass "... and is the capture kept" || fail "download differs"

# The capture replays to the gauges the agent exports (its state at the start).
run "$AGENT" --once --replay "$TMP/api.gpuqcap" -o prometheus
expect_rc "the downloaded capture replays" 0
want=$(grep -E "$GAUGES" <<< "$metrics_before" | sort)
got=$(grep -E "$GAUGES" <<< "$OUT" | sort)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
  pass "its replay gives the agent's $(wc -l <<< "$want") gauge series exactly"
else
  fail "replay and agent differ" "$(diff <(echo "$want") <(echo "$got") | head -20)"
fi
run "$AGENT" report "$TMP/api.gpuqcap"
expect_rc "report reads it" 0
expect_out "... the 43 queues at start, none created" 'hardware queues +peak 43 .*at start 43, created 0'

# A client that leaves half way through a download.
curl -s --limit-rate 50k --max-time 2 -o /dev/null "${AUTH[@]}" "$BASE$API/20261201T000000Z/capture"
[ $? = 28 ] && pass "a slow client gave up half way" || fail "the download did not stop half way"
call GET /metrics "${AUTH[@]}"
[ "$CODE" = 200 ] && [ "$(grep -E "$GAUGES" <<< "$BODY")" = "$(grep -E "$GAUGES" <<< "$metrics_before")" ] &&
  pass "... /metrics still answers, the same" || fail "/metrics after the abandoned download: HTTP $CODE"
curl -s --max-time 30 -o "$TMP/whole.gpuqcap" "${AUTH[@]}" "$BASE$API/20261201T000000Z/capture"
cmp -s "$TMP/whole.gpuqcap" "$TMP/recs/20261201T000000Z.gpuqcap" &&
  pass "... and the next download is whole" || fail "the whole download differs"

# record --from: with --duration, and until Ctrl-C.
run "$AGENT" record --from "http://prom:secret@127.0.0.1:$PORT" --duration 1s -o "$TMP/from.gpuqcap"
expect_rc "record --from --duration 1s" 0
expect_err "... says what it wrote" "wrote [0-9]+ records to $TMP/from.gpuqcap \(recording [0-9TZ-]+: done, duration\)"
grep -q 'secret' <<< "$ERR" && fail "... and prints the password" "$ERR" || pass "... without the password"
run "$AGENT" --once --replay "$TMP/from.gpuqcap" -o prometheus
[ "$(grep -E "$GAUGES" <<< "$OUT" | sort)" = "$want" ] && pass "... a capture of the same state" ||
  fail "record --from's capture differs" "$(diff <(echo "$want") <(grep -E "$GAUGES" <<< "$OUT" | sort) | head)"
start_bg "$AGENT" record --from "http://prom:secret@127.0.0.1:$PORT" -o "$TMP/ctrl-c.gpuqcap" \
  > /dev/null 2> "$TMP/ctrl-c.err"
sleep 1.5
kill -INT "$BG_PID"
for _ in $(seq 100); do [ -e "/proc/$BG_PID" ] && [ "$(cut -d' ' -f3 "/proc/$BG_PID/stat")" != Z ] && sleep 0.1; done
stop_bg "$BG_PID"
[ "$STOP_RC" = 0 ] && grep -q 'done, stopped' "$TMP/ctrl-c.err" && [ -s "$TMP/ctrl-c.gpuqcap" ] &&
  pass "record --from until Ctrl-C stops and downloads" || fail "Ctrl-C: exit $STOP_RC" "$(cat "$TMP/ctrl-c.err")"
run "$AGENT" record --from "http://prom:secret@127.0.0.1:$PORT" --duration 0.5s --container vllm -o "$TMP/vllm.gpuqcap"
expect_rc "record --from --container vllm" 0
if [ "$(printf '%s\n' "$ERR" | grep -c 'no records of container')" = 0 ]; then
  pass "... its processes' queues are in it"
else
  fail "... said it had no records of vllm" "$ERR"
fi
run "$AGENT" record --from "http://prom:secret@127.0.0.1:$PORT" --duration 0.5s --container nosuch -o "$TMP/nosuch.gpuqcap"
expect_rc "record --from --container nosuch" 0
expect_err "... warns that it matched nothing" 'no records of container nosuch'
call GET /metrics "${AUTH[@]}"
[ "$(grep -E "$GAUGES" <<< "$BODY")" = "$(grep -E "$GAUGES" <<< "$metrics_before")" ] &&
  pass "the agent's gauges are as before every recording" || fail "the gauges changed"
call DELETE "$API/$id" "${AUTH[@]}"
[ "$CODE" = 204 ] && [ ! -e "$TMP/recs/$id.gpuqcap" ] && pass "DELETE removes it" || fail "delete: HTTP $CODE" "$BODY"
stop_bg "$BG_PID"

# --- the API is off unless asked for -----------------------------------------------
start off "$AGENT" --replay "$CAP" || { summary; exit 1; }
call POST "$API"
[ "$CODE" = 404 ] && pass "without --recording.dir: 404" || fail "API off: HTTP $CODE" "$BODY"
run "$AGENT" record --from "$BASE" -o "$TMP/off.gpuqcap"
expect_rc "record --from an agent without the API fails" 1
expect_err "... saying why" 'is the agent run with --recording.dir'
stop_bg "$BG_PID"
run "$AGENT" record --from "http://127.0.0.1:$PORT" -o "$TMP/gone.gpuqcap"
expect_rc "record --from nothing listening fails" 1
expect_err "... in one line" 'cannot start a recording: POST http://127.0.0.1:[0-9]+/api/v1/recordings\?*: .*'

# --- a full disk -------------------------------------------------------------------
# The recording directory on a 64 KiB tmpfs in a mount namespace of the
# agent's own; its start state (3000 queues) is larger.
"$GEN" --scenario scale --containers 300 -o "$TMP/scale.gpuqcap" > /dev/null
mkdir "$TMP/small"
if ! unshare -m true 2> /dev/null; then
  skip "full disk: unshare -m (a mount namespace, CAP_SYS_ADMIN) is not allowed here"
else
  start full unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$0" && exec "$@"' "$TMP/small" \
    "$AGENT" --replay "$TMP/scale.gpuqcap" --recording.dir "$TMP/small" || { summary; exit 1; }
  call POST "$API"
  [ "$CODE" = 201 ] && pass "full disk: the recording starts" || fail "full disk start: HTTP $CODE" "$BODY"
  fid=$(field id)
  for _ in $(seq 50); do
    call GET "$API/$fid"
    [ "$(field state)" != recording ] && break
    sleep 0.1
  done
  if [ "$(field state)" = failed ] && grep -q 'No space left on device' <<< "$(field reason)"; then
    pass "... ends failed: $(field reason | sed 's/.*: //')"
  else
    fail "full disk: not failed" "$BODY"
  fi
  grep -q "recording $fid ended.*No space left on device" "$TMP/full.err" &&
    pass "... logged" || fail "... not logged" "$(cat "$TMP/full.err")"
  curl -s --max-time 10 -o "$TMP/full.gpuqcap" "$BASE$API/$fid/capture"
  run "$AGENT" --once --replay "$TMP/full.gpuqcap" --allow-truncated -o json
  expect_rc "... its capture reads up to its last complete record" 0
  call GET /healthz
  [ "$CODE" = 200 ] && pass "... and the agent is healthy" || fail "healthz after a full disk: $CODE" "$BODY"
  call POST "$API"
  [ "$CODE" = 201 ] || [ "$CODE" = 507 ] && pass "... and answers the next start ($CODE)" ||
    fail "next start after a full disk: HTTP $CODE" "$BODY"
  stop_bg "$BG_PID"
fi
summary

#!/usr/bin/env bash
# The operator endpoints beside /metrics (docs/operations.md) on the real
# agent: the landing page at / and where its links lead; /healthz on a
# replay, live on the fixture host (the KFD sysfs inventory: ok) and live on
# a host without amdkfd (503 and why); basic auth on / as on /metrics but
# not on /healthz; all of it over TLS when the web config says so.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
CAP=$SRC/examples/default.gpuqcap
FIXTURE=$SRC/tests/fixtures/root

# start NAME ARGS...: the agent with ARGS (start_serving).
start() {
  local name=$1
  shift
  start_serving "$name" "$AGENT" "$@"
}

# get URL [CURL ARGS...]: one request; CODE (HTTP status, 000 when none),
# BODY and HEADERS.
get() {
  local url=$1
  shift
  CODE=$(curl -s --max-time 5 -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "$@" "$url")
  BODY=$(cat "$TMP/body" 2> /dev/null)
  HEADERS=$(tr -d '\r' < "$TMP/headers" 2> /dev/null)
}

# expect_get DESC CODE BODY_REGEX URL [CURL ARGS...]: "" for any body.
expect_get() {
  local desc=$1 want=$2 re=$3
  shift 3
  get "$@"
  if [ "$CODE" = "$want" ] && { [ -z "$re" ] || printf '%s\n' "$BODY" | grep -qE -- "$re"; }; then
    pass "$desc"
  else
    fail "$desc: HTTP $CODE, want $want with /$re/" "$BODY"
  fi
}

# --- a replay: the landing page and its links ----------------------------------
start replay --replay "$CAP" || { summary; exit 1; }
BASE=http://127.0.0.1:$PORT
get "$BASE/"
if [ "$CODE" = 200 ] && grep -qi '^content-type: text/html' <<< "$HEADERS"; then
  pass "/ is an HTML page"
else
  fail "/: HTTP $CODE" "$HEADERS"
fi
page=$BODY
for link in metrics healthz; do
  if grep -q "<a href=\"$link\">" <<< "$page"; then pass "/ links $link"; else fail "/ lacks a link to $link" "$page"; fi
done
# Where each link leads, resolved against / as a browser does.
hrefs=$(grep -o 'href="[^"]*"' <<< "$page" | cut -d'"' -f2)
[ -n "$hrefs" ] || fail "/ has no links" "$page"
for href in $hrefs; do
  get "$BASE/$href"
  if [ "$CODE" = 200 ]; then pass "the link $href answers 200"; else fail "the link $href: HTTP $CODE" "$BODY"; fi
done
expect_get "/metrics is still the exposition" 200 '^gpuq_queues\{' "$BASE/metrics"
expect_get "/healthz on a replay: ok" 200 '^ok$' "$BASE/healthz"
[ "$(printf '%s' "$BODY")" = ok ] && pass "/healthz says ok and nothing else" || fail "/healthz body" "$BODY"
expect_get "/healthz ignores a query string" 200 '^ok$' "$BASE/healthz?probe=kubelet"
# HEAD by hand: curl would not tell a body sent after the headers.
head=$(exec 3<> "/dev/tcp/127.0.0.1/$PORT" && printf 'HEAD / HTTP/1.0\r\n\r\n' >&3 && timeout 5 cat <&3 | tr -d '\r')
if grep -q '^HTTP/1.1 200 ' <<< "$head" && grep -q '^Content-Length: [1-9]' <<< "$head" &&
  [ "$(sed '1,/^$/d' <<< "$head")" = "" ]; then
  pass "HEAD / answers 200 with the length and without the body"
else
  fail "HEAD /" "$head"
fi
expect_get "POST /healthz is refused" 405 "" "$BASE/healthz" -X POST
grep -qi '^allow: GET, HEAD' <<< "$HEADERS" && pass "... naming the methods allowed" || fail "405 without Allow" "$HEADERS"
expect_get "another path is not found" 404 "" "$BASE/nope"
stop_bg "$BG_PID"

# --- live on the fixture host: no hook attaches here, KFD sysfs does --------------
start fixture --host-root "$FIXTURE" || { summary; exit 1; }
expect_get "/healthz live on the fixture host (KFD sysfs inventory): ok" 200 '^ok$' \
  "http://127.0.0.1:$PORT/healthz"
expect_get "... and its /metrics has the fixture's queues" 200 '^gpuq_queues\{' \
  "http://127.0.0.1:$PORT/metrics"
stop_bg "$BG_PID"

# --- live on a host without amdkfd: 503 and the reason ------------------------------
# (On a host with amdkfd the kernel hooks could attach whatever the host
# root says: then there is an event source.)
mkdir -p "$TMP/bare/sys" "$TMP/bare/proc"
if [ -e /sys/class/kfd/kfd ]; then
  skip "/healthz without any event source: this machine has amdkfd"
else
  start bare --host-root "$TMP/bare" || { summary; exit 1; }
  expect_get "/healthz without any event source: 503" 503 \
    "^no event source: no kernel hook is attached and amdkfd's sysfs \($TMP/bare/sys/class/kfd/kfd\) is absent$" \
    "http://127.0.0.1:$PORT/healthz"
  [ "$(printf '%s\n' "$BODY" | wc -l)" = 1 ] && pass "... in one line" || fail "the reason is not one line" "$BODY"
  expect_get "... while /metrics still serves the self-metrics" 200 '^gpuq_build_info' \
    "http://127.0.0.1:$PORT/metrics"
  expect_get "... and / the landing page" 200 'href="healthz"' "http://127.0.0.1:$PORT/"
  stop_bg "$BG_PID"
fi

# --- basic auth: on / as on /metrics, not on /healthz ---------------------------------
h=$(bcrypt secret)
if [[ ! $h =~ ^\$2[aby]\$ ]]; then
  skip "basic auth: cannot make a bcrypt hash (Debian: python3, or apache2-utils)"
else
  printf 'basic_auth_users:\n  prom: %s\n' "$h" > "$TMP/auth.yml"
  start auth --replay "$CAP" --web.config.file "$TMP/auth.yml" || { summary; exit 1; }
  BASE=http://127.0.0.1:$PORT
  expect_get "/ without credentials: 401" 401 "" "$BASE/"
  grep -q '^WWW-Authenticate: Basic realm="gpuq-agent"' <<< "$HEADERS" &&
    pass "... asking for basic auth" || fail "401 without the challenge" "$HEADERS"
  expect_get "/ with a wrong password: 401" 401 "" "$BASE/" -u prom:wrong
  expect_get "/ for an unknown user: 401" 401 "" "$BASE/" -u nobody:secret
  expect_get "/ with a header that is not base64: 401" 401 "" "$BASE/" -H 'Authorization: Basic !!!!'
  expect_get "/ with the password: the page" 200 'href="metrics"' "$BASE/" -u prom:secret
  expect_get "/metrics without credentials: 401, as before" 401 "" "$BASE/metrics"
  expect_get "/healthz needs no credentials (probes)" 200 '^ok$' "$BASE/healthz"
  stop_bg "$BG_PID"
fi

# --- TLS: the same three paths over HTTPS only ------------------------------------------
if ! command -v openssl > /dev/null; then
  skip "TLS: no openssl command (Debian: openssl)"
else
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$TMP/server.key" -out "$TMP/server.crt" 2> /dev/null
  {
    printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$TMP/server.crt" "$TMP/server.key"
    [ -f "$TMP/auth.yml" ] && cat "$TMP/auth.yml"
  } > "$TMP/tls.yml"
  start tls --replay "$CAP" --web.config.file "$TMP/tls.yml" || { summary; exit 1; }
  TLS=(--cacert "$TMP/server.crt")
  expect_get "/healthz over HTTPS: ok" 200 '^ok$' "https://127.0.0.1:$PORT/healthz" "${TLS[@]}"
  if [ -f "$TMP/auth.yml" ]; then
    expect_get "/ over HTTPS without credentials: 401" 401 "" "https://127.0.0.1:$PORT/" "${TLS[@]}"
    expect_get "/ over HTTPS with them: the page" 200 'href="healthz"' "https://127.0.0.1:$PORT/" "${TLS[@]}" -u prom:secret
  else
    expect_get "/ over HTTPS: the page" 200 'href="healthz"' "https://127.0.0.1:$PORT/" "${TLS[@]}"
  fi
  get "http://127.0.0.1:$PORT/healthz"
  [ "$CODE" != 200 ] && pass "/healthz is not served over plain HTTP on the TLS port ($CODE)" ||
    fail "/healthz answered over plain HTTP on the TLS port"
  stop_bg "$BG_PID"
fi
summary

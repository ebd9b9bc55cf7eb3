#!/usr/bin/env bash
# --web.config.file: basic auth on /metrics (bcrypt hashes, checked through
# libxcrypt), what the agent refuses (TLS, bad hashes, unknown keys), and a
# real Prometheus scraping with basic_auth.
# Usage: auth_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
use_background_cleanup
CAP=$SRC/examples/default.gpuqcap

h=$(bcrypt s3cret)
if [[ ! $h =~ ^\$2[aby]\$10\$ ]] || ! command -v curl > /dev/null; then
  skip "basic auth: cannot make a bcrypt hash or no curl (Debian: python3, or apache2-utils for htpasswd; curl)"
  summary
  exit
fi
# The same hash under the three prefixes bcrypt tools write.
h2y="\$2y${h:3}" h2a="\$2a${h:3}"
cat > "$TMP/web.yml" << YAML
# gpuq-agent web config (exporter-toolkit format)
basic_auth_users:
  prometheus: $h2y
  alice: '$h'   # quoted works too
  "bob": $h2a
YAML

port=$(free_port)
start_bg "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port" --web.config.file "$TMP/web.yml" \
  > /dev/null 2> "$TMP/agent.log"
for _ in $(seq 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 401 ] && break
  sleep 0.1
done
code() { curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "$@" "http://127.0.0.1:$port/metrics"; }
c=$(code)
if [ "$c" = 401 ]; then pass "no credentials: 401"; else fail "no credentials: $c, want 401" "$(cat "$TMP/agent.log")"; fi
if grep -qi '^WWW-Authenticate: Basic realm="gpuq-agent"' "$TMP/headers"; then
  pass "401 asks for Basic auth (realm gpuq-agent)"
else
  fail "no WWW-Authenticate header" "$(cat "$TMP/headers")"
fi
if ! grep -q gpuq_ "$TMP/body"; then pass "401 body holds no metrics"; else fail "metrics leaked with 401"; fi
c=$(code -u prometheus:wrong)
[ "$c" = 401 ] && pass "wrong password: 401" || fail "wrong password: $c, want 401"
c=$(code -u mallory:s3cret)
[ "$c" = 401 ] && pass "unknown user: 401" || fail "unknown user: $c, want 401"
c=$(code -u 'prometheus:s3cret ')
[ "$c" = 401 ] && pass "password with a trailing blank: 401" || fail "password + blank: $c, want 401"
for user in prometheus alice bob; do
  c=$(code -u "$user:s3cret")
  if [ "$c" = 200 ] && grep -q '^gpuq_queues{' "$TMP/body"; then
    pass "$user (hash prefix $(sed -n "s/^  \"*$user\"*: '*\(\$2.\).*/\1/p" "$TMP/web.yml")): 200 with the metrics"
  else
    fail "$user with the right password: $c, want 200"
  fi
done
c=$(code -u prometheus:wrong)
[ "$c" = 401 ] && pass "a wrong password after a right one: still 401" || fail "wrong after right: $c"

# A real Prometheus with basic_auth in its scrape config.
if command -v prometheus > /dev/null; then
  printf 's3cret' > "$TMP/password"
  prom_port=$(free_port)
  cat > "$TMP/prometheus.yml" << YAML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: gpuq-auth
    honor_labels: true
    basic_auth: {username: prometheus, password_file: $TMP/password}
    static_configs: [{targets: ['127.0.0.1:$port']}]
  - job_name: gpuq-noauth
    static_configs: [{targets: ['127.0.0.1:$port']}]
YAML
  start_bg prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
    --web.listen-address="127.0.0.1:$prom_port" > "$TMP/prometheus.log" 2>&1
  q() { curl -s -G --data-urlencode "query=$1" "http://127.0.0.1:$prom_port/api/v1/query" |
    "$PY" -c 'import json,sys
try: r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")
except Exception: print("none")'; }
  got=none
  for _ in $(seq 200); do
    got=$(q 'count(gpuq_queues{job="gpuq-auth"})')
    [ "$got" != none ] && break
    sleep 0.1
  done
  [ "$got" != none ] && pass "Prometheus with basic_auth scrapes the protected agent ($got gpuq_queues series)" ||
    fail "Prometheus with basic_auth got nothing" "$(tail -3 "$TMP/prometheus.log")"
  for _ in $(seq 100); do
    [ "$(q 'up{job="gpuq-noauth"}')" != none ] && break
    sleep 0.1
  done
  if [ "$(q 'up{job="gpuq-noauth"}')" = 0 ]; then
    pass "Prometheus without credentials: target down (401)"
  else
    fail "Prometheus without credentials is not refused"
  fi
else
  skip "Prometheus scrape with basic_auth: missing prometheus (Debian: prometheus)"
fi

# What the agent refuses: one line naming file and line, exit 1, nothing served.
refuse() { # NAME FILE-CONTENT REGEX
  printf '%s\n' "$2" > "$TMP/bad.yml"
  run "$AGENT" --replay "$CAP" --web.listen-address 127.0.0.1:0 --web.config.file "$TMP/bad.yml"
  if [ "$RC" = 1 ] && grep -qE -- "$3" <<< "$ERR" && [ "$(grep -c . <<< "$ERR")" = 1 ]; then
    pass "refused: $1 (exit 1, one line)"
  else
    fail "not refused as expected: $1 (exit $RC)" "$ERR"
  fi
}
refuse "a plain-text password" $'basic_auth_users:\n  alice: s3cret' "bad.yml:2: the hash of user 'alice' is not bcrypt"
refuse "a SHA-512 crypt hash" "$(printf 'basic_auth_users:\n  alice: %s' "$("$PY" -W ignore -c 'import crypt; print(crypt.crypt("x", crypt.METHOD_SHA512))' 2> /dev/null || echo '$6$x$y')")" \
  "not bcrypt"
refuse "an unknown key" $'basic_auth_user:\n  alice: x' "unknown key 'basic_auth_user'"
refuse "http_server_config" $'http_server_config:\n  http2: false' "http_server_config is not supported"
refuse "tab indentation" "$(printf 'basic_auth_users:\n\talice: %s' "$h")" "tabs cannot indent"
refuse "a user twice" "$(printf 'basic_auth_users:\n  alice: %s\n  alice: %s' "$h" "$h")" "user 'alice' appears twice"
refuse "a YAML alias" "$(printf 'basic_auth_users: &u\n  alice: %s\ntls_server_config: *u' "$h")" "bad.yml:3: YAML aliases are not supported"
run "$AGENT" --replay "$CAP" --web.config.file "$TMP/does-not-exist.yml"
expect_rc "missing web config file: a file that cannot be read" 1
expect_err "missing web config file is named" "does-not-exist.yml: cannot open it"

# The shipped example (user prometheus, password change-me).
port3=$(free_port)
start_bg "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port3" \
  --web.config.file "$SRC/deploy/web-config.example.yml" > /dev/null 2> "$TMP/agent3.log"
wait_http "http://127.0.0.1:$port3/metrics" 100 -u prometheus:change-me
c=$(curl -s -o /dev/null -w '%{http_code}' -u prometheus:change-me "http://127.0.0.1:$port3/metrics")
c0=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port3/metrics")
if [ "$c" = 200 ] && [ "$c0" = 401 ]; then
  pass "deploy/web-config.example.yml: 200 with its documented password, 401 without"
else
  fail "deploy/web-config.example.yml: $c with the password, $c0 without" "$(cat "$TMP/agent3.log")"
fi

# No users: served without auth, with a warning.
printf 'basic_auth_users: {}\n' > "$TMP/empty.yml"
port2=$(free_port)
start_bg "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port2" --web.config.file "$TMP/empty.yml" \
  > /dev/null 2> "$TMP/agent2.log"
if wait_http "http://127.0.0.1:$port2/metrics" 100 && grep -q 'has no basic_auth_users: /metrics is not protected' "$TMP/agent2.log"; then
  pass "no users: /metrics served unprotected, with a warning"
else
  fail "empty basic_auth_users" "$(cat "$TMP/agent2.log")"
fi
. "$SRC/tests/deploy/tls_checks.sh"
summary

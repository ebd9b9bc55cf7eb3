# TLS on /metrics (tls_server_config of --web.config.file), sourced by
# auth_test.sh after its basic-auth checks: uses its AGENT, SRC, CAP, TMP,
# PIDS, PY, refuse() and the net/assert helpers. A real OpenSSL client
# (curl) and a real Prometheus scrape the agent over HTTPS; certificates come
# from the openssl command line tool, as users make test certificates.

if ! command -v openssl > /dev/null || ! command -v curl > /dev/null; then
  skip "TLS on /metrics: missing openssl or curl (Debian: openssl, curl)"
  return 0
fi

T=$TMP/tls
mkdir -p "$T"
# make_ca NAME; make_cert CA NAME [SAN]: PEM files $T/NAME.{crt,key}.
make_ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" \
    -keyout "$T/$1.key" -out "$T/$1.crt" 2> /dev/null
}
make_cert() {
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$T/$2.key" -out "$T/$2.csr" 2> /dev/null
  printf '%s\n' "${3:-extendedKeyUsage=clientAuth}" > "$T/$2.ext"
  openssl x509 -req -in "$T/$2.csr" -CA "$T/$1.crt" -CAkey "$T/$1.key" -CAcreateserial \
    -days 2 -extfile "$T/$2.ext" -out "$T/$2.crt" 2> /dev/null
}
make_ca ca
make_ca other-ca
make_cert ca server 'subjectAltName=IP:127.0.0.1'
make_cert ca client
make_cert other-ca stranger
if [ ! -s "$T/server.crt" ] || [ ! -s "$T/client.crt" ] || [ ! -s "$T/stranger.crt" ]; then
  fail "TLS: openssl could not make the test certificates"
  return 0
fi

# start_tls NAME CONFIG: an agent serving the bundled capture with CONFIG as
# its web config (in $T, so relative paths resolve there); sets TLS_PORT.
start_tls() {
  printf '%s\n' "$2" > "$T/$1.yml"
  TLS_PORT=$(free_port)
  start_bg "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$TLS_PORT" \
    --web.config.file "$T/$1.yml" > /dev/null 2> "$T/$1.log"
  for _ in $(seq 100); do
    # Any TLS handshake, even one refused later, means it listens.
    curl -s -o /dev/null -k "https://127.0.0.1:$TLS_PORT/metrics"
    [ $? -ne 7 ] && break
    sleep 0.1
  done
}
# https ARGS...: status code of /metrics over TLS (000 = no HTTP answer).
https() {
  curl -s -o "$T/body" -w '%{http_code}' --cacert "$T/ca.crt" "$@" "https://127.0.0.1:$TLS_PORT/metrics"
}

# TLS plus basic auth, relative file names (resolved against the config's dir).
start_tls basic "$(printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: %s' "$h")"
c=$(https -u prometheus:s3cret)
if [ "$c" = 200 ] && grep -q '^gpuq_queues{' "$T/body"; then
  pass "HTTPS with the right password: 200 with the metrics (certificate verified against its CA)"
else
  fail "HTTPS with the right password: $c, want 200" "$(cat "$T/basic.log")"
fi
c=$(https)
[ "$c" = 401 ] && pass "HTTPS without credentials: 401" || fail "HTTPS without credentials: $c, want 401"
if grep -q "serving /metrics on port $TLS_PORT (https, " "$T/basic.log"; then
  pass "the agent says it serves HTTPS"
else
  fail "no 'https' in the start line" "$(cat "$T/basic.log")"
fi
plain=$(curl -s -m 5 -u prometheus:s3cret "http://127.0.0.1:$TLS_PORT/metrics")
if ! grep -q gpuq_ <<< "$plain"; then
  pass "plain HTTP on the TLS port serves nothing"
else
  fail "plain HTTP served the metrics on a TLS port"
fi
c=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/other-ca.crt" -u prometheus:s3cret "https://127.0.0.1:$TLS_PORT/metrics")
[ "$c" = 000 ] && pass "a client trusting another CA refuses the server" || fail "server accepted under the wrong CA: $c"
# Three scrapes in a row on one agent: civetweb must survive connections
# (the OpenSSL 3 crash this replaces happened on the first one).
ok=0
for _ in 1 2 3; do [ "$(https -u prometheus:s3cret)" = 200 ] && ok=$((ok + 1)); done
[ "$ok" = 3 ] && pass "three HTTPS scrapes in a row: 200 each" || fail "only $ok of 3 HTTPS scrapes answered 200"

# min_version TLS13: a TLS 1.2-only client is refused, a TLS 1.3 one served.
start_tls tls13 $'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS13'
c12=$(https --tls-max 1.2)
c13=$(https --tlsv1.3)
if [ "$c12" = 000 ] && [ "$c13" = 200 ]; then
  pass "min_version TLS13: a TLS 1.2 client is refused, TLS 1.3 gets 200"
else
  fail "min_version TLS13: TLS 1.2 client got $c12 (want 000), TLS 1.3 got $c13 (want 200)" "$(cat "$T/tls13.log")"
fi

# Mutual TLS.
start_tls mtls "$(printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt' "$T/server.crt" "$T/server.key")"
c_none=$(https)
c_good=$(https --cert "$T/client.crt" --key "$T/client.key")
c_bad=$(https --cert "$T/stranger.crt" --key "$T/stranger.key")
if [ "$c_none" = 000 ] && [ "$c_good" = 200 ] && [ "$c_bad" = 000 ]; then
  pass "RequireAndVerifyClientCert: no client certificate refused, one from the CA 200, one from another CA refused"
else
  fail "RequireAndVerifyClientCert: none $c_none (want 000), good $c_good (want 200), other CA $c_bad (want 000)" "$(cat "$T/mtls.log")"
fi
mtls_port=$TLS_PORT

# A real Prometheus over HTTPS: CA verification, and a client certificate.
if command -v prometheus > /dev/null; then
  start_tls prom "$(printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: %s' "$h")"
  printf 's3cret' > "$T/password"
  prom_port=$(free_port)
  cat > "$T/prometheus.yml" << YAML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: gpuq-tls
    scheme: https
    tls_config: {ca_file: $T/ca.crt}
    basic_auth: {username: prometheus, password_file: $T/password}
    static_configs: [{targets: ['127.0.0.1:$TLS_PORT']}]
  - job_name: gpuq-mtls
    scheme: https
    tls_config: {ca_file: $T/ca.crt, cert_file: $T/client.crt, key_file: $T/client.key}
    static_configs: [{targets: ['127.0.0.1:$mtls_port']}]
YAML
  start_bg prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
    --web.listen-address="127.0.0.1:$prom_port" > "$T/prometheus.log" 2>&1
  # q (auth_test.sh) asks the Prometheus at $prom_port.
  for job in gpuq-tls gpuq-mtls; do
    got=none
    for _ in $(seq 200); do
      got=$(q "count(gpuq_queues{job=\"$job\"})")
      [ "$got" != none ] && break
      sleep 0.1
    done
    [ "$got" != none ] && pass "Prometheus scrapes over HTTPS ($job: $got gpuq_queues series)" ||
      fail "Prometheus over HTTPS ($job) got nothing" "$(tail -3 "$T/prometheus.log")"
  done
else
  skip "Prometheus scrape over HTTPS: missing prometheus (Debian: prometheus)"
fi

# What the agent refuses: one line naming the file and line, exit 1.
cp "$T"/server.* "$T"/ca.crt "$TMP/"
tls_head=$'tls_server_config:\n  cert_file: server.crt'
refuse "TLS without key_file" "$tls_head" "bad.yml:1: tls_server_config needs cert_file and key_file"
refuse "TLS key that does not match the certificate" \
  "$tls_head"$'\n'"  key_file: $T/client.key" "bad.yml:1: TLS key_file .*client.key.*(mismatch|does not match)"
refuse "TLS certificate file missing" $'tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key' \
  "bad.yml:1: TLS cert_file .*nope.crt: "
refuse "TLS cipher_suites" "$tls_head"$'\n  key_file: server.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]' \
  "bad.yml:4: tls_server_config: 'cipher_suites' is not supported"
refuse "inline TLS key" "$tls_head"$'\n  key: secret' "inline 'key' is not supported"
refuse "an unknown client_auth_type" "$tls_head"$'\n  key_file: server.key\n  client_auth_type: Maybe' \
  "client_auth_type Maybe: not one of"
refuse "client verification without client_ca_file" \
  "$tls_head"$'\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert' \
  "RequireAndVerifyClientCert needs client_ca_file"
refuse "min_version TLS14" "$tls_head"$'\n  key_file: server.key\n  min_version: TLS14' "min_version TLS14: not supported"
refuse "tls_server_config twice" "$tls_head"$'\n  key_file: server.key\ntls_server_config:\n  cert_file: a' \
  "tls_server_config appears twice"

# Without its TLS shims next to it the agent says which file is missing.
mkdir -p "$T/bin"
cp "$AGENT" "$T/bin/gpuq-agent"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$T/server.crt" "$T/server.key" > "$T/noshim.yml"
run "$T/bin/gpuq-agent" --replay "$CAP" --web.listen-address 127.0.0.1:0 --web.config.file "$T/noshim.yml"
if [ "$RC" = 1 ] && grep -q "libgpuq-civetweb-crypto.so is not installed next to the agent" <<< "$ERR"; then
  pass "TLS without the shipped shims: exit 1 naming the missing library"
else
  fail "TLS without shims: exit $RC" "$ERR"
fi

#!/usr/bin/env bash
# /metrics under abuse, on loopback only: idle and half-sent connections,
# a burst of concurrent scrapers, huge headers, wrong passwords. A normal
# scrape must keep answering during and after, and the agent's open files
# and memory must come back near their baseline once the abusers are gone.
# Every loop is bounded in count and time; nothing outlives the script.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
CAP=$SRC/examples/default.gpuqcap
PY=/usr/bin/python3

# A web config with one user (password "secret").
h=$(bcrypt secret)
if [[ ! $h =~ ^\$2[aby]\$10\$ ]]; then
  skip "HTTP abuse: cannot make a bcrypt hash (Debian: python3, or apache2-utils for htpasswd)"
  summary
  exit 77
fi
printf 'basic_auth_users:\n  prom: %s\n' "$h" > "$TMP/web.yml"
port=$(free_port)
"$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port" \
  --web.config.file "$TMP/web.yml" > /dev/null 2> "$TMP/agent.log" &
agent=$!
PIDS+=("$agent")
URL=http://127.0.0.1:$port/metrics
if ! wait_http "$URL" 100 -u prom:secret; then
  fail "the agent serves /metrics" "$(cat "$TMP/agent.log")"
  summary
  exit 1
fi

fds() { ls "/proc/$agent/fd" | wc -l; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$agent/status"; }
# scrape NAME: one normal, authenticated scrape answers within 5 s.
scrape() {
  if curl -sf --max-time 5 -u prom:secret -o "$TMP/scrape" "$URL" &&
    grep -q '^gpuq_queues{' "$TMP/scrape"; then
    pass "$1"
  else
    fail "$1: no answer within 5 s"
  fi
}
scrape "baseline scrape"
# Warm up: the first scrapes allocate what later ones reuse.
for _ in 1 2 3; do curl -sf -u prom:secret -o /dev/null "$URL"; done
base_fds=$(fds) base_rss=$(rss_kb)

abuse() {
# 50 connections that send nothing and 50 that send half a request, held
# open while a normal scrape is made (it used to wait 30 s behind them).
"$PY" - "$port" > "$TMP/idle.log" 2>&1 <<'EOF' &
import socket, sys, time
port = int(sys.argv[1])
socks = []
for i in range(100):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if i % 2:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
    socks.append(s)
print("open", len(socks), flush=True)
time.sleep(8)
for s in socks:
    s.close()
EOF
idle=$!
PIDS+=("$idle")
for _ in $(seq 50); do grep -q open "$TMP/idle.log" && break; sleep 0.1; done
scrape "round $1: a scrape while 100 idle and half-sent connections are open"
scrape "round $1: a second scrape while they are still open"
wait "$idle"

# 300 concurrent scrapers, bounded: 30 threads x 10 scrapes.
"$PY" - "$port" > "$TMP/burst.log" 2>&1 <<'EOF'
import base64, sys, threading, urllib.request
port = int(sys.argv[1])
auth = "Basic " + base64.b64encode(b"prom:secret").decode()
ok = [0]
lock = threading.Lock()
def worker():
    for _ in range(10):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Authorization": auth})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                if r.status == 200 and b"gpuq_queues{" in r.read():
                    with lock:
                        ok[0] += 1
        except Exception as e:
            print("error", e)
threads = [threading.Thread(target=worker) for _ in range(30)]
for t in threads: t.start()
for t in threads: t.join()
print("ok", ok[0])
EOF
got=$(awk '/^ok/ {print $2}' "$TMP/burst.log")
if [ "${got:-0}" = 300 ]; then pass "round $1: 300 concurrent scrapes all answered"; else
  fail "round $1: concurrent scrapes: ${got:-0} of 300 answered" "$(head -5 "$TMP/burst.log")"; fi

}

abuse 1
after1_rss=$(rss_kb)
abuse 2

# A 1 MiB header and wrong passwords: refused, never served.
{ printf 'X-Big: '; head -c 1048576 /dev/zero | tr '\0' 'a'; echo; } > "$TMP/big.header"
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H @"$TMP/big.header" -u prom:secret "$URL")
case "$code" in
  200) fail "a 1 MiB header was served (200)" ;;
  *) pass "a 1 MiB header is refused (HTTP ${code:-none})" ;;
esac
wrong=0
for i in $(seq 20); do
  c=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -u "prom:wrong$i" "$URL")
  [ "$c" = 401 ] && wrong=$((wrong + 1))
done
[ "$wrong" = 20 ] && pass "20 wrong passwords: 401 each" || fail "wrong passwords: $wrong of 20 got 401"
scrape "a scrape after the abuse"

# Back near the baseline: civetweb closes what the abusers left within its
# request timeout (2 s). Tolerance: a few descriptors of workers still
# closing.
ok_fds=0
for _ in $(seq 100); do
  [ "$(fds)" -le $((base_fds + 4)) ] && ok_fds=1 && break
  sleep 0.1
done
[ "$ok_fds" = 1 ] && pass "open files back to baseline ($(fds), was $base_fds)" ||
  fail "open files $(fds), baseline $base_fds"
# Memory: the first round grows the allocator's per-thread arenas of the
# workers; a second identical round must not grow it further (a leak per
# connection would: 400 more connections).
now_rss=$(rss_kb)
[ "$now_rss" -le $((after1_rss + 4096)) ] &&
  pass "RSS after a second round ${now_rss} kB, after the first ${after1_rss} kB (baseline ${base_rss} kB)" ||
  fail "RSS grew from ${after1_rss} kB to ${now_rss} kB in a second identical round"
kill -0 "$agent" 2> /dev/null && pass "the agent is still running" || fail "the agent died" "$(cat "$TMP/agent.log")"

# The TLS port fed what is not TLS: plain HTTP, random bytes, a ClientHello
# cut short and connections that never speak. The handshake refuses each; a
# real HTTPS scrape keeps answering and the descriptors come back.
tls_scrape() {
  if curl -sf --max-time 5 --cacert "$TMP/server.crt" -o "$TMP/tscrape" "$TURL" &&
    grep -q '^gpuq_queues{' "$TMP/tscrape"; then
    pass "$1"
  else
    fail "$1: no HTTPS answer within 5 s" "$(cat "$TMP/tls.log")"
  fi
}
tls_abuse() {
  if ! command -v openssl > /dev/null; then
    skip "non-TLS bytes on the TLS port: no openssl command (Debian: openssl)"
    return
  fi
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$TMP/server.key" -out "$TMP/server.crt" 2> /dev/null
  printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$TMP/server.crt" "$TMP/server.key" > "$TMP/tls.yml"
  local tport tagent junk tbase ok
  tport=$(free_port)
  "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$tport" \
    --web.config.file "$TMP/tls.yml" > /dev/null 2> "$TMP/tls.log" &
  tagent=$!
  PIDS+=("$tagent")
  TURL=https://127.0.0.1:$tport/metrics
  for _ in $(seq 100); do
    curl -s -o /dev/null --cacert "$TMP/server.crt" "$TURL" && break
    sleep 0.1
  done
  tls_scrape "TLS baseline scrape"
  tbase=$(ls "/proc/$tagent/fd" | wc -l)
  "$PY" - "$tport" > "$TMP/tlsjunk.log" 2>&1 << 'PYEOF' &
import os, socket, sys, time
port = int(sys.argv[1])
socks = []
hello_cut = bytes.fromhex("160301020001000200")  # a record header promising 512 bytes, then 4
for i in range(80):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    kind = i % 4
    if kind == 0:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    elif kind == 1:
        s.sendall(os.urandom(4096))
    elif kind == 2:
        s.sendall(hello_cut)
    socks.append(s)  # kind 3: never speaks
print("open", len(socks), flush=True)
time.sleep(6)
for s in socks:
    s.close()
PYEOF
  junk=$!
  PIDS+=("$junk")
  for _ in $(seq 50); do grep -q open "$TMP/tlsjunk.log" && break; sleep 0.1; done
  tls_scrape "an HTTPS scrape while 80 connections send plain HTTP, random bytes, a cut ClientHello or nothing"
  wait "$junk"
  tls_scrape "an HTTPS scrape after them"
  ok=0
  for _ in $(seq 100); do
    [ "$(ls "/proc/$tagent/fd" | wc -l)" -le $((tbase + 4)) ] && ok=1 && break
    sleep 0.1
  done
  [ "$ok" = 1 ] && pass "the TLS agent's open files back to baseline ($tbase)" ||
    fail "the TLS agent's open files $(ls "/proc/$tagent/fd" | wc -l), baseline $tbase"
  kill -0 "$tagent" 2> /dev/null && pass "the TLS agent is still running" ||
    fail "the TLS agent died" "$(cat "$TMP/tls.log")"
}
tls_abuse
summary

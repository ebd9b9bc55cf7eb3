#!/usr/bin/env bash
# `gpuq-agent report --output html` in a real browser: Debian's chromium,
# headless, opens the report of examples/default.gpuqcap (and a comparison of
# several captures), with every host name unresolvable and a recording proxy
# as its only way out. Checks: the screenshot is not blank, every chart's SVG
# is in the rendered DOM, no console error, and not one network request.
# Usage: html_report_test.sh GPUQ_AGENT SOURCE_DIR GPUQ_GEN_CAPTURE [PORT_FIRST PORT_LAST]
set -u
AGENT=$1
SRC=$2
GEN=$3
PORT_FIRST=${4:-19120}
PORT_LAST=${5:-19139}
. "$SRC/tests/lib/assert.sh"
HERE=$SRC/tests/browser
PY=/usr/bin/python3 # Debian's python3, where python3-pil lives

for need in chromium "$PY"; do
  if ! command -v "$need" > /dev/null; then
    echo "skip: $need missing (Debian packages chromium, python3)"
    exit 77
  fi
done
if ! "$PY" -c 'import PIL' 2> /dev/null; then
  echo "skip: python3-pil missing (Debian package python3-pil)"
  exit 77
fi

TMP=$(mktemp -d)
PGIDS=()
cleanup() {
  local g
  for g in "${PGIDS[@]}"; do kill -- "-$g" 2> /dev/null; done
  wait 2> /dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

# The recording proxy: its own process group, like chromium's.
setsid "$PY" "$HERE/proxy_recorder.py" "$PORT_FIRST" "$PORT_LAST" "$TMP/port" "$TMP/requests" &
PGIDS+=($!)
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TMP/port" 2> /dev/null)
if [ -z "$PORT" ]; then
  fail "proxy recorder did not start on 127.0.0.1:$PORT_FIRST-$PORT_LAST"
  summary
  exit 1
fi
# chromium NAME ARGS...: headless chromium, its own process group, killed on
# exit; stdout in $TMP/NAME.out, stderr in $TMP/NAME.err.
chromium_run() {
  local name=$1
  shift
  local profile
  profile=$(mktemp -d -p "$TMP")
  setsid timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --disable-default-apps --disable-extensions \
    --disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter \
    --disable-domain-reliability --no-pings --disable-client-side-phishing-detection \
    --allow-browser-signin=false --disable-breakpad \
    --user-data-dir="$profile" --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
    --proxy-server="http://127.0.0.1:$PORT" --enable-logging=stderr --v=0 \
    "$@" > "$TMP/$name.out" 2> "$TMP/$name.err" &
  local pid=$!
  PGIDS+=("$pid")
  wait "$pid"
  CHROMIUM_RC=$?
}

# page_requests: what reached the proxy, less chromium's own update and
# sign-in traffic, which these flags do not fully silence (a page of gpuq's
# never names these hosts: check_html.py rejects any URL it could load).
CHROMIUM_OWN='clients2\.google\.com|update\.googleapis\.com|accounts\.google\.com|[a-z0-9.-]*\.gvt1\.com'
# A connection chromium opened and closed without a request line (a
# speculative preconnect, seen once) sent nothing.
page_requests() {
  grep -vE "^(GET|POST|HEAD) http://($CHROMIUM_OWN)[:/]|^CONNECT ($CHROMIUM_OWN):443 |^\(closed without a request\)$" "$TMP/requests" 2> /dev/null
}

# Control: a page that loads an image and logs to the console shows up at
# the proxy and in chromium's log (else "no request" and "no console error"
# below would prove nothing).
echo '<!DOCTYPE html><img src="http://gpuq-control.invalid/x.png"><script>console.error("gpuq-control")</script>' > "$TMP/control.html"
chromium_run control --screenshot="$TMP/control.png" "file://$TMP/control.html"
if page_requests | grep -q "gpuq-control.invalid"; then
  pass "proxy recorder sees a page's request through chromium (control)"
else
  fail "proxy recorder saw no request from the control page" "$(cat "$TMP/requests" 2> /dev/null)"
fi
if grep -E ':CONSOLE' "$TMP/control.err" | grep -q gpuq-control; then
  pass "chromium's log shows a page's console error (control)"
else
  fail "chromium's log lacks the control page's console error" "$(tail -5 "$TMP/control.err")"
fi
: > "$TMP/requests"

# check_report NAME DRAWN CAPTURE...: renders the report and checks it.
check_report() {
  local name=$1 drawn=$2
  shift 2
  run "$AGENT" report --output html "$@"
  expect_rc "$name: report --output html" 0
  printf '%s\n' "$OUT" > "$TMP/$name.html"
  if "$PY" "$HERE/check_html.py" "$TMP/$name.html" "$drawn" > "$TMP/$name.check"; then
    pass "$name: self-contained, $drawn charts ($(tail -1 "$TMP/$name.check" | cut -c1-60)...)"
  else
    fail "$name: the HTML file" "$(cat "$TMP/$name.check")"
  fi
  if grep -qiE 'https?://' "$TMP/$name.html"; then
    fail "$name: the HTML mentions a URL" "$(grep -oiE '.{30}https?://.{30}' "$TMP/$name.html" | head -3)"
  else
    pass "$name: no http:// or https:// anywhere in the file"
  fi

  local url="file://$TMP/$name.html"
  chromium_run "$name-shot" --screenshot="$TMP/$name.png" --window-size=1400,3000 "$url"
  if [ "$CHROMIUM_RC" = 0 ] && [ -s "$TMP/$name.png" ]; then
    pass "$name: chromium took a screenshot"
  else
    fail "$name: chromium screenshot (exit $CHROMIUM_RC)" "$(tail -5 "$TMP/$name-shot.err")"
  fi
  local stats
  stats=$("$PY" "$HERE/png_stats.py" "$TMP/$name.png" 2>&1)
  # "1400x3000 COLOURS NONWHITE%": charts, text and tables give hundreds of
  # colours and well over 5% non-background pixels; a blank page gives 1-2.
  if awk -v s="$stats" 'BEGIN { split(s, a, " "); exit !(a[1] == "1400x3000" && a[2] >= 50 && a[3] >= 5) }'; then
    pass "$name: screenshot is not blank ($stats: size, colours, % non-background)"
  else
    fail "$name: screenshot looks blank or wrong: $stats"
  fi
  # The page has no script: any console line at all is wrong.
  if grep -E 'Uncaught|:CONSOLE|ERR_' "$TMP/$name-shot.err" > "$TMP/$name.console"; then
    fail "$name: console or load errors" "$(head -5 "$TMP/$name.console")"
  else
    pass "$name: no console or load error"
  fi

  chromium_run "$name-dom" --dump-dom "$url"
  if [ "$CHROMIUM_RC" = 0 ] && "$PY" "$HERE/check_html.py" "$TMP/$name-dom.out" "$drawn" > "$TMP/$name.domcheck"; then
    pass "$name: every chart's SVG is in the rendered DOM ($drawn)"
  else
    fail "$name: rendered DOM (chromium exit $CHROMIUM_RC)" "$(cat "$TMP/$name.domcheck")"
  fi
  [ -n "${GPUQ_KEEP_SCREENSHOTS:-}" ] && cp "$TMP/$name.png" "$GPUQ_KEEP_SCREENSHOTS/$name.png"
}

check_report default 5 "$SRC/examples/default.gpuqcap"

# Several runs: the bundled capture next to the generated report scenarios.
# 5 runs x 5 charts = 25; 6 say "none in this run": no eviction in cnn,
# deepseek8 and transformer, no runlist unmap in deepseek8, no queue off a
# GPU in cnn and deepseek8.
COMPARISON_DRAWN=19
for s in cnn transformer deepseek8 shared-gpu; do
  run "$GEN" --scenario "$s" -o "$TMP/$s.gpuqcap"
  expect_rc "gpuq-gen-capture --scenario $s" 0
done
check_report comparison "$COMPARISON_DRAWN" "$SRC/examples/default.gpuqcap" \
  "$TMP/cnn.gpuqcap" "$TMP/transformer.gpuqcap" "$TMP/deepseek8.gpuqcap" "$TMP/shared-gpu.gpuqcap"
if grep -q 'id="comparison-table"' "$TMP/comparison.html"; then
  pass "comparison: the comparison table is there"
else
  fail "comparison: no comparison table"
fi

if page_requests > "$TMP/page-requests"; then
  fail "the reports made network requests" "$(head -5 "$TMP/page-requests")"
else
  pass "not one request from the reports reached the proxy ($(wc -l < "$TMP/requests") of chromium's own update/sign-in traffic and empty preconnects ignored)"
fi
summary

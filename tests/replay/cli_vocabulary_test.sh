#!/usr/bin/env bash
# One vocabulary per flag: the command line's traps users hit, each held to
# its fix. -o is each command's own --output (a format for --once and
# report, listing that command's choices; the capture file for record); a
# file named on the command line that cannot be read exits 1 in every
# command; a listen error says why; the --once table fits 120 columns
# (--output wide: every column) and its JSON names its schema; report's
# comparison columns are told apart; check folds identical hook rows.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
CAP=$SRC/examples/default.gpuqcap
use_background_cleanup
tmp=$TMP

# one_line NAME: the last run printed exactly one line on stderr.
one_line() {
  local n
  n=$(printf '%s\n' "$ERR" | grep -c .)
  if [ "$n" = 1 ]; then pass "$1: one error line"; else fail "$1: $n error lines" "$ERR"; fi
}
# no_internals NAME: stderr names no library internals.
no_internals() {
  if printf '%s\n' "$ERR" | grep -qiE 'civet|null context|exception'; then
    fail "$1: library internals in the message" "$ERR"
  else
    pass "$1: no library internals"
  fi
}

# --- -o: each command's own --output --------------------------------------------
run "$AGENT" report "$CAP" -o json
expect_rc "report -o json" 0
expect_out "report -o json prints the report's JSON" '"schema": "gpuq-report/1"'
run "$AGENT" report -o html "$CAP"
expect_rc "report -o html" 0
expect_out "report -o html prints the page" '^<!DOCTYPE html>'
run "$AGENT" report "$CAP" -o yaml
expect_rc "report -o yaml" 2
expect_err "report's refusal lists report's formats" 'yaml not in \{text,markdown,json,html,perfetto\}'
one_line "report -o yaml"
run "$AGENT" --once --replay "$CAP" -o html
expect_rc "--once -o html" 2
expect_err "--once's refusal lists --once's formats" 'html not in \{table,wide,json,prometheus\}'
one_line "--once -o html"
run "$AGENT" -o json report "$CAP"
expect_rc "--output before report" 2
expect_err "--output before report says where it goes" 'report --output FORMAT'
one_line "--output before report"
for cmd in check top; do
  run "$AGENT" "$cmd" -o json
  expect_rc "$cmd -o json" 2
  expect_err "$cmd -o json says -o does not apply" "does not apply to \`$cmd\`"
done
run "$AGENT" --replay "$CAP" -o json
expect_rc "-o without --once" 2
expect_err "-o without --once points at --once" 'add --once'
run "$AGENT" record --replay "$CAP" -o "$tmp/o.gpuqcap"
expect_rc "record -o FILE still writes the capture" 0
expect_err "record -o FILE names the capture" "wrote [1-9][0-9]* records to $tmp/o.gpuqcap"
run "$AGENT" record --replay "$CAP" --output "$tmp/output.gpuqcap"
expect_rc "record --output FILE writes the capture" 0
expect_err "record --output FILE names the capture" "wrote [1-9][0-9]* records to $tmp/output.gpuqcap"
run "$AGENT" --log.level loud
expect_rc "--log.level loud" 2
expect_err "--log.level lists the levels" 'loud not in \{error,warn,info,debug\}'
run "$AGENT" --probe-tier btf
expect_rc "--probe-tier btf" 2
expect_err "--probe-tier lists the tiers" 'btf not in \{auto,args,tracepoint\}'
# CLI11 reads an enum as its integer: a number must not pass for a name.
run "$AGENT" --once --replay "$CAP" -o 1
expect_rc "--once -o 1 (an enum's integer)" 2

# --- a file the command line names: exit 1 in every command ----------------------
missing=$tmp/missing.gpuqcap
for args in "--once --replay $missing" "--replay $missing" "report $missing" \
  "record --replay $missing -o $tmp/r.gpuqcap" "--web.config.file $tmp/missing.yml" \
  "--btf $tmp/missing.btf" "--doorbells=uprobe --hsa-runtime $tmp/missing.so"; do
  # shellcheck disable=SC2086  # the words of one command line
  run "$AGENT" $args
  expect_rc "$args" 1
  expect_err "$args: the file is named" "$tmp/missing"
  one_line "$args"
done
for args in "--once --replay $tmp" "report $tmp"; do
  # shellcheck disable=SC2086
  run "$AGENT" $args
  expect_rc "$args (a directory)" 1
  expect_err "$args: says it is a directory" "a directory"
done
# top checks for a terminal first: give it one.
if script -qec true /dev/null > /dev/null 2>&1; then
  OUT=$(script -qec "$AGENT top --replay $missing" /dev/null 2>&1)
  RC=$?
  ERR=$OUT
  expect_rc "top --replay of a missing capture, on a terminal" 1
  expect_err "top names the missing capture" "missing.gpuqcap"
else
  skip "top --replay of a missing capture: no script(1) to give it a terminal"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
  cp "$AGENT" "$tmp/agent" && chmod 755 "$tmp" "$tmp/agent"
  cp "$CAP" "$tmp/secret.gpuqcap" && chmod 600 "$tmp/secret.gpuqcap"
  for args in "--once --replay $tmp/secret.gpuqcap" "report $tmp/secret.gpuqcap"; do
    # shellcheck disable=SC2086
    run "${nobody[@]}" "$tmp/agent" $args
    expect_rc "$args, unreadable" 1
    expect_err "$args: says why" "secret.gpuqcap.*Permission denied"
  done
else
  skip "unreadable captures: needs root and setpriv"
fi

# --- listen errors: in use or not permitted, by address --------------------------
port=$(free_port)
start_bg "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port" > /dev/null 2>&1
BG=$BG_PID
wait_http "http://127.0.0.1:$port/metrics" 50
run "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port"
expect_rc "port in use" 1
expect_err "port in use says so, by address" "cannot listen on 127.0.0.1:$port: the address is in use"
no_internals "port in use"
one_line "port in use"
stop_bg "$BG"
# 192.0.2.1 (TEST-NET-1) is an address of no host.
run "$AGENT" --replay "$CAP" --web.listen-address 192.0.2.1:9464
expect_rc "an address not of this host" 1
expect_err "an address not of this host says so" "cannot listen on 192.0.2.1:9464: .*not an address of this host"
no_internals "an address not of this host"
low=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2> /dev/null || echo 1024)
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && [ "$low" -gt 80 ]; then
  cp "$CAP" "$tmp/cap.gpuqcap" && chmod 644 "$tmp/cap.gpuqcap"
  run "${nobody[@]}" "$tmp/agent" --replay "$tmp/cap.gpuqcap" --web.listen-address 127.0.0.1:80
  expect_rc "port 80 without privileges" 1
  expect_err "port 80 without privileges says it is not permitted" \
    "cannot listen on 127.0.0.1:80: not permitted.*CAP_NET_BIND_SERVICE"
  no_internals "port 80 without privileges"
  one_line "port 80 without privileges"
else
  skip "port 80 without privileges: needs root, setpriv and privileged ports below 80 ($low)"
fi

# --- the --once table: 120 columns; --output wide: every column -------------------
run "$AGENT" --once --replay "$CAP"
expect_rc "--once" 0
widest=$(printf '%s\n' "$OUT" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }')
if [ "$widest" -le 120 ]; then pass "--once fits 120 columns ($widest)"; else fail "--once is $widest columns wide" "$(printf '%s\n' "$OUT" | awk 'length($0) > 120' | head -3)"; fi
expect_out "--once says where the other columns are" -- "--output wide"
run "$AGENT" --once --replay "$CAP" --output wide
expect_rc "--once --output wide" 0
expect_out "--output wide has every column" \
  '^CONTAINER +ID +POD +NAMESPACE +GPU_ID +COMPUTE .* +EVICTIONS +EVICTED$'

# --- the --once JSON names its schema ------------------------------------------------
run "$AGENT" --once --replay "$CAP" --output json
expect_rc "--once --output json" 0
if printf '%s\n' "$OUT" | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if list(d)[0] == "schema" and d["schema"] == "gpuq-once/1" else 1)'; then
  pass "--once JSON starts with \"schema\": \"gpuq-once/1\""
else
  fail "--once JSON lacks its schema" "$(printf '%s\n' "$OUT" | head -3)"
fi

# --- report: comparison columns told apart -------------------------------------------
mkdir -p "$tmp/a" "$tmp/b"
cp "$CAP" "$tmp/a/run.gpuqcap" && cp "$CAP" "$tmp/b/run.gpuqcap"
run "$AGENT" report "$tmp/a/run.gpuqcap" "$tmp/b/run.gpuqcap"
expect_rc "report of a/run and b/run" 0
expect_out "the columns are the shortest distinct suffixes" '^ +a/run +b/run$'
run "$AGENT" report before="$tmp/a/run.gpuqcap" after="$tmp/b/run.gpuqcap" --output markdown
expect_rc "report LABEL=PATH" 0
expect_out "the columns are the labels" '^\| +\| before +\| after +\|$'
run "$AGENT" report x="$tmp/a/run.gpuqcap" x="$tmp/b/run.gpuqcap"
expect_rc "a label given twice" 2
expect_err "a label given twice is named" "label 'x' is given twice"

# --- check: identical rows folded -----------------------------------------------------
run "$AGENT" check
if printf '%s\n' "$OUT" | grep -q '^PROBE'; then
  rows=$(printf '%s\n' "$OUT" | sed -n '/^PROBE/,$p' | tail -n +2 | awk '{ $1 = $2 = ""; print }' | sort | uniq -c | sort -rn | head -1 | awk '{ print $1 }')
  if [ "${rows:-0}" -le 1 ]; then pass "check prints no identical rows"; else fail "check prints $rows identical rows" "$OUT"; fi
  expect_out "check folds them into one line that counts the hooks" '^[0-9]+ hooks: '
  expect_out "check still names every hook" 'process_exit'
else
  fail "check printed no table" "$OUT$ERR"
fi
summary

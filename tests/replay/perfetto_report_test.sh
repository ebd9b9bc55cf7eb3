#!/usr/bin/env bash
# `gpuq-agent report --output perfetto` of the bundled capture: a trace-event
# JSON file whose slices and counters carry the capture's hand-worked figures
# (check_perfetto.py), and that two captures share without pid collisions.
# Usage: perfetto_report_test.sh GPUQ_AGENT SOURCE_DIR
set -u
AGENT=$1
SRC=$2
. "$SRC/tests/lib/assert.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CAP=$SRC/examples/default.gpuqcap

run "$AGENT" report --output perfetto "$CAP"
expect_rc "report --output perfetto" 0
printf '%s\n' "$OUT" > "$TMP/trace.json"
if python3 "$SRC/tests/replay/check_perfetto.py" "$TMP/trace.json" > "$TMP/check" 2>&1; then
  pass "perfetto trace of default.gpuqcap: $(tail -1 "$TMP/check")"
else
  fail "perfetto trace of default.gpuqcap" "$(grep -v '^ok' "$TMP/check")"
fi

cp "$CAP" "$TMP/again.gpuqcap"
run "$AGENT" report --output perfetto "$CAP" "$TMP/again.gpuqcap"
expect_rc "report --output perfetto, two captures" 0
printf '%s\n' "$OUT" > "$TMP/two.json"
if python3 - "$TMP/trace.json" "$TMP/two.json" << 'PY'; then
import json, sys
one = json.load(open(sys.argv[1]))["traceEvents"]
two = json.load(open(sys.argv[2]))["traceEvents"]
assert len(two) == 2 * len(one), (len(one), len(two))
pids = lambda evs: {e["pid"] for e in evs}
first = pids(one)
second = pids(two) - first
assert len(second) == len(first), (len(first), len(second))
names = [e["args"]["name"] for e in two if e["name"] == "process_name"]
assert all("default.gpuqcap: " in n or "again.gpuqcap: " in n for n in names), names[:3]
PY
  pass "two captures: twice the events, disjoint pids, run names on every process"
else
  fail "two captures in one trace"
fi
summary

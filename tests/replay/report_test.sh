#!/usr/bin/env bash
# Replay, `gpuq-agent report`: the bundled capture and the four report
# scenarios (generated here by gpuq-gen-capture, examples/README.md "Report
# scenarios") against reviewed goldens in text, markdown and JSON; the
# comparison of cnn, transformer and deepseek8; hand-worked figures checked
# apart from the goldens; and bad input (one line, exit 1 or 2).
# GPUQ_UPDATE_GOLDEN=1 rewrites the goldens; review the diff before committing.
set -u
AGENT=$1 GEN=$2 SRC=$3
. "$SRC/tests/lib/assert.sh"
GOLDEN=$SRC/tests/replay/golden/report
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Captures under their short names, so reports name them the same anywhere.
cp "$SRC/examples/default.gpuqcap" "$tmp/default.gpuqcap"
for s in cnn transformer deepseek8 shared-gpu pair-oversubscribed pair-fits cpx; do
  run "$GEN" --scenario "$s" -o "$tmp/$s.gpuqcap"
  expect_rc "generate scenario $s" 0
done
cd "$tmp" || exit 1

golden() {  # golden NAME: compares $OUT with $GOLDEN/NAME
  if [ "${GPUQ_UPDATE_GOLDEN:-0}" = 1 ]; then
    mkdir -p "$GOLDEN"
    printf '%s\n' "$OUT" > "$GOLDEN/$1"
  fi
  if diff -u "$GOLDEN/$1" <(printf '%s\n' "$OUT") > "$tmp/diff"; then
    pass "report $1 matches golden"
  else
    fail "report $1 differs from golden" "$(head -40 "$tmp/diff")"
  fi
}

for cap in default cnn transformer deepseek8 shared-gpu pair-oversubscribed cpx; do
  for fmt in text markdown json; do
    run "$AGENT" report "$cap.gpuqcap" --output "$fmt"
    expect_rc "report $cap --output $fmt" 0
    golden "$cap.$fmt"
  done
done
for fmt in text markdown json; do
  run "$AGENT" report cnn.gpuqcap transformer.gpuqcap deepseek8.gpuqcap --output "$fmt"
  expect_rc "report of three captures --output $fmt" 0
  golden "compare-cnn-transformer-deepseek8.$fmt"
done
# The users' experiment, run twice: the same preemptions, one oversubscribed.
for fmt in text markdown json; do
  run "$AGENT" report pair-fits.gpuqcap pair-oversubscribed.gpuqcap --output "$fmt"
  expect_rc "report of the pair's two runs --output $fmt" 0
  golden "compare-pair-fits-oversubscribed.$fmt"
done
run "$AGENT" report default.gpuqcap
expect_rc "text is the default output" 0
golden "default.text"

# --- hand-worked figures (examples/README.md), apart from the goldens ----
jq_is() {  # jq_is FILE FILTER WANT
  local got
  got=$("$AGENT" report "$1" --output json | python3 -c "
import json, sys
r = json.load(sys.stdin)['runs'][0]
print(eval(sys.argv[1]))" "$2")
  if [ "$got" = "$3" ]; then pass "$1: $2 = $3"; else fail "$1: $2 = $got, want $3"; fi
}
jq_is default.gpuqcap "r['submissions']['total']" 369690
jq_is default.gpuqcap "r['runlist_totals']['unmaps']" 6
jq_is default.gpuqcap "r['evictions']" 3
jq_is default.gpuqcap "round(sum(e['duration_s'] for e in r['eviction_list']), 9)" 2.49
jq_is default.gpuqcap "r['queues']['at_end']" 43
jq_is default.gpuqcap "r['queues']['peak']" 54
jq_is default.gpuqcap "r['create_failures']" 1
jq_is cnn.gpuqcap "r['submissions']['total']" 127099
jq_is cnn.gpuqcap "r['duration_s']" 121.0
jq_is cnn.gpuqcap "r['classification']['verdict']" "design fits"
jq_is transformer.gpuqcap "r['submissions']['total']" 261809
jq_is transformer.gpuqcap "r['submissions']['peak_per_s']" 2330.0
jq_is transformer.gpuqcap "r['classification']['verdict']" "needs selective preemption"
jq_is deepseek8.gpuqcap "r['submissions']['total']" 720000
jq_is deepseek8.gpuqcap "r['queues']['peak']" 24
# 8 MI300X in CPX: 64 partitions, vLLM on every partition of GPUs 0 and 1
# (a compute and an SDMA queue each, 100/s), a batch process on 4 of GPU 2
# (a compute queue each, 50/s), for 10 s.
jq_is cpx.gpuqcap "(r['gpus_in_topology'], r['physical_gpus_in_topology'], r['gpus_used'], r['physical_gpus_used'])" "(64, 8, 20, 3)"
jq_is cpx.gpuqcap "[(p['pci'], p['partitions'], p['queues_at_end'], p['submissions']) for p in r['physical_gpus'][:3]]" "[('0000:05:00', 8, 16, 8000), ('0000:15:00', 8, 16, 8000), ('0000:65:00', 8, 4, 2000)]"
jq_is cpx.gpuqcap "sum(p['submissions'] for p in r['physical_gpus']) == r['submissions']['total']" True
jq_is deepseek8.gpuqcap "r['gpus_used']" 8
jq_is pair-oversubscribed.gpuqcap "[(c['owner']['container'], c['preempted_by_self'], c['preempted_by_others']) for c in r['containers']]" "[('batch', 10, 1), ('latency', 0, 8)]"
jq_is pair-oversubscribed.gpuqcap "[(c['owner']['container'], c['high_priority_queues_peak'], c['cu_restricted_queues_peak']) for c in r['containers']]" "[('batch', 0, 1), ('latency', 1, 0)]"
jq_is pair-oversubscribed.gpuqcap "r['runlist'][0]['oversubscription']['maps']" 7
jq_is pair-oversubscribed.gpuqcap "round(r['runlist'][0]['oversubscription']['seconds'], 9)" 25.2828
jq_is pair-fits.gpuqcap "r['runlist'][0]['oversubscription']['seconds']" 0.0
jq_is shared-gpu.gpuqcap "[p['submissions_mean_per_s'] for p in r['processes']]" "[600.0, 4000.0]"
jq_is shared-gpu.gpuqcap "[c['preemptions_caused'] for c in r['containers']]" "[5, 2]"
jq_is shared-gpu.gpuqcap "r['runlist'][0]['unmap']['p50_s']" 0.00025
jq_is shared-gpu.gpuqcap "[c['verdict'] for c in r['containers']]" "['design fits', 'design fits']"

run "$AGENT" report cnn.gpuqcap transformer.gpuqcap deepseek8.gpuqcap
last=$(printf '%s\n' "$OUT" | tail -1)
if printf '%s\n' "$last" | grep -qE '^verdict +design fits +needs selective preemption +needs selective preemption$'; then
  pass "comparison ends with the verdict row, one column per capture in order"
else
  fail "comparison's last row: $last"
fi

# --- bad input -------------------------------------------------------------
one_line() {  # one_line NAME: stderr is exactly one line
  if [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ]; then pass "$1: one line"; else fail "$1: not one line" "$ERR"; fi
}
run "$AGENT" report
expect_rc "report without captures" 2
run "$AGENT" report "$tmp/missing.gpuqcap"
expect_rc "missing capture" 1
expect_err "missing capture is named" "missing.gpuqcap"
one_line "missing capture"
head -c 4096 /dev/urandom > garbage.gpuqcap
run "$AGENT" report cnn.gpuqcap garbage.gpuqcap
expect_rc "garbage capture" 1
expect_err "garbage capture is named and explained" "garbage.gpuqcap.*not a gpuq capture"
one_line "garbage capture"
if [ -z "$OUT" ]; then pass "nothing printed before a bad capture"; else fail "stdout not empty"; fi
size=$(stat -c %s cnn.gpuqcap)
head -c $((size - 20)) cnn.gpuqcap > truncated.gpuqcap
run "$AGENT" report truncated.gpuqcap
expect_rc "truncated capture" 1
expect_err "truncated capture says where" "truncated.gpuqcap.*truncated at byte [0-9]+"
one_line "truncated capture"
run "$AGENT" report truncated.gpuqcap --allow-truncated
expect_rc "truncated capture with --allow-truncated" 0
expect_err "--allow-truncated warns" "level=warn msg=.*truncated"
: > empty.gpuqcap
run "$AGENT" report empty.gpuqcap
expect_rc "empty capture" 1
one_line "empty capture"
run "$AGENT" report cnn.gpuqcap --output yaml
expect_rc "unknown report format" 2
run "$AGENT" report cnn.gpuqcap --replay cnn.gpuqcap
expect_rc "--replay with report" 2

summary

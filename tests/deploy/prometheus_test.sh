#!/usr/bin/env bash
# Real Prometheus (Debian's package, on the host) scrapes real agents, and
# every query of every panel of dashboards/gpuq.json, with its variables set
# to match-all (.*), returns at least one series. Three agents are scraped:
#   replay  - the bundled capture, which alone answers every query but
#             the live-only ones below (what a new user scrapes first);
#   pair    - the users' experiment (gpuq-gen-capture --scenario
#             pair-oversubscribed, GPUQ_GEN_CAPTURE): high-priority queues
#             and an oversubscribed runlist at the end, beside the replay;
#   fixture - live mode on tests/fixtures/root (sysfs inventory): the only
#             source of gpuq_probe_attached series and the reconciliation
#             families, which a replay does not export.
# Also: honor_labels keeps the agent's own namespace/pod/container labels
# (what deploy/kubernetes/prometheus-operator/servicemonitor.yaml relies on).
# Usage: prometheus_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
use_background_cleanup

missing=$(missing_of prometheus curl)
have_pyyaml || missing="$missing python3-yaml"
if [ -n "$missing" ]; then
  skip "real Prometheus scrape of the dashboard queries: missing $missing (Debian: prometheus curl python3-yaml)"
  summary
  exit
fi

start_agent() { # PORT ARGS...
  local port=$1
  shift
  start_bg "$AGENT" --web.listen-address "127.0.0.1:$port" "$@" > "$TMP/agent-$port.log" 2>&1
  wait_http "http://127.0.0.1:$port/metrics" 100
}
replay_port=$(free_port)
if start_agent "$replay_port" --replay "$SRC/examples/default.gpuqcap"; then
  pass "replay agent serves /metrics"
else
  fail "replay agent did not start" "$(cat "$TMP"/agent-*.log)"
fi
pair_port=$(free_port)
if [ ! -x "${GPUQ_GEN_CAPTURE:-}" ]; then
  fail "GPUQ_GEN_CAPTURE (gpuq-gen-capture) not given: '${GPUQ_GEN_CAPTURE:-}'"
elif ! "$GPUQ_GEN_CAPTURE" --scenario pair-oversubscribed -o "$TMP/pair.gpuqcap" > "$TMP/gen.log" 2>&1; then
  fail "gpuq-gen-capture --scenario pair-oversubscribed" "$(cat "$TMP/gen.log")"
elif start_agent "$pair_port" --replay "$TMP/pair.gpuqcap"; then
  pass "pair replay agent serves /metrics"
else
  fail "pair replay agent did not start" "$(cat "$TMP"/agent-*.log)"
fi
fixture_port=$(free_port)
if start_agent "$fixture_port" --host-root "$SRC/tests/fixtures/root" --reconcile-interval 1s; then
  pass "fixture-host live agent serves /metrics"
else
  fail "fixture-host live agent did not start" "$(cat "$TMP"/agent-*.log)"
fi

# AMD's device-metrics-exporter stands here as a static page of series shaped
# as its documentation and source show them (no AMD GPU, no image to pull):
# gpu_id is amd-smi's index, worked out by hand for the bundled capture's
# GPUs (examples/generator/scenario.cc): PCI order, so the W7900 (KFD node
# 9, bus c3) is index 6. GFX activity is 10 x (index + 1).
AMD_INDEX=([11437]=0 [23710]=1 [30584]=2 [39261]=3 [48090]=4 [52417]=5 [47101]=6 [60833]=7 [64512]=8)
mkdir -p "$TMP/amd-exporter"
{
  echo '# HELP gpu_gfx_activity GPU GFX activity (%)'
  echo '# TYPE gpu_gfx_activity gauge'
  for i in 0 1 2 3 4 5 6 7 8; do
    echo "gpu_gfx_activity{card_model=\"\",container=\"\",deployment_mode=\"baremetal\",gpu_compute_partition_type=\"spx\",gpu_id=\"$i\",gpu_memory_partition_type=\"nps1\",gpu_partition_id=\"0\",hostname=\"node-a\",job_id=\"\",job_partition=\"\",job_user=\"\",namespace=\"\",pod=\"\",serial_number=\"PCB0000$i\"} $((10 * (i + 1)))"
  done
} > "$TMP/amd-exporter/metrics"
amd_port=$(free_port)
start_bg /usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$TMP/amd-exporter" "$amd_port" > "$TMP/amd-exporter.log" 2>&1
if wait_http "http://127.0.0.1:$amd_port/metrics" 100; then pass "exporter-shaped series served"; else fail "exporter-shaped series not served" "$(cat "$TMP/amd-exporter.log")"; fi
prom_port=$(free_port)
cat > "$TMP/prometheus.yml" << YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpuq
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$replay_port']
        labels: {agent: replay}
      - targets: ['127.0.0.1:$pair_port']
        labels: {agent: pair}
      - targets: ['127.0.0.1:$fixture_port']
        labels: {agent: fixture}
  # The node's name in `node`, as the shipped ServiceMonitor relabels it,
  # beside AMD's exporter on the same node (its own hostname label).
  - job_name: gpuq-node
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$replay_port']
        labels: {node: node-a}
  - job_name: amd-device-metrics-exporter
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$amd_port']
  # What the operator does to a pod target: namespace/pod/container of the
  # agent's own pod as target labels. honor_labels must keep the workload's.
  - job_name: gpuq-k8s-labels
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$replay_port']
        labels: {namespace: gpuq-system, pod: gpuq-agent-x1, container: gpuq-agent}
YAML
run promtool check config "$TMP/prometheus.yml"
expect_rc "promtool check config: the test's scrape config" 0
start=$(date +%s.%N)
start_bg prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
  --web.listen-address="127.0.0.1:$prom_port" > "$TMP/prometheus.log" 2>&1
if wait_http "http://127.0.0.1:$prom_port/-/ready" 100; then pass "prometheus is ready"; else fail "prometheus not ready" "$(tail -5 "$TMP/prometheus.log")"; fi

# query EXPR: prints the number of series in the result (-1 on error).
query() {
  curl -s -G --data-urlencode "query=$1" "http://127.0.0.1:$prom_port/api/v1/query" |
    "$PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print(len(d["data"]["result"]) if d.get("status") == "success" else -1)
except Exception:
    print(-1)'
}
# Rates need two samples of every target in the window: wait for the third
# scrape of all three agents.
ok=0
for _ in $(seq 200); do
  [ "$(query 'count_over_time(gpuq_build_info{job="gpuq"}[1m]) >= 3')" = 3 ] && ok=1 && break
  sleep 0.1
done
if [ $ok = 1 ]; then
  pass "the three agents scraped 3 times ($(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s after start)"
else
  fail "agents not scraped 3 times within 20 s" "$(curl -s "http://127.0.0.1:$prom_port/api/v1/targets")"
fi

# Each query with instance set to the bundled capture's replay agent alone:
# a new user who scrapes that replay sees no empty panel. Only what a replay
# cannot export comes from the fixture agent: probe attachment and
# reconciliation (the LIVE_ONLY families).
LIVE_ONLY='gpuq_probe_attached|gpuq_reconcile_'
replay_instance="127.0.0.1:$replay_port"
all_instances='instance=~".*"' replay_selector="instance=\"$replay_instance\""
n_queries=0 n_replay=0
while IFS=$'\t' read -r what expr; do
  n_queries=$((n_queries + 1))
  if grep -qE "$LIVE_ONLY" <<< "$expr"; then
    n=$(query "$expr")
    source="any agent (live-only family)"
  else
    n=$(query "${expr//"$all_instances"/"$replay_selector"}")
    source="the bundled capture's replay"
    n_replay=$((n_replay + 1))
  fi
  if [ "$n" -ge 1 ] 2> /dev/null; then
    pass "$what: $n series from $source"
  else
    fail "$what: no series from $source (n=$n)" "$expr"
  fi
done < <("$PY" "$SRC/tests/deploy/deploy_checks.py" queries "$SRC/dashboards/gpuq.json")
# The exemption holds only for families a replay really does not export.
exported=$(curl -s "http://$replay_instance/metrics" | grep -E "^($LIVE_ONLY)" | head -3)
if [ -z "$exported" ]; then
  pass "$n_replay of $n_queries queries answered by the bundled capture's replay alone; the other $((n_queries - n_replay)) ask for families a replay does not export ($LIVE_ONLY)"
else
  fail "the replay exports a family the test counts as live-only" "$exported"
fi
if [ "$n_queries" -ge 20 ]; then pass "$n_queries dashboard queries checked"; else fail "only $n_queries dashboard queries found"; fi
# The README's first five metrics: every PromQL expression it shows answers.
n_readme=0
while IFS= read -r expr; do
  n=$(query "$expr")
  n_readme=$((n_readme + 1))
  if [ "$n" -ge 1 ] 2> /dev/null; then pass "README query $expr: $n series"; else fail "README query answers nothing (n=$n)" "$expr"; fi
done < <(awk '/^## The first five metrics/ { on = 1; next } /^## / { on = 0 } on && /^\| / && !/^\| question/' "$SRC/README.md" |
  awk -F'|' '{ print $3 }' | grep -o '`[^`]*`' | tr -d '`')
if [ "$n_readme" -ge 7 ]; then pass "$n_readme README queries checked"; else fail "only $n_readme README queries found"; fi

# The documented join with AMD's exporter (docs/metrics.md), run as written:
# one series per GPU with queues, keyed by the node and amd-smi's index, each
# the GPU's queues times the exporter's activity for that index.
join=$(awk '/^### Joining AMD/ { on = 1 } on && /^```promql/ { grab = 1; next } grab && /^```/ { exit } grab' "$SRC/docs/metrics.md" |
  tr '\n' ' ')
query_pairs() { # EXPR -> "label1 label2 value" lines, sorted
  curl -s -G --data-urlencode "query=$1" "http://127.0.0.1:$prom_port/api/v1/query" | "$PY" -c '
import json, sys
keys = sys.argv[1:]
for r in json.load(sys.stdin)["data"]["result"]:
    print(" ".join([r["metric"].get(k, "-") for k in keys] + [str(float(r["value"][1]))]))' "${@:2}" | sort
}
got=$(query_pairs "$join" node gpu_index)
want=$(query_pairs 'sum by (gpu_id) (gpuq_queues{job="gpuq-node"})' gpu_id |
  while read -r gpu_id queues; do
    i=${AMD_INDEX[$gpu_id]}
    echo "node-a $i $(awk -v q="$queues" -v i="$i" 'BEGIN { print q * 10 * (i + 1) ".0" }')"
  done | sort)
# Python prints floats as 30.0; the shell's products as 30.0 too.
want=$(awk '{ printf "%s %s %.1f\n", $1, $2, $3 }' <<< "$want")
got=$(awk '{ printf "%s %s %.1f\n", $1, $2, $3 }' <<< "$got")
if [ -n "$join" ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
  pass "docs/metrics.md's join with AMD's exporter: $(wc -l <<< "$got") GPUs by node and amd-smi index, each its queues x the exporter's activity"
else
  fail "the join with AMD's exporter differs" "expr: $join
$(diff <(echo "$want") <(echo "$got"))"
fi
# Without gpuq_gpu_info, gpu_id to gpu_id matches the wrong GPUs or none.
naive=$(query_pairs 'sum by (gpu_id) (gpuq_queues{job="gpuq-node"}) * on (gpu_id) group_left max by (gpu_id) (gpu_gfx_activity)' gpu_id)
if [ -z "$naive" ]; then pass "a join on gpu_id alone matches nothing (KFD's ids are not amd-smi's)"; else fail "a join on gpu_id alone matched" "$naive"; fi

# honor_labels: the agent's namespace/pod/container win over the target's.
n=$(query 'gpuq_queues{job="gpuq-k8s-labels",namespace="gpuq-system"}')
total=$(query 'gpuq_queues{job="gpuq-k8s-labels"}')
if [ "$n" = 0 ] && [ "$total" -ge 1 ] 2> /dev/null; then
  pass "honor_labels: no queue series takes the agent pod's namespace ($total series kept theirs)"
else
  fail "honor_labels: $n of $total queue series carry the agent pod's namespace"
fi
summary

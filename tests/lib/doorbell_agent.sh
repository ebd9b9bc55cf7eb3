# shellcheck shell=bash
# The agent with doorbell uprobes, as the doorbell tiers start it (source
# after assert.sh and net.sh, with use_background_cleanup done).

# start_doorbell_agent LIB WHAT: the daemon with --doorbells=uprobe on LIB,
# stopped by the background cleanup. Sets AGENT_PID and URL; passes with
# "the doorbell uprobes attached WHAT" once /metrics shows the two store
# probes and the two destroy return probes attached, and ends the test
# (summary, exit 1) if /metrics never answers.
start_doorbell_agent() {
  local lib=$1 what=$2 port m
  port=$(free_port)
  start_bg "$AGENT" --doorbells=uprobe --hsa-runtime "$lib" --sample-interval 200ms \
    --web.listen-address "127.0.0.1:$port" --no-runtime-lookup > /dev/null 2> "$TMP/agent.log"
  AGENT_PID=$BG_PID
  URL=http://127.0.0.1:$port/metrics
  if ! wait_http "$URL" 100; then
    fail "the agent with --doorbells=uprobe does not serve /metrics" "$(cat "$TMP/agent.log")"
    summary
    exit 1
  fi
  m=$(curl -s "$URL")
  local probe missing=
  for probe in store_screlease store_relaxed queue_destroy shut_down; do
    grep -q "^gpuq_probe_attached{probe=\"doorbell_$probe\",mode=\"uprobe\",tier=\"uprobe\"} 1" <<< "$m" ||
      missing+=" doorbell_$probe"
  done
  if [ -z "$missing" ]; then
    pass "the doorbell uprobes attached $what"
  else
    fail "doorbell probes not attached to $lib:$missing" "$(grep doorbell <<< "$m"; cat "$TMP/agent.log")"
  fi
}

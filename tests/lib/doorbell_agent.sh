# shellcheck shell=bash
# The agent with doorbell uprobes, as the doorbell tiers start it (source
# after assert.sh and net.sh, with use_background_cleanup done).

# start_doorbell_agent LIB WHAT: the daemon with --doorbells=uprobe on LIB,
# stopped by the background cleanup. Sets AGENT_PID and URL; passes with
# "both doorbell uprobes attached WHAT" once /metrics shows both probes
# attached, and ends the test (summary, exit 1) if /metrics never answers.
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
  if grep -q '^gpuq_probe_attached{probe="doorbell_store_screlease",mode="uprobe",tier="uprobe"} 1' <<< "$m" &&
    grep -q '^gpuq_probe_attached{probe="doorbell_store_relaxed",mode="uprobe",tier="uprobe"} 1' <<< "$m"; then
    pass "both doorbell uprobes attached $what"
  else
    fail "doorbell probes not attached to $lib" "$(grep doorbell <<< "$m"; cat "$TMP/agent.log")"
  fi
}

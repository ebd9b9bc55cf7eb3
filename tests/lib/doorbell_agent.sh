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

# metric_sum REGEX: the agent's /metrics (URL) series matching ^REGEX, summed.
metric_sum() { curl -s "$URL" | grep -E "^$1" | awk '{ s += $NF } END { print s + 0 }'; }

# doorbell_packets: gpuq_doorbell_packets_total now, as "KERNEL_DISPATCH
# AMD_EXT BARRIER_BIT BARRIER OTHER" (AMD_EXT: the kernel dispatches of
# format amd_ext; BARRIER_BIT: gpuq_doorbell_barrier_dispatches_total, the
# kernel dispatches with the barrier bit; other: other and unreadable).
doorbell_packets() {
  echo "$(metric_sum 'gpuq_doorbell_packets_total\{[^}]*packet_type="kernel_dispatch"')" \
    "$(metric_sum 'gpuq_doorbell_packets_total\{[^}]*packet_type="kernel_dispatch",format="amd_ext"')" \
    "$(metric_sum 'gpuq_doorbell_barrier_dispatches_total\{')" \
    "$(metric_sum 'gpuq_doorbell_packets_total\{[^}]*packet_type="barrier"')" \
    "$(metric_sum 'gpuq_doorbell_packets_total\{[^}]*packet_type="(other|unreadable)"')"
}

# settled_doorbell_packets WANT: doorbell_packets once they equal WANT (up
# to 10 s), read again half a second later: an over-count would show by then.
settled_doorbell_packets() {
  for _ in $(seq 100); do
    [ "$(doorbell_packets)" = "$1" ] && break
    sleep 0.1
  done
  sleep 0.5
  doorbell_packets
}

# check_doorbell_packets WHAT TRUTH: passes when the agent's packets by type
# equal what the null CP consumed on the client's queues (TRUTH, a truth
# file of tests/nullgpu; truth_packets of nullgpu_env.sh).
check_doorbell_packets() {
  local want got rings
  want=$(truth_packets "$2")
  got=$(settled_doorbell_packets "$want")
  rings=$(metric_sum 'gpuq_doorbells_total\{')
  [ "$got" = "$want" ] &&
    pass "$1: gpuq_doorbell_packets_total by type (kernel_dispatch amd_ext barrier-bit barrier other) = the null CP's truth on the client's queues ($got) from $rings doorbell rings" ||
    fail "$1: doorbell packets by type $got, truth $want ($rings rings)" "$(curl -s "$URL" | grep '^gpuq_doorbell'; cat "$2")"
}

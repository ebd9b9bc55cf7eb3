#!/usr/bin/env bash
# The ROCm stacks users run in their own containers (ROCr 6.4.3 from Debian
# sid, 7.2.4 from experimental; tests/nullgpu/rocm_stacks.sh caches them as
# root file systems) against what gpuq-agent relies on, without a GPU:
#   - layouts: rocr_layout_check.cc compiled against each stack's own
#     libhsa-runtime-dev headers: amd_queue_t (write index at +56, read index
#     at +128), amd_signal_t (64 bytes, queue_ptr at +48) and the AQL packet
#     offsets the BPF side and the null CP read (a difference fails to
#     compile, and fails here);
#   - doorbell uprobes: a process inside each root (chroot: a container with
#     its own ROCm, less the mount namespace; the podman tiers cover that)
#     maps that root's libhsa-runtime64.so.1; the agent on
#     the host, with --doorbells=uprobe and no --hsa-runtime, finds both in
#     the processes' maps and attaches its four probes to each by symbol.
# Not here: ROCr 6.4/7.2 running queues. Since 6.3 ROCr links the thunk in,
# so the null GPU of this directory (a libhsakmt.so.1) cannot drive it; that
# needs a null GPU at the KFD interface: kfd_nullgpu_test.sh.
# Usage: rocm_stacks_test.sh SRC AGENT HOLD_RUNTIME
set -u
SRC=$1 AGENT=$2 HOLD=$3
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
use_background_cleanup
. "$SRC/tests/nullgpu/rocm_stacks.sh"
if [ "$(id -u)" != 0 ]; then
  skip "ROCm 6.4/7.2 roots: needs root (mmdebstrap, chroot, uprobes)"
  summary
  exit 77
fi
command -v g++ > /dev/null || { skip "g++ is missing"; summary; exit 77; }
STACKS=() FILES=()
for stack in 6.4 7.2; do
  if ! rocm_root "$stack"; then
    skip "ROCm $stack: $ROCM_WHY"
    continue
  fi
  pass "ROCm $stack: Debian's libhsa-runtime64-1 $ROCM_VERSION in $ROCM_ROOT"
  STACKS+=("$stack")
  # Layouts, against this stack's headers only: <hsa/...> from its root.
  mkdir -p "$TMP/inc-$stack"
  ln -sfn "$ROCM_ROOT/usr/include/hsa" "$TMP/inc-$stack/hsa"
  if g++ -std=c++17 -Wall -Werror -I "$TMP/inc-$stack" "$SRC/tests/nullgpu/rocr_layout_check.cc" \
    -o "$TMP/layout-$stack" > "$TMP/layout-$stack.log" 2>&1; then
    out=$("$TMP/layout-$stack")
    [ "$out" = "write_index_off=56 read_index_off=128 signal_queue_ptr=48 signal_size=64 packet=64" ] &&
      pass "ROCr $ROCM_VERSION's headers: the layouts the BPF side reads hold ($out)" ||
      fail "ROCr $ROCM_VERSION's headers: unexpected layout: $out"
  else
    fail "ROCr $ROCM_VERSION's headers: rocr_layout_check.cc does not compile against them" "$(head -n 20 "$TMP/layout-$stack.log")"
  fi
  # A process of the "container" mapping its own ROCr.
  lib=$(readlink -f "$ROCM_ROOT/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")
  FILES+=("${lib##*/}")
  cp "$HOLD" "$ROCM_ROOT/tmp/gpuq-hold-$$"
  on_exit "rm -f '$ROCM_ROOT/tmp/gpuq-hold-$$'" # the cached root keeps nothing of a run
  start_bg chroot "$ROCM_ROOT" "/tmp/gpuq-hold-$$" /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 \
    > "$TMP/hold-$stack.out" 2>&1
  for _ in $(seq 50); do grep -q '^LOADED\|^BAD' "$TMP/hold-$stack.out" && break; sleep 0.1; done
  grep -q '^LOADED' "$TMP/hold-$stack.out" &&
    pass "ROCm $stack: a process in the root mapped its ROCr ($(head -n 1 "$TMP/hold-$stack.out"), ${lib##*/})" ||
    fail "ROCm $stack: the holder did not map ROCr" "$(cat "$TMP/hold-$stack.out")"
done
if [ ${#STACKS[@]} = 0 ]; then
  summary
  exit 77
fi
port=$(free_port)
start_bg "$AGENT" --doorbells=uprobe --sample-interval 200ms --web.listen-address "127.0.0.1:$port" \
  --no-runtime-lookup > /dev/null 2> "$TMP/agent.log"
AGENT_PID=$BG_PID
URL=http://127.0.0.1:$port/metrics
wait_http "$URL" 100 || fail "the agent does not serve /metrics" "$(cat "$TMP/agent.log")"
# The runtime scan reads every process's maps within 5 sampling rounds.
for file in "${FILES[@]}"; do
  # A logfmt line: the message is quoted (it has spaces).
  for _ in $(seq 100); do grep -q "doorbell uprobes attached to .*/$file\"\$" "$TMP/agent.log" && break; sleep 0.1; done
  line=$(grep "doorbell uprobes attached to .*/$file\"\$" "$TMP/agent.log")
  [ -n "$line" ] && pass "the runtime scan found and probed $file inside its root: ${line#*msg=}" ||
    fail "no doorbell uprobes on $file" "$(cat "$TMP/agent.log")"
done
m=$(curl -s "$URL")
missing=
for probe in store_screlease store_relaxed queue_destroy shut_down; do
  grep -q "^gpuq_probe_attached{probe=\"doorbell_$probe\",mode=\"uprobe\",tier=\"uprobe\"} 1" <<< "$m" ||
    missing+=" doorbell_$probe"
done
[ -z "$missing" ] && pass "every doorbell probe attached by symbol (@ROCR_1 exports of ${FILES[*]})" ||
  fail "doorbell probes not attached:$missing" "$(grep doorbell <<< "$m"; cat "$TMP/agent.log")"
grep -q "not attached" "$TMP/agent.log" && fail "a library was refused" "$(cat "$TMP/agent.log")"
stop_bg "$AGENT_PID"
[ "$STOP_RC" = 0 ] && pass "the agent exits 0 on SIGTERM" || fail "the agent exited $STOP_RC" "$(cat "$TMP/agent.log")"
summary

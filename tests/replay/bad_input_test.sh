#!/usr/bin/env bash
# Bad input gets one clear line and a non-zero exit, never a crash or a hang:
# flags, captures, privileges, a kernel without amdkfd, a port in use.
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/net.sh"
CAP=$SRC/examples/default.gpuqcap
use_background_cleanup
tmp=$TMP

# --- flags ---------------------------------------------------------------
run "$AGENT" --bogus
expect_rc "unknown flag" 2
expect_err "unknown flag is named" "bogus"
run "$AGENT" --once --interval soon
expect_rc "bad duration" 2
expect_err "bad duration is explained" "not a duration"
run "$AGENT" --web.listen-address nowhere
expect_rc "bad listen address" 2
expect_err "bad listen address is explained" "HOST:PORT"
run "$AGENT" --once --output yaml --replay "$CAP"
expect_rc "unknown output format" 2
run "$AGENT" --once --replay "$tmp/missing.gpuqcap"
expect_rc "missing capture" 1
expect_err "missing capture is named" "missing.gpuqcap"
run "$AGENT" --reconcile-interval 0
expect_rc "zero reconcile interval" 2
run "$AGENT" --help
expect_rc "--help" 0
expect_out "--help lists --once" "--once"
run "$AGENT" --version
expect_rc "--version" 0
expect_out "--version names the ABI" "event ABI [0-9]+"

# --- captures --------------------------------------------------------------
head -c 4096 /dev/urandom > "$tmp/garbage"
run "$AGENT" --once --replay "$tmp/garbage"
expect_rc "garbage capture" 1
expect_err "garbage capture is explained" "not a gpuq capture"
: > "$tmp/empty"
run "$AGENT" --once --replay "$tmp/empty"
expect_rc "empty capture" 1
expect_err "empty capture is explained" "not a gpuq capture"
# ABI version is the u32 at byte 8 of the header.
cp "$CAP" "$tmp/abi99"
printf '\x63\x00\x00\x00' | dd of="$tmp/abi99" bs=1 seek=8 conv=notrunc status=none
run "$AGENT" --once --replay "$tmp/abi99"
expect_rc "wrong ABI version" 1
expect_err "wrong ABI version names both versions" "ABI version 99.*version 1"
size=$(stat -c %s "$CAP")
head -c $((size - 50)) "$CAP" > "$tmp/truncated"
run "$AGENT" --once --replay "$tmp/truncated"
expect_rc "truncated capture" 1
expect_err "truncated capture says where and what to do" "truncated at byte [0-9]+.*--allow-truncated"
run "$AGENT" --once --replay "$tmp/truncated" --allow-truncated --output prometheus
expect_rc "--allow-truncated replays the complete records" 0
expect_out "--allow-truncated output has queues" "^gpuq_queues\{"
# Corrupt the size field of the first record (u16 at header_size + 2).
cp "$CAP" "$tmp/corrupt"
printf '\x03\x00' | dd of="$tmp/corrupt" bs=1 seek=$((40 + 2)) conv=notrunc status=none
run "$AGENT" --once --replay "$tmp/corrupt"
expect_rc "corrupt record" 1
expect_err "corrupt record is located" "corrupt at byte 40"

# --- kernel and privileges -------------------------------------------------
if [ -e /sys/class/kfd/kfd ]; then
  skip "no-amdkfd checks: this machine has amdkfd"
else
  run "$AGENT" --once
  expect_rc "--once without amdkfd" 1
  expect_err "--once without amdkfd says so" "amdkfd is not present"
  expect_err "--once without amdkfd points to the bundled capture" "--replay examples/default.gpuqcap"
  run "$AGENT" check
  expect_rc "check without amdkfd" 1
  expect_out "check lists every hook" "process_exit \(kfd_process_notifier_release\)"
  if [ "$(id -u)" = 0 ]; then
    run "$AGENT" check --verify
    # fentry programs need their function's BTF, which no amdgpu means none
    # has; kprobe programs load regardless (the QEMU tier verifies fentry).
    expect_out "check --verify without amdkfd: no fentry program to verify" \
      "verifier, fentry programs: none verified \(no hooked function has BTF here\)"
    expect_out "check --verify: every kprobe program passes this kernel's verifier" \
      "verifier, kprobe programs: all accepted"
    expect_out "check --verify: every args-kprobe program passes this kernel's verifier" \
      "verifier, args-kprobe programs: all accepted"
    expect_out "check --verify: every tracepoint program passes this kernel's verifier" \
      "verifier, tracepoint programs: all accepted"
    expect_out "check --verify: the doorbell uprobe programs pass this kernel's verifier" \
      "verifier, doorbell programs: all accepted"
  else
    skip "check --verify: needs root"
  fi
fi
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
  # Copies the unprivileged user can read wherever the checkout lives (CI
  # clones into a mode-700 temp dir).
  cp "$AGENT" "$tmp/agent" && cp -r "$SRC/tests/fixtures/root" "$tmp/root"
  chmod 755 "$tmp" "$tmp/agent" && chmod -R a+rX "$tmp/root"
  run "${nobody[@]}" "$tmp/agent" check
  expect_rc "check as an unprivileged user" 1
  expect_err "unprivileged check says what is needed" "needs root"
  run "${nobody[@]}" "$tmp/agent" --once --host-root "$tmp/root"
  expect_rc "unprivileged --once on a host with amdkfd degrades to sysfs" 0
  expect_err "unprivileged --once explains the degradation" "needs root.*sysfs inventory only"
  cp "$CAP" "$tmp/cap" && chmod 644 "$tmp/cap"
  run "${nobody[@]}" "$tmp/agent" --once --replay "$tmp/cap"
  expect_rc "replay needs no privileges" 0
else
  skip "unprivileged checks: needs root and setpriv to drop privileges"
fi

# --- inputs that are not regular files, or too big ---------------------------
# Each must end with one line and exit 1: never a hang (a FIFO with no
# writer), never unbounded memory (a device, a huge or growing file).
mkfifo "$tmp/fifo"
for input in "$tmp/fifo" /dev/zero /dev/urandom; do
  run "$AGENT" --once --replay "$input"
  expect_rc "--replay $input" 1
  expect_err "--replay $input says what it is" "not a regular file"
  run "$AGENT" report "$input"
  expect_rc "report $input" 1
done
# Captures are read as a stream (sources/capture_stream.h): a 64 GiB
# (sparse) file is judged by its first bytes, never read whole.
truncate -s 64G "$tmp/huge.gpuqcap"
run "$AGENT" --once --replay "$tmp/huge.gpuqcap"
expect_rc "--replay of a 64 GiB (sparse) file of zeros" 1
expect_err "... is not a capture, by its first bytes" "huge.gpuqcap is not a gpuq capture \(bad magic\)"
head -c 40 "$CAP" > "$tmp/huge.gpuqcap"
truncate -s 64G "$tmp/huge.gpuqcap"
run "$AGENT" report "$tmp/huge.gpuqcap"
expect_rc "report of a capture header and 64 GiB of zeros" 1
expect_err "... corrupt at its first record" "huge.gpuqcap .*is corrupt at byte 40 \(record 1\)"
rm -f "$tmp/huge.gpuqcap"
# A capture that grows while it is read: read as it was when opened (its
# complete records, or a truncation at the cut), never followed forever.
cp "$CAP" "$tmp/grow.gpuqcap"
tail -c +41 "$CAP" > "$tmp/records"
(for _ in $(seq 400); do cat "$tmp/records" >> "$tmp/grow.gpuqcap"; done) &
grower=$!
run "$AGENT" --once --replay "$tmp/grow.gpuqcap" --allow-truncated
if [ "$RC" = 0 ]; then pass "--replay of a growing capture ends (exit 0)"; else fail "growing capture: exit $RC" "$ERR"; fi
wait "$grower"
for input in "$tmp/fifo" /dev/zero; do
  run "$AGENT" --replay "$CAP" --web.config.file "$input" --web.listen-address 127.0.0.1:0
  expect_rc "--web.config.file $input" 1
  expect_err "--web.config.file $input says what it is" "web.config.file $input: it is a"
done
head -c 2097152 /dev/zero | tr '\0' '#' > "$tmp/big.yml"
run "$AGENT" --replay "$CAP" --web.config.file "$tmp/big.yml" --web.listen-address 127.0.0.1:0
expect_rc "a 2 MiB web config" 1
expect_err "the web config's size limit is named" "more than the 1048576"
# Bytes echoed from a bad config stay on the one line, escaped: a carriage
# return or a terminal escape sequence in it would rewrite what is shown.
# Raw control bytes are not YAML; YAML's double-quoted escapes make them.
printf 'basic_auth_users:\n  \033[2Jroot\rx: not-a-hash\n' > "$tmp/ctrl.yml"
run "$AGENT" --replay "$CAP" --web.config.file "$tmp/ctrl.yml" --web.listen-address 127.0.0.1:0
expect_rc "a web config with control bytes" 1
expect_err "raw control bytes are named as not YAML" "ctrl.yml:2: not YAML: control characters are not allowed"
printf 'basic_auth_users:\n  "\\e[2Jroot\\rx": not-a-hash\n' > "$tmp/ctrl.yml"
run "$AGENT" --replay "$CAP" --web.config.file "$tmp/ctrl.yml" --web.listen-address 127.0.0.1:0
expect_rc "a web config with escaped control bytes" 1
# The log line is logfmt: the message's own backslashes are escaped again.
expect_err "its user is echoed escaped" 'user .\\\\x1b\[2Jroot\\\\x0dx. is not bcrypt'
if [ "$(printf '%s' "$ERR" | wc -l)" = 0 ] && ! printf '%s' "$ERR" | LC_ALL=C grep -q $'[\x01-\x1f]'; then
  pass "the error is one line without control bytes"
else
  fail "the error holds control bytes or several lines" "$(printf '%s' "$ERR" | od -c | head)"
fi
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$tmp/fifo" "$tmp/fifo" > "$tmp/tlsfifo.yml"
run "$AGENT" --replay "$CAP" --web.config.file "$tmp/tlsfifo.yml" --web.listen-address 127.0.0.1:0
expect_rc "TLS cert_file that is a FIFO" 1
expect_err "TLS cert_file FIFO is named" "TLS cert_file .*fifo: it is a FIFO"

# --- sysfs-only inventory on a fixture host (seeding with attribution) ------
run "$AGENT" --once --host-root "$SRC/tests/fixtures/root" --output prometheus
expect_rc "--once on the fixture host" 0
expect_out "fixture queues attributed to the docker container" \
  '^gpuq_queues\{container="3f6a9e2b1c8d",pod="",namespace="",gpu_id="[0-9]+",queue_type="compute"\} [1-9]'
expect_out "fixture host process has an empty container label" '^gpuq_queues\{container="",'
expect_out "fixture topology becomes gpu_info" '^gpuq_gpu_info\{gpu_id="45412"'
expect_out "seeded queues are not counted as creates" '^gpuq_queue_creates_total\{container="3f6a9e2b1c8d".* 0$'
expect_out "reconciliation found no drift" '^gpuq_reconcile_drift_queues\{gpu_id="45412"\} 0$'

# --- port in use -------------------------------------------------------------
port=$(free_port)
start_bg "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port" > /dev/null 2>&1
BG=$BG_PID
wait_http "http://127.0.0.1:$port/metrics" 50
run "$AGENT" --replay "$CAP" --web.listen-address "127.0.0.1:$port"
expect_rc "port in use" 1
expect_err "port in use is explained" "cannot listen on 127.0.0.1:$port.*--web.listen-address"
stop_bg "$BG"; rc=$STOP_RC
if [ "$rc" = 0 ]; then pass "daemon exits 0 on SIGTERM"; else fail "daemon exit $rc on SIGTERM"; fi
BG=
summary

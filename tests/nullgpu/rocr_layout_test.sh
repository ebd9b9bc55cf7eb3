#!/usr/bin/env bash
# The ROCr layouts of the BPF side against Debian's libhsa-runtime-dev: the
# static_asserts of rocr_layout_check.cc ran when it compiled; here, that its
# mirrored structs and constants are still those of bpf/doorbell.bpf.c and
# bpf/rocr_queue.bpf.h (field by field), and the checked binary runs.
# Usage: rocr_layout_test.sh SRC CHECK_BINARY
set -u
SRC=$1 BIN=${2-}
. "$SRC/tests/lib/assert.sh"
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  skip "rocr_layout_check not built: Debian's libhsa-runtime-dev (/usr/include/hsa/amd_hsa_queue.h) is missing"
  summary
  exit 77
fi
# fields FILE STRUCT: "type name" per field of struct STRUCT, BPF types
# spelled as <cstdint> ones.
fields() {
  awk -v s="struct $2 {" 'index($0, s) { on = 1; next } on && /^}/ { exit } on' "$1" |
    sed -e 's#/\*.*##' -e 's#//.*##' -e 's/__s64/int64_t/; s/__u64/uint64_t/; s/__u32/uint32_t/' \
      -e 's/;//' | awk 'NF >= 2 { print $1, $2 }'
}
CHECK=$SRC/tests/nullgpu/rocr_layout_check.cc
for pair in doorbell.bpf.c:amd_signal_head doorbell.bpf.c:amd_queue_ring rocr_queue.bpf.h:gpuq_hsa_queue_head; do
  f=$SRC/bpf/${pair%%:*} s=${pair#*:}
  a=$(fields "$f" "$s") b=$(fields "$CHECK" "$s")
  if [ -n "$a" ] && [ "$a" = "$b" ]; then
    pass "$s: bpf/${pair%%:*} and the checked mirror have the same $(wc -l <<< "$a") fields"
  else
    fail "$s differs between bpf/${pair%%:*} and rocr_layout_check.cc" "$(diff <(echo "$a") <(echo "$b"))"
  fi
done
for c in GPUQ_AMD_QUEUE_WRITE_INDEX_OFF:kWriteIndexOff GPUQ_AQL_PACKET_SIZE:kAqlPacketSize; do
  v=$(sed -n "s/^#define ${c%%:*} \([0-9]*\).*/\1/p" "$SRC/bpf/rocr_queue.bpf.h")
  w=$(sed -n "s/.*${c#*:} = \([0-9]*\);.*/\1/p" "$CHECK")
  [ -n "$v" ] && [ "$v" = "$w" ] && pass "${c%%:*} = $v, as checked" || fail "${c%%:*}: bpf says '$v', the check '$w'"
done
out=$("$BIN")
[ "$out" = "write_index_off=56 read_index_off=128 signal_queue_ptr=48 signal_size=64 packet=64" ] &&
  pass "Debian's headers: $out" || fail "unexpected layout: $out"
summary

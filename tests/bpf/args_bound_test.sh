#!/usr/bin/env bash
# args__arg (bpf/args_tier.bpf.h) reads a kprobe's argument from its
# register, of which there are five: a position past them must not compile
# (the old switch read the fourth for any of them). The whole kernel side
# with one more program, once at the last register position (compiles) and
# once past it (refused, naming the position).
#   args_bound_test.sh CLANG FLAGS...
set -u
CLANG=$1
shift
FLAGS=("$@")
dir=$(mktemp -d /tmp/gpuq-args-bound.XXXXXX)
trap 'rm -rf "$dir"' EXIT
SRC=$(cd "$(dirname "$0")/../.." && pwd)
failed=0
compile() {
  cat > "$dir/probe.bpf.c" << C
#include "$SRC/bpf/gpuq.bpf.c"
SEC("kprobe/kfd_ioctl")
int args_bound_probe(struct pt_regs *ctx)
{
	return (int)args__arg(ctx, $1);
}
C
  "$CLANG" "${FLAGS[@]}" -c "$dir/probe.bpf.c" -o "$dir/probe.o" > "$dir/out" 2>&1
}
if compile 4; then
  echo "ok   - position 4 (the fifth register argument) compiles"
else
  echo "FAIL - position 4 does not compile: $(head -n 3 "$dir/out")"
  failed=1
fi
for pos in 5 9; do
  if compile $pos; then
    echo "FAIL - position $pos compiles"
    failed=1
  elif grep -q "args__arg: position $pos is not one of the five register arguments" "$dir/out"; then
    echo "ok   - position $pos is refused at compile time: $(grep -o 'args__arg: position [^"]*' "$dir/out" | head -n 1)"
  else
    echo "FAIL - position $pos fails for another reason: $(head -n 3 "$dir/out")"
    failed=1
  fi
done
exit $failed

#!/usr/bin/env bash
# Header edits must rebuild the BPF objects (the Makefile-era bug of
# libbpf-bootstrap, where they rebuilt nothing): every bpf/*.bpf.c has a clang
# depfile, and every header of bpf/ and include/gpuq/ is named by the depfile
# of an object that includes it. The headers are globbed, not listed, so one
# added tomorrow is covered; one that no BPF object includes fails here too
# (include/gpuq/ holds what crosses from bpf/ to agent/).
set -u
SRC=$1 GEN=$2
. "$SRC/tests/lib/assert.sh"
for c in "$SRC"/bpf/*.bpf.c; do
  d=$GEN/$(basename "${c%.c}").o.d
  if [ -f "$d" ] && grep -qF "$c" "$d"; then
    pass "${d#"$GEN"/} names ${c#"$SRC"/}"
  else
    fail "no depfile $d naming $c"
  fi
done
for h in "$SRC"/bpf/*.h "$SRC"/include/gpuq/*.h; do
  if cat "$GEN"/*.bpf.o.d 2> /dev/null | grep -qF "$h"; then
    pass "${h#"$SRC"/} is in a BPF depfile"
  else
    fail "${h#"$SRC"/} is in no depfile of $GEN: no bpf/*.bpf.c includes it, or the build lost -MD"
  fi
done
summary

#!/usr/bin/env bash
# The host BPF tests verify gpuq's programs against amdkfd layouts typed by
# hand (progs/kfd_layout_6_1.bpf.c, kfd_layout_6_12.bpf.c: this host has no
# amdgpu). Here those layouts are held to the real amdgpu.ko BTF of Debian's
# 6.1 and 6.12 (debian_btf.sh): for every amdkfd field and enumerator gpuq's
# BPF object reads, its kind and byte offset (kfd_btf layout) must be the
# same. A field the layout lacks would leave the program paths that read it
# dead in the verifier tests (a CO-RE existence check that fails), unseen.
# The negative control: the 6.12 layout built with a wrong field type
# (kfd_layout_badtype.o) must differ.
#   layout_btf_test.sh KFD_BTF BPF_OBJECT HOST_VMLINUX_BTF DEBIAN_BTF_DIR LAYOUT_DIR
set -u
KFD_BTF=$1
OBJECT=$2
HOST_BTF=$3
DEBIAN=$4
LAYOUTS=$5
. "$(dirname "$0")/../lib/assert.sh"
dir=$(mktemp -d /tmp/gpuq-layout-btf.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# layout_lines OUT MODULE_BTF VMLINUX_BTF [standalone]
layout_lines() {
  local out=$1
  shift
  "$KFD_BTF" layout "$OBJECT" "$2" "$1" ${3:+"$3"} > "$out" 2> "$out.err"
}

for v in 6.1 6.12; do
  d=$DEBIAN/$v
  if [ ! -s "$d/vmlinux.btf" ] || [ ! -s "$d/amdgpu.btf" ]; then
    skip "$v layout: no Debian $v BTF in $d (debian_btf_setup said why)"
    continue
  fi
  layout_lines "$dir/real-$v" "$d/amdgpu.btf" "$d/vmlinux.btf" || {
    fail "$v layout: kfd_btf on the real amdgpu.ko BTF" "$(cat "$dir/real-$v.err")"
    continue
  }
  # The hand layout's own copies of the kernel types come from this host's
  # vmlinux.h: its BTF tells them apart from amdkfd's.
  layout_lines "$dir/hand-$v" "$LAYOUTS/kfd_layout_${v/./_}.o" "$HOST_BTF" standalone || {
    fail "$v layout: kfd_btf on kfd_layout_${v/./_}.o" "$(cat "$dir/hand-$v.err")"
    continue
  }
  n=$(wc -l < "$dir/real-$v")
  if [ "$n" -lt 20 ]; then
    fail "$v layout: only $n amdkfd fields and enumerators described (gpuq reads about 50)"
  elif diff "$dir/real-$v" "$dir/hand-$v" > "$dir/diff-$v"; then
    pass "$v layout: kfd_layout_${v/./_}.bpf.c = Debian's $v amdgpu.ko for all $n amdkfd fields and enumerators gpuq reads (kind and offset)"
  else
    fail "$v layout: kfd_layout_${v/./_}.bpf.c differs from Debian's $v amdgpu.ko (< real, > hand-typed)" \
      "$(grep '^[<>]' "$dir/diff-$v" | head -n 12)"
  fi
done

if [ -s "$dir/real-6.12" ]; then
  if layout_lines "$dir/bad" "$LAYOUTS/kfd_layout_badtype.o" "$HOST_BTF" standalone &&
    ! diff -q "$dir/real-6.12" "$dir/bad" > /dev/null; then
    pass "control: the 6.12 layout with queue_properties.type as __u32 differs ($(diff "$dir/real-6.12" "$dir/bad" | grep -m1 '^>'))"
  else
    fail "control: the 6.12 layout with a wrong field type is not told apart" "$(cat "$dir/bad.err" 2> /dev/null)"
  fi
fi
summary || exit 1
# nothing compared (no Debian BTF here): a skip, not a pass
[ "$PASSED" -gt 0 ] || exit 77

#!/usr/bin/env bash
# The host BPF tests verify gpuq's programs against Debian's real 6.1 and
# 6.12 amdkfd on a host without amdgpu, through libbpf's btf_custom_path,
# which takes one standalone BTF: debian_btf.sh writes each kernel's vmlinux
# and amdgpu.ko BTF as one (kfd_btf standalone). Here that file is held to
# the split BTF it is made of: for every amdkfd field and enumerator gpuq's
# BPF object reads, its kind and byte offset (kfd_btf layout) must be the
# same. The negative controls (kfd-badtype.btf, kfd-badsched.btf) must
# differ from 6.12's in their one field, and only there.
#   layout_btf_test.sh KFD_BTF BPF_OBJECT DEBIAN_BTF_DIR
set -u
KFD_BTF=$1
OBJECT=$2
DEBIAN=$3
. "$(dirname "$0")/../lib/assert.sh"
dir=$(mktemp -d /tmp/gpuq-layout-btf.XXXXXX)
trap 'rm -rf "$dir"' EXIT

# layout_lines OUT VMLINUX_BTF MODULE_BTF [standalone]
layout_lines() {
  local out=$1
  shift
  "$KFD_BTF" layout "$OBJECT" "$1" "$2" ${3:+"$3"} > "$out" 2> "$out.err"
}

for v in 6.1 6.12; do
  d=$DEBIAN/$v
  if [ ! -s "$d/vmlinux.btf" ] || [ ! -s "$d/amdgpu.btf" ] || [ ! -s "$d/kfd.btf" ]; then
    skip "$v layout: no Debian $v BTF in $d (debian_btf_setup said why)"
    continue
  fi
  layout_lines "$dir/real-$v" "$d/vmlinux.btf" "$d/amdgpu.btf" || {
    fail "$v layout: kfd_btf on the real amdgpu.ko BTF" "$(cat "$dir/real-$v.err")"
    continue
  }
  layout_lines "$dir/whole-$v" "$d/vmlinux.btf" "$d/kfd.btf" standalone || {
    fail "$v layout: kfd_btf on kfd.btf" "$(cat "$dir/whole-$v.err")"
    continue
  }
  n=$(wc -l < "$dir/real-$v")
  if [ "$n" -lt 20 ]; then
    fail "$v layout: only $n amdkfd fields and enumerators described (gpuq reads about 50)"
  elif diff "$dir/real-$v" "$dir/whole-$v" > "$dir/diff-$v"; then
    pass "$v layout: kfd.btf = Debian's $v amdgpu.ko for all $n amdkfd fields and enumerators gpuq reads (kind and offset)"
  else
    fail "$v layout: kfd.btf differs from Debian's $v amdgpu.ko (< split, > standalone)" \
      "$(grep '^[<>]' "$dir/diff-$v" | head -n 12)"
  fi
done

# control NAME FIELD: 6.12's kfd-NAME.btf differs from the real one in the
# line of FIELD only.
control() {
  local d=$DEBIAN/6.12
  if ! layout_lines "$dir/$1" "$d/vmlinux.btf" "$d/kfd-$1.btf" standalone; then
    fail "control $1: kfd_btf on kfd-$1.btf" "$(cat "$dir/$1.err")"
    return
  fi
  local changed
  changed=$(diff "$dir/real-6.12" "$dir/$1" | grep '^[<>]')
  if [ "$(printf '%s\n' "$changed" | grep -c "^[<>] struct $2: ")" = 2 ] &&
    [ "$(printf '%s\n' "$changed" | wc -l)" = 2 ]; then
    pass "control $1: $2 of another kind ($(printf '%s\n' "$changed" | grep '^>' | cut -c3-)), nothing else changed"
  else
    fail "control $1: not $2 alone changed" "$changed"
  fi
}
if [ -s "$dir/real-6.12" ]; then
  control badtype queue_properties.type
  control badsched qcm_process_device.evicted
fi
summary || exit 1
# nothing compared (no Debian BTF here): a skip, not a pass
[ "$PASSED" -gt 0 ] || exit 77

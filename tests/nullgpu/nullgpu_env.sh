# shellcheck shell=bash
# Helpers for the null-GPU tests (source after tests/lib/assert.sh and
# procs_init). The null thunk reaches a client only through the environment
# of the commands started here: nothing is installed, nothing on the host is
# changed.
#
#   nullgpu_require LIB [HIP_CLIENT]   skip (exit 77) naming what is missing
#   kfdnull_require WHAT LIB           the same for the KFD null GPU's tests
#                                      (root, unshare, LIB built)
#   kfdnull_workdir ROOT NAME LIB SRC  a run directory in a ROCm root (D)
#   root_hipcc ROOT OUT LOG [ARGS...]  D/OUT built by the root's hipcc
#   "${NULLGPU[@]}" CMD ARGS...        CMD with the null thunk and the lsmod
#                                      shim (set by nullgpu_require)
#   with_kfd.sh CMD ARGS...            CMD in a private mount namespace where
#                                      /dev/kfd exists (for rocminfo)
#   truth_queues FILE [FILTER]         the "queue" lines of a truth file
#   tv LINE KEY                        the value of KEY=... in a truth line
#
# Why a shim and a namespace: rocminfo (not ROCr) checks `lsmod | grep
# amdgpu` and that /dev/kfd opens read-write before it calls hsa_init. The
# shim is an `lsmod` early in PATH for the test's commands only; /dev/kfd is
# /dev/null bound over a fresh /dev in a mount namespace of rocminfo's own
# (the host's /dev is not touched, so the agent and other tests still see a
# host without amdkfd). ROCr itself never opens /dev/kfd here: the null thunk
# is its only way to the "driver".

NULLGPU_DEBIAN_PKGS="libhsa-runtime64-1 libamdhip64-5 rocminfo hipcc libhsakmt-dev (scripts/install-deps.sh --test)"

nullgpu_require() {
  local lib=$1 hip=${2-}
  if [ -z "$lib" ] || [ ! -f "$lib" ]; then
    skip "the null thunk was not built: Debian's libhsakmt-dev (hsakmt.h) is missing"
    summary
    exit 77
  fi
  if [ ! -e /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 ]; then
    skip "Debian's ROCr is missing: libhsa-runtime64-1 not installed ($NULLGPU_DEBIAN_PKGS)"
    summary
    exit 77
  fi
  if [ "$#" -ge 2 ] && { [ -z "$hip" ] || [ ! -x "$hip" ]; }; then
    skip "the HIP client was not built: Debian's hipcc (package hipcc) is missing"
    summary
    exit 77
  fi
  if [ "$#" -ge 2 ] && [ ! -e /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 ]; then
    skip "Debian's HIP runtime is missing: libamdhip64-5 not installed"
    summary
    exit 77
  fi
  NULLGPU_LIBDIR=$(dirname "$lib")
  mkdir -p "$TMP/nullgpu-bin"
  printf '#!/bin/sh\n# test shim: rocminfo greps lsmod for amdgpu\necho "Module                  Size  Used by"\necho "amdgpu                     0  0 (null GPU, tests/nullgpu)"\n' \
    > "$TMP/nullgpu-bin/lsmod"
  chmod +x "$TMP/nullgpu-bin/lsmod"
  nullgpu_prefix
}

# kfdnull_require WHAT LIB: the tests of the KFD null GPU (kfd_nullgpu.c)
# chroot ROCm roots and attach uprobes: skip (exit 77) naming what is missing
# for WHAT, or LIB (libgpuq_kfdnull.so) not built.
kfdnull_require() {
  if [ "$(id -u)" != 0 ] || ! command -v unshare > /dev/null; then
    skip "$1 on the KFD null GPU: needs root and unshare (mmdebstrap, chroot, mounts, uprobes)"
    summary
    exit 77
  fi
  if [ ! -f "$2" ]; then
    skip "the KFD null GPU (libgpuq_kfdnull.so) was not built"
    summary
    exit 77
  fi
}

# kfdnull_workdir ROOT NAME LIB SOURCE: a run directory inside ROOT (a
# cached root of rocm_stacks.sh, which keeps nothing of a run: removed at
# exit, with what ROCr and comgr leave in the root's /tmp) holding LIB as
# libgpuq_kfdnull.so and SOURCE; sets D, its path inside ROOT.
kfdnull_workdir() {
  D=/tmp/gpuq-$2-$$
  mkdir -p "$1$D"
  on_exit "rm -rf '$1$D'; rm -rf '$1'/tmp/gpuq-kfdnull.* '$1'/tmp/comgr-*"
  cp "$3" "$1$D/libgpuq_kfdnull.so"
  cp "$4" "$1$D/"
}

# kfdnull_rocr_stack STACK NAME LIB: the cached root of ROCm STACK
# (rocm_root; sets R) with a run directory NAME in it (kfdnull_workdir; sets
# D) and rocr_client built there by the host's C compiler against the root's
# own hsa.h and libhsa-runtime64; counts the stack in STACKS. False, with a
# skip or a fail said, when the root or the client is missing.
kfdnull_rocr_stack() {
  local cc log=$TMP/cc-$1-$2.log
  if ! rocm_root "$1"; then
    skip "ROCm $1: $ROCM_WHY"
    return 1
  fi
  STACKS=$((STACKS + 1))
  R=$ROCM_ROOT
  kfdnull_workdir "$R" "$2" "$3" "$SRC/tests/nullgpu/rocr_client.c"
  if cc=$(command -v cc || command -v gcc) &&
    "$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -I "$R/usr/include" "$SRC/tests/nullgpu/rocr_client.c" \
      -o "$R$D/rocr_client" -L "$R/usr/lib/x86_64-linux-gnu" -l:libhsa-runtime64.so.1 \
      -Wl,--allow-shlib-undefined > "$log" 2>&1; then
    return 0
  fi
  fail "ROCm $1: rocr_client does not build against the root's hsa.h (cc: ${cc:-none})" "$(head -20 "$log" 2> /dev/null)"
  return 1
}

# root_hipcc ROOT OUT LOG ARGS...: D/OUT built in ROOT by its own hipcc for
# gfx90a from ARGS (sources in D, libraries), its output in LOG; true when
# the program is there.
root_hipcc() {
  local r=$1 out=$2 log=$3
  shift 3
  # HOME inside the run's directory: comgr (HIP 7.2) caches in ~/.cache
  run_group "${IN_ROOT[@]}" "$r" env HOME="$D" hipcc --offload-arch=gfx90a -std=c++17 -O2 -Wall -Wextra -Werror \
    -o "$D/$out" "$@" > "$log" 2>&1
  [ "$RUN_RC" = 0 ] && [ -x "$r$D/$out" ]
}

# NULLGPU: the command prefix (an array) that gives CMD the null thunk and
# the lsmod shim: run_group "${NULLGPU[@]}" CMD ARGS...
nullgpu_prefix() {
  NULLGPU=(env "PATH=$TMP/nullgpu-bin:$PATH" "LD_LIBRARY_PATH=$NULLGPU_LIBDIR")
}

truth_queues() {
  if [ -n "${2-}" ]; then grep '^queue ' "$1" | grep -E -- "$2"; else grep '^queue ' "$1"; fi
}

tv() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p" | head -1; }

# sum FILE FILTER KEY: KEY summed over the truth's queue lines matching FILTER.
sum() { truth_queues "$1" "$2" | tr ' ' '\n' | sed -n "s/^$3=//p" | awk '{ s += $1 } END { print s + 0 }'; }

# truth_packets FILE: the packets the null CP consumed on the client's own
# queues, as "KERNEL_DISPATCH AMD_EXT BARRIER_BIT BARRIER OTHER"
# (doorbell_packets' order; AMD_EXT and BARRIER_BIT: the extended kernel
# dispatches and those with the barrier bit among the dispatches).
truth_packets() {
  echo "$(sum "$1" owner=client dispatches) $(sum "$1" owner=client ext_dispatches)" \
    "$(sum "$1" owner=client barrier_dispatches)" \
    "$(sum "$1" owner=client barriers)" \
    "$(($(sum "$1" owner=client vendor) + $(sum "$1" owner=client agent) + $(sum "$1" owner=client other)))"
}

# truth_of DIR PREFIX: the one truth file a run left, copied out of the root.
truth_of() {
  local f
  for f in "$1/$2".[0-9]*; do
    case $f in *.tmp.*) ;; *) [ -f "$f" ] && echo "$f" && return ;; esac
  done
}

# shellcheck shell=bash
# Helpers for the null-GPU tests (source after tests/lib/assert.sh and
# procs_init). The null thunk reaches a client only through the environment
# of the commands started here: nothing is installed, nothing on the host is
# changed.
#
#   nullgpu_require LIB [HIP_CLIENT]   skip (exit 77) naming what is missing
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

# NULLGPU: the command prefix (an array) that gives CMD the null thunk and
# the lsmod shim: run_group "${NULLGPU[@]}" CMD ARGS...
nullgpu_prefix() {
  NULLGPU=(env "PATH=$TMP/nullgpu-bin:$PATH" "LD_LIBRARY_PATH=$NULLGPU_LIBDIR")
}

truth_queues() {
  if [ -n "${2-}" ]; then grep '^queue ' "$1" | grep -E -- "$2"; else grep '^queue ' "$1"; fi
}

tv() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p" | head -1; }

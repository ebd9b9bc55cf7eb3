# shellcheck shell=bash
# The ROCm stacks users run in their containers in 2026, as Debian root file
# systems cached for the tests (source it). Debian's packages only, through
# mmdebstrap with sources of its own: the system's apt sources stay
# untouched. sid has ROCr 6.4.3; experimental has ROCr 7.2.4. Both need
# glibc 2.38+, so both are sid roots, and nothing of them runs on this host
# but inside them (chroot), as in a container with its own ROCm.
#
# rocm_root STACK (6.4 or 7.2): sets ROCM_ROOT (the root file system) and
# ROCM_VERSION (its libhsa-runtime64-1 version), building it on first use
# (about 45 s and 170 MB each); or returns 1 with ROCM_WHY, one line naming
# what is missing (mmdebstrap, the mirror, or the version: once sid moves
# past 6.4 the cached root keeps it, and a fresh machine says so).

ROCM_CACHE=${GPUQ_ROCM_CACHE:-${XDG_CACHE_HOME:-/var/cache}/gpuq-rocm}
# Bumped when what a root holds changes: older roots are rebuilt.
ROCM_FORMAT=1
ROCM_PACKAGES="libhsa-runtime64-1 libhsa-runtime-dev rocminfo"

rocm_mirror() {
  local m
  m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
  [ -n "$m" ] || m=$(awk '/^deb / && !/security/ { print $2; exit }' /etc/apt/sources.list 2> /dev/null)
  echo "${m:-http://deb.debian.org/debian}"
}

rocm_root() {
  local stack=$1 dir tmp mirror suite p include=() sources=() log
  ROCM_ROOT="" ROCM_VERSION="" ROCM_WHY=""
  dir=$ROCM_CACHE/rocm-$stack
  mirror=$(rocm_mirror)
  case $stack in
    6.4) suite=sid sources=("deb $mirror sid main") ;;
    7.2) suite=experimental sources=("deb $mirror sid main" "deb $mirror experimental main") ;;
    *) ROCM_WHY="no recipe for ROCm $stack" && return 1 ;;
  esac
  if [ "$(cat "$dir/.complete" 2> /dev/null)" = "$ROCM_FORMAT" ]; then
    ROCM_ROOT=$dir/root ROCM_VERSION=$(cat "$dir/version")
    return 0
  fi
  command -v mmdebstrap > /dev/null || { ROCM_WHY="mmdebstrap is not installed (package mmdebstrap)" && return 1; }
  for p in $ROCM_PACKAGES; do
    # experimental's packages by name: apt prefers sid's otherwise
    if [ "$suite" = experimental ] && [ "$p" != rocminfo ]; then include+=("$p/experimental"); else include+=("$p"); fi
  done
  mkdir -p "$ROCM_CACHE"
  tmp=$ROCM_CACHE/.tmp-rocm-$stack.$$
  log=$ROCM_CACHE/mmdebstrap-$stack.log
  rm -rf "$tmp"
  mkdir -p "$tmp"
  if ! mmdebstrap --variant=apt --mode=root --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$(IFS=,; echo "${include[*]}")" sid "$tmp/root" "${sources[@]}" > "$log" 2>&1; then
    ROCM_WHY="mmdebstrap of Debian $suite with ${include[*]} failed: $(grep -E '^(E|W):' "$log" | tail -n 2 | tr '\n' ' ')"
    rm -rf "$tmp"
    return 1
  fi
  ROCM_VERSION=$(chroot "$tmp/root" dpkg-query -W -f '${Version}' libhsa-runtime64-1 2> /dev/null)
  case $ROCM_VERSION in
    "$stack".*) ;;
    *)
      ROCM_WHY="Debian $suite's libhsa-runtime64-1 is '$ROCM_VERSION', not ROCm $stack"
      rm -rf "$tmp"
      return 1
      ;;
  esac
  echo "$ROCM_VERSION" > "$tmp/version"
  echo "$ROCM_FORMAT" > "$tmp/.complete"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  ROCM_ROOT=$dir/root
}

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
#
# rocm_root STACK hip: the HIP flavour of that root, cached apart (its own
# directory and format): the same packages plus HIP and its compiler (sid:
# libamdhip64-6 6.4.3 and hipcc 7.0.2; experimental: libamdhip64-7 and
# hipcc 7.2.4, with experimental's comgr), about 0.9 GB each (39 s for
# 6.4 and 114 s for 7.2 on the project machine). Also sets ROCM_HIP_VERSION
# (the libamdhip64 package's version). The small roots stay as they are.
#
# rocm_root 6.4 rocblas: the HIP flavour plus rocBLAS (sid's librocblas-dev
# 6.4.4, built for HIP 6.4; experimental has no rocBLAS 7), cached apart;
# also sets ROCM_ROCBLAS_VERSION.

ROCM_CACHE=${GPUQ_ROCM_CACHE:-${XDG_CACHE_HOME:-/var/cache}/gpuq-rocm}
# Bumped when what a root holds changes: older roots are rebuilt.
ROCM_FORMAT=1
ROCM_PACKAGES="libhsa-runtime64-1 libhsa-runtime-dev rocminfo"
# The HIP flavour's own format and packages (hipcc pulls its clang).
ROCM_HIP_FORMAT=1
ROCM_HIP_PACKAGES="libamdhip64-dev hipcc"
ROCM_ROCBLAS_FORMAT=1
ROCM_ROCBLAS_PACKAGES="librocblas-dev"

rocm_mirror() {
  local m
  m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
  [ -n "$m" ] || m=$(awk '/^deb / && !/security/ { print $2; exit }' /etc/apt/sources.list 2> /dev/null)
  echo "${m:-http://deb.debian.org/debian}"
}

# One build of a root at a time (flock): the simulator tier shares the HIP
# roots with its guests while the host's HIP tests may be asking for them.
rocm_root() {
  local lock rc
  mkdir -p "$ROCM_CACHE"
  exec {lock}> "$ROCM_CACHE/.lock-$1${2:+-$2}"
  flock "$lock"
  rocm_root_locked "$@"
  rc=$?
  exec {lock}>&-
  return $rc
}

rocm_root_locked() {
  local stack=$1 flavour=${2:-} dir tmp mirror suite p include=() sources=() log
  local format=$ROCM_FORMAT packages=$ROCM_PACKAGES name=$1 hip blas
  ROCM_ROOT="" ROCM_VERSION="" ROCM_WHY="" ROCM_HIP_VERSION="" ROCM_ROCBLAS_VERSION=""
  case $flavour in
    "") ;;
    hip) format=$ROCM_HIP_FORMAT packages="$ROCM_PACKAGES $ROCM_HIP_PACKAGES" name=$stack-hip
      # libamdhip64-7 wants experimental's comgr, which apt does not pick alone
      [ "$stack" != 7.2 ] || packages="$packages libamd-comgr3 libamd-comgr-dev" ;;
    rocblas)
      [ "$stack" = 6.4 ] || { ROCM_WHY="Debian has no rocBLAS built for HIP $stack (sid's librocblas 6.4.4 is HIP 6.4's)" && return 1; }
      format=$ROCM_ROCBLAS_FORMAT packages="$ROCM_PACKAGES $ROCM_HIP_PACKAGES $ROCM_ROCBLAS_PACKAGES" name=$stack-rocblas ;;
    *) ROCM_WHY="no flavour '$flavour' of the ROCm roots" && return 1 ;;
  esac
  dir=$ROCM_CACHE/rocm-$name
  mirror=$(rocm_mirror)
  case $stack in
    6.4) suite=sid sources=("deb $mirror sid main") ;;
    7.2) suite=experimental sources=("deb $mirror sid main" "deb $mirror experimental main") ;;
    *) ROCM_WHY="no recipe for ROCm $stack" && return 1 ;;
  esac
  if [ "$(cat "$dir/.complete" 2> /dev/null)" = "$format" ]; then
    ROCM_ROOT=$dir/root ROCM_VERSION=$(cat "$dir/version")
    [ -z "$flavour" ] || ROCM_HIP_VERSION=$(cat "$dir/hip-version")
    [ "$flavour" != rocblas ] || ROCM_ROCBLAS_VERSION=$(cat "$dir/rocblas-version")
    return 0
  fi
  command -v mmdebstrap > /dev/null || { ROCM_WHY="mmdebstrap is not installed (package mmdebstrap)" && return 1; }
  for p in $packages; do
    # experimental's packages by name: apt prefers sid's otherwise
    if [ "$suite" = experimental ] && [ "$p" != rocminfo ]; then include+=("$p/experimental"); else include+=("$p"); fi
  done
  mkdir -p "$ROCM_CACHE"
  tmp=$ROCM_CACHE/.tmp-rocm-$name.$$
  log=$ROCM_CACHE/mmdebstrap-$name.log
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
  if [ -n "$flavour" ]; then
    hip=$(chroot "$tmp/root" dpkg-query -W -f '${Package} ${Version}\n' 'libamdhip64-[0-9]*' 2> /dev/null |
      awk '$2 != "" { print $2; exit }')
    case $hip in
      "$stack".*) ;;
      *)
        ROCM_WHY="Debian $suite's libamdhip64 is '$hip', not HIP $stack"
        rm -rf "$tmp"
        return 1
        ;;
    esac
    echo "$hip" > "$tmp/hip-version"
    ROCM_HIP_VERSION=$hip
  fi
  if [ "$flavour" = rocblas ]; then
    blas=$(chroot "$tmp/root" dpkg-query -W -f '${Version}' librocblas-dev 2> /dev/null)
    [ -n "$blas" ] || { ROCM_WHY="Debian $suite has no librocblas-dev" && rm -rf "$tmp" && return 1; }
    echo "$blas" > "$tmp/rocblas-version"
    ROCM_ROCBLAS_VERSION=$blas
  fi
  echo "$ROCM_VERSION" > "$tmp/version"
  echo "$format" > "$tmp/.complete"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  ROCM_ROOT=$dir/root
}

# "${IN_ROOT[@]}" ROOT CMD...: CMD chrooted in ROOT with /proc, /sys and
# /dev, in a mount namespace of its own (nothing stays mounted after it).
IN_ROOT=(unshare --mount --propagation private bash -c '
  r=$1; shift
  mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" &&
    mount --rbind /dev "$r/dev" && exec chroot "$r" "$@"' in_root)

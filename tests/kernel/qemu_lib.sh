# Shared host side of the QEMU kernel tiers (run_qemu_tier.sh: the real
# amdgpu.ko; run_sim_tier.sh: the KFD simulator). Sourced, not run.
#
# The caller sets SRC (repository), WORK (logs, scratch), CACHE (kernel
# cache), BOOT_TIMEOUT (seconds per boot), KERNELS (labels), N_CHECKS (checks
# per kernel), AGENT, CHECKER (require_checker), sources tests/lib/assert.sh,
# and defines:
#   expected_checks SCOPE LABEL   the checks a guest must report
#                                 (judge_markers), from CHECKER
# shellcheck shell=bash

# qemu runs in a process group of its own that the one EXIT trap of
# tests/lib/procs.sh stops if the tier is interrupted.
. "$SRC/tests/lib/procs.sh"
procs_init

export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -q -o DPkg::Lock::Timeout=600 -o APT::Sandbox::User=root)

note() { echo "# $*"; }

# skip_kernel LABEL REASON: all of LABEL's checks are skipped.
skip_kernel() {
  SKIPPED=$((SKIPPED + N_CHECKS))
  echo "skip - kernel $1: all $N_CHECKS checks skipped: $2"
}
# skip_all REASON: nothing can run here; exit 0 with everything skipped.
skip_all() {
  echo "GPUQ-KTIER SKIPPED: $1"
  local k
  for k in $KERNELS; do skip_kernel "$k" "$1"; done
  summary
  exit 0
}
# require_agent: a missing agent binary is a failure, never a skip.
require_agent() {
  if [ ! -x "$AGENT" ]; then
    fail "agent binary $AGENT is not an executable file"
    summary
    exit 1
  fi
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The tier's host-side work (downloads, unpacking, initramfs and module
# builds, judging) runs at nice 10 from here on, its guests at nice 0
# (guest_slot.sh): beside the other kernel tier (ctest -j2 -L kernel, as
# scripts/test.sh runs them) that work takes what the guests leave, not a
# guest's core. A tier's preparation on its own (KTIER_PHASE=prepare, below)
# runs among the host tiers, as any of their tests.
[ "${KTIER_PHASE:-}" = prepare ] || renice -n 10 -p $$ > /dev/null

# ---- the preparation apart from the guests --------------------------------------
# Each kernel tier is two ctest tests: kernel_<tier>_prepare (the tier's
# script with --prepare, KTIER_PHASE=prepare; label `prepare`) downloads,
# unpacks, builds and packs everything its guests need, and kernel_<tier>
# boots them. scripts/test.sh runs the first among the host tiers, where it
# takes cores they leave idle at their end, and the second after them, so
# the kernel stage starts with its guests instead of a minute or more of one
# tier's preparation while the other tier's guests wait (docs/
# test-suite-time.md). PREPARED holds the stamp of what the preparation
# read and the state it leaves (bash declarations); a tier finds it with
# prepared_fresh and prepares itself where it is missing or another build's
# (a tier run on its own, or after a rebuild).
PREPARED=$WORK/prepared.sh
# prepared_stamp FILE...: a digest of the FILEs (the binaries the guests
# run), the tiers' and the null GPU's sources, the GPUQ_KTEST_ knobs, the
# cache and the suite run (GPUQ_TEST_RUN: a series resolves once per run).
prepared_stamp() {
  {
    printf '%s\n' "$0" "$CACHE" "${GPUQ_TEST_RUN:-}"
    env | grep '^GPUQ_KTEST_' | sort
    cat "$@"
    find "$SRC/tests/kernel" "$SRC/tests/nullgpu" "$SRC/tests/lib" -type f | sort | xargs cat
  } 2> /dev/null | md5sum | cut -d' ' -f1
}
# prepared_fresh FILE...: PREPARED is there and its stamp is this build's.
prepared_fresh() {
  [ -f "$PREPARED" ] && [ "$(head -n 1 "$PREPARED")" = "# stamp $(prepared_stamp "$@")" ]
}
# prepared_or_lock FILE...: REUSED=1 and PREPARED's state where it is this
# build's (the tier's run after its preparation test), else REUSED=0, no
# PREPARED nor compatibility rows of an earlier run, and the prepare lock.
prepared_or_lock() {
  REUSED=0
  if [ "$KTIER_PHASE" = all ] && prepared_fresh "$@"; then
    . "$PREPARED"
    REUSED=1
    return 0
  fi
  rm -f "$WORK/compat.tsv" "$PREPARED"
  prepare_lock
}
# prepared_end NAME VAR...: after the tier's preparation (or what its
# preparation test left, REUSED): --prepare saves the VARs in PREPARED
# (stamped with PREPARED_INPUTS) and exits with the preparation's checks; a
# tier with no kernel ready is skipped; a reused preparation whose payload
# failed (PAYLOAD_RC) fails here too, the guests that need it not booting.
# NAME: the tier's preparation test (kernel_qemu_prepare, kernel_sim_prepare).
prepared_end() {
  local name=$1
  shift
  if [ "$REUSED" = 0 ] && [ "$KTIER_PHASE" = prepare ] && [ ${#READY[@]} -gt 0 ]; then
    prepared_save "$@" -- "${PREPARED_INPUTS[@]}"
  fi
  if [ ${#READY[@]} = 0 ]; then
    echo "GPUQ-KTIER SKIPPED: no kernel could be had"
    summary
    exit 0
  fi
  if [ "$KTIER_PHASE" = prepare ]; then
    note "$name: prepared in $(($(date +%s) - T_START)) s: ${#READY[@]} kernels, the guest payload $([ "$PAYLOAD_RC" = 0 ] && echo built || echo failed); logs in $WORK"
    summary
    exit
  fi
  [ "$REUSED$PAYLOAD_RC" != 11 ] || fail "the guest payload did not build ($name's output says why)"
}
# prepared_save VAR... -- FILE...: PREPARED with the stamp and VARs.
prepared_save() {
  local vars=()
  while [ "$1" != -- ]; do
    vars+=("$1")
    shift
  done
  shift
  {
    echo "# stamp $(prepared_stamp "$@")"
    declare -p "${vars[@]}" | sed 's/^declare /declare -g /'
    echo "PREPARED_AT=$(date +%s)"
  } > "$PREPARED.tmp" && mv "$PREPARED.tmp" "$PREPARED"
}

# Each guest waits for a slot with its rank (GUEST_RANK[label], guest_slot.sh
# GPUQ_GUEST_SLOT_RANK: the seconds it took in a measured run), so that of the
# guests waiting, across both tiers, the longest goes first.
# slots_hold RANK / slots_release: a tier marks itself waiting with RANK
# from its start (the simulator's, whose guests are the longest), so that
# while it prepares and starts its guests the other tier's shorter ones
# leave the cores to them (guest_slot.sh --mark: the mark it honours, of a
# live process). Each guest run_guests starts hands the mark on once its own
# is in place (GPUQ_GUEST_SLOT_HANDOFF, GPUQ_GUEST_SLOT_NEXT): at the rank of
# the tier's next guest, or removed by the last; the tier's exit removes it
# if it never got there.
declare -A GUEST_RANK
SLOT_MARK=""
slots_hold() {
  local mark
  mark=$("$SRC/tests/kernel/guest_slot.sh" --mark $$) && echo "$1" > "$mark" || return 0
  SLOT_MARK=$mark
  trap "rm -f '$mark'" EXIT
}
slots_release() {
  [ -z "$SLOT_MARK" ] || rm -f "$SLOT_MARK"
  SLOT_MARK=""
}

# prepare_lock / prepare_unlock: the kernel tiers run side by side (their
# guests share the cores through guest_slot.sh), but one at a time installs
# packages, updates the kernel apt lists and downloads and unpacks into the
# shared CACHE: prepare() replaces a series' directory and removes older
# ones, and apt runs without its locks there (kernel_apt). Held from the
# tier's start until its guests are about to boot; a tier that exits early
# frees it with its descriptor.
PREPARE_LOCK_FD=""
prepare_lock() {
  local t0
  mkdir -p "$CACHE"
  exec {PREPARE_LOCK_FD}>> "$CACHE/.prepare.lock"
  t0=$(now)
  flock "$PREPARE_LOCK_FD"
  note "cache $CACHE: prepare lock taken after $(since "$t0") s"
}
prepare_unlock() {
  [ -n "$PREPARE_LOCK_FD" ] || return 0
  exec {PREPARE_LOCK_FD}>&-
  PREPARE_LOCK_FD=""
}

# need_packages PKG...: installs the missing ones with apt-get, or skip_all.
need_packages() {
  local missing=() p t0
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
    skip_all "missing packages ${missing[*]} and cannot install them (needs root and apt-get)"
  fi
  t0=$(now)
  if ! "${APT[@]}" install -y --no-install-recommends "${missing[@]}" > "$WORK/apt-install.log" 2>&1; then
    "${APT[@]}" update > "$WORK/apt-update.log" 2>&1
    "${APT[@]}" install -y --no-install-recommends "${missing[@]}" > "$WORK/apt-install.log" 2>&1 ||
      skip_all "apt-get could not install ${missing[*]}: $(tail -n 2 "$WORK/apt-install.log" | tr '\n' ' ')"
  fi
  note "installed ${missing[*]} in $(since "$t0") s"
}

# need_tools TOOL...: each must be on PATH, or skip_all.
need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" > /dev/null || skip_all "$tool is not available"
  done
}

# ---- kernels: resolve, download and unpack once into the cache ---------------
# A kernel is named by its series label (6.1, 6.12, 7.3...). Each is cached as
# $CACHE/<package>_<version>/ holding vmlinuz, kver, label, package,
# deb-bytes, config, modules.cpio.gz (the amdgpu closure, plain .ko, with
# its own modules.dep) and share.cpio.gz (the same of 9p over virtio); .complete holds CACHE_FORMAT, so a cache written by
# another version of this script is rebuilt.
CACHE_FORMAT=4

# closure_cpio MODDIR KVER OUT "MODULES.DEP LINES" LABEL: the modules those
# lines name (each line a module and its dependencies), plain .ko with a
# modules.dep of their own, as the gzipped cpio OUT.
closure_cpio() {
  local moddir=$1 kv=$2 out=$3 lines=$4 label=$5 x m rel
  x=$(mktemp -d)
  mkdir -p "$x/lib/modules/$kv"
  for m in $(echo "$lines" | tr -d ':' | tr ' ' '\n' | sort -u); do
    rel=$(dirname "$m")
    mkdir -p "$x/lib/modules/$kv/$rel"
    cp "$moddir/$m" "$x/lib/modules/$kv/$rel/"
  done
  for m in modules.builtin modules.builtin.modinfo modules.order; do
    [ -f "$moddir/$m" ] && cp "$moddir/$m" "$x/lib/modules/$kv/"
  done
  # 6.12 ships .ko.xz: busybox modprobe can load those, but decompressing
  # under TCG costs ~3 s per boot; plain .ko only grow the initramfs by 3 MB.
  find "$x" -name '*.ko.xz' -exec xz -d {} +
  find "$x" -name '*.ko.zst' -exec zstd -q -d --rm {} +
  [ -f "$x/lib/modules/$kv/modules.order" ] &&
    sed -i -E 's/\.ko\.(xz|zst)$/.ko/' "$x/lib/modules/$kv/modules.order"
  depmod -b "$x" "$kv" 2>> "$WORK/depmod-$label.log" # a modules.dep of just the closure
  (cd "$x" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
  rm -rf "$x"
}

# The series the kernel tiers know, oldest first. kernel_matrix adds any
# newer series the mirror serves; a listed series apt no longer serves is
# skipped with its name.
KERNEL_SERIES="6.1 6.12 6.16 6.17 6.18 6.19 7.0 7.1 7.2 7.3"

# The series a run without GPUQ_KTEST_KERNELS checks in full: Debian 12's
# own series (6.1), then kernels_to_boot adds the newest series the mirror
# serves with its modules. KERNEL_SERIES_ATTACH: the series it boots for the
# attach and verifier checks only: the longterm 6.12 and 6.18 and 6.17
# (Ubuntu 24.04's HWE kernel series). With every series of the matrix
# booted, four in full (6.12 402 s and 6.18 551 s of guest time in full;
# 6.16 254 s, 7.2 296 s attach-only), the suite took over CI's
# 90 minutes. GPUQ_KTEST_KERNELS=all checks every series of kernel_matrix
# in full; the compatibility table keeps each series' last result, with
# its date (6.16 and 7.2 there are from GPUQ_KTEST_KERNELS=all runs).
KERNEL_SERIES_DEFAULT="6.1"
KERNEL_SERIES_ATTACH="6.12 6.17 6.18"

# Every Debian suite a kernel series comes from, through one private apt
# configuration in the cache: the system's sources stay untouched. sid's and
# experimental's Release files may look expired to a machine whose clock is
# behind the mirror's snapshot, hence Check-Valid-Until=false.
KERNEL_SUITES="bookworm bookworm-updates trixie trixie-backports sid experimental"
KAPT=()
KAPT_STATE="" # "", ok, or why the lists could not be fetched
kernel_apt() {
  [ -n "$KAPT_STATE" ] && return 0
  local d=$CACHE/apt mirror security s
  mirror=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
  [ -n "$mirror" ] || mirror=$(awk '/^deb / && !/security/ { print $2; exit }' /etc/apt/sources.list 2> /dev/null)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  security=$(awk '/^URIs:/ && $2 ~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
  [ -n "$security" ] || security=http://deb.debian.org/debian-security
  mkdir -p "$d/lists/partial" "$d/archives/partial"
  {
    for s in $KERNEL_SUITES; do echo "deb $mirror $s main"; done
    echo "deb $security bookworm-security main"
  } > "$d/sources.list"
  KAPT=(-o "Dir::Etc::sourcelist=$d/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$d/lists"
    -o "Dir::Cache::archives=$d/archives" -o "Dir::Cache::pkgcache=$d/pkgcache.bin" -o "Dir::Cache::srcpkgcache=$d/srcpkgcache.bin"
    -o Debug::NoLocking=1 -o Acquire::Check-Valid-Until=false)
  # Once per suite run (GPUQ_TEST_RUN, scripts/test.sh): the host tests'
  # debian_btf.sh and both tiers each updated them, about 30 s each.
  if [ -n "${GPUQ_TEST_RUN:-}" ] && [ "$(cat "$d/updated-by" 2> /dev/null)" = "$GPUQ_TEST_RUN" ]; then
    KAPT_STATE=ok
  elif "${APT[@]}" "${KAPT[@]}" update > "$WORK/apt-update-kernels.log" 2>&1; then
    KAPT_STATE=ok
    echo "${GPUQ_TEST_RUN:-}" > "$d/updated-by"
  else
    KAPT_STATE="apt-get update of $KERNEL_SUITES failed: $(tail -n 1 "$WORK/apt-update-kernels.log")"
    note "kernels: $KAPT_STATE (cached kernels still count)"
  fi
}

# image_packages SERIES: every amd64 image package of that series apt knows
# (signed or unsigned; not cloud, rt or dbg), one per line.
image_packages() {
  local re="^linux-image-${1//./\\.}([.-][0-9][^ ]*)?-amd64(-unsigned)?\$"
  apt-cache "${KAPT[@]}" pkgnames "linux-image-$1" 2> /dev/null | grep -E "$re" | grep -vE -- '-(cloud|rt)-amd64|-dbg'
}

# kernel_matrix: KERNEL_SERIES plus any newer series the mirror serves.
kernel_matrix() {
  local newest extra
  kernel_apt
  newest=${KERNEL_SERIES##* }
  extra=$(apt-cache "${KAPT[@]}" pkgnames linux-image- 2> /dev/null |
    sed -nE 's/^linux-image-([0-9]+\.[0-9]+)[.+-].*-amd64(-unsigned)?$/\1/p' | sort -uV |
    awk -v n="$newest" '{ split($1, a, "."); split(n, b, "."); if (a[1] > b[1] || (a[1] == b[1] && a[2] > b[2])) print }')
  echo $KERNEL_SERIES $extra
}

# newest_series: the newest series of kernel_matrix that resolves (its image
# and modules are served); empty if none does.
newest_series() {
  local k
  for k in $(kernel_matrix | tr ' ' '\n' | tac); do
    if resolve "$k" > /dev/null 2>&1; then
      echo "$k"
      return
    fi
  done
}

# kernels_to_boot REQUEST DEFAULT: the series a tier boots: REQUEST
# (GPUQ_KTEST_KERNELS) as given, every series for "all", else DEFAULT
# followed by the newest series.
kernels_to_boot() {
  case $1 in
    all) kernel_matrix ;;
    "") echo $2 $(newest_series) | tr ' ' '\n' | awk '!seen[$0]++' | tr '\n' ' ' | sed 's/ $//' ;;
    *) echo "$1" ;;
  esac
}

# better_kernel SUITE VERSION PACKAGE: this candidate beats KNOTE/KVERSION/
# KPKG. bookworm's own build of a series first (this host's compiler and
# glibc build the simulator for it), then the highest Debian version, then
# the unsigned image (same kernel and modules, no shim signature).
better_kernel() {
  local here=0 best_here=0
  case $1 in bookworm*) here=1 ;; esac
  case $KNOTE in bookworm*) best_here=1 ;; esac
  [ -z "$KVERSION" ] && return 0
  [ $here != $best_here ] && { [ $here = 1 ]; return; }
  dpkg --compare-versions "$2" gt "$KVERSION" && return 0
  [ "$2" = "$KVERSION" ] && [ "${3%-unsigned}" != "$3" ]
}

# resolve LABEL: sets KPKG and KVERSION (better_kernel's choice among the
# image packages of the series whose files the mirror serves), KDEPS (the
# split packages holding vmlinuz and the modules, from 6.19 on:
# linux-binary-*, linux-modules-*) and KNOTE (the suite), or KERR and
# returns 1. The candidates come from one `apt-cache madison`; only the best
# one's dependencies are read, then the next best's if it cannot boot
# (`apt-cache depends` takes about a second a call whatever it is given, and
# a series has 18 or more image packages: 22 s for 6.1 when each was read).
resolve() {
  local label=$1 memo
  KPKG="" KVERSION="" KDEPS="" KNOTE="" KERR=""
  kernel_apt
  # Within one suite run the kernel apt lists stay as kernel_apt left them,
  # so a series resolves the same each time: debian_btf.sh, newest_series
  # and both tiers' preparation (under the prepare lock, which the stage's
  # critical path waits for) ask for the same series, each at 1-3 s.
  memo=$CACHE/apt/resolved/$label
  if [ -n "${GPUQ_TEST_RUN:-}" ] && [ "$KAPT_STATE" = ok ] &&
    [ "$(head -n 1 "$memo" 2> /dev/null)" = "$GPUQ_TEST_RUN" ]; then
    { read -r _ && read -r KPKG && read -r KVERSION && read -r KDEPS && read -r KNOTE && read -r KERR; } < "$memo"
    [ -n "$KPKG" ]
    return
  fi
  resolve_now "$label"
  local rc=$?
  if [ -n "${GPUQ_TEST_RUN:-}" ] && [ "$KAPT_STATE" = ok ] &&
    [ "$(cat "$CACHE/apt/updated-by" 2> /dev/null)" = "$GPUQ_TEST_RUN" ]; then
    mkdir -p "${memo%/*}"
    printf '%s\n' "$GPUQ_TEST_RUN" "$KPKG" "$KVERSION" "$KDEPS" "$KNOTE" "$KERR" > "$memo.$$" && mv "$memo.$$" "$memo"
  fi
  return $rc
}
# resolve_now LABEL: resolve, asking apt.
resolve_now() {
  local label=$1 pkgs pkg ver src suite c deps why best_why="" why_ver="" rejected=" " cands=()
  pkgs=$(image_packages "$label")
  # madison: "PKG | VERSION | URI SUITE/COMPONENT ARCH Packages" per version
  [ -z "$pkgs" ] || while IFS='|' read -r pkg ver src; do
    pkg=${pkg// /} ver=${ver// /}
    read -r _ suite _ <<< "$src"
    [ -n "$pkg" ] && [ -n "$ver" ] && cands+=("$pkg $ver ${suite%%/*}")
  done < <(apt-cache "${KAPT[@]}" madison $pkgs 2> /dev/null)
  while :; do
    KPKG="" KVERSION="" KNOTE=""
    for c in "${cands[@]}"; do
      read -r pkg ver suite <<< "$c"
      case $rejected in *" $pkg=$ver "*) continue ;; esac
      if better_kernel "$suite" "$ver" "$pkg"; then
        KPKG=$pkg KVERSION=$ver KNOTE=$suite
      fi
    done
    [ -n "$KPKG" ] || break
    # A split image whose modules package the mirror lacks (a virtual
    # dependency nothing provides: seen for 6.19-7.1 in trixie-backports)
    # cannot boot with amdgpu.
    deps=$(apt-cache "${KAPT[@]}" depends "$KPKG=$KVERSION" 2> /dev/null)
    why=$(echo "$deps" | sed -nE 's/.*Depends: <(linux-(binary|modules)-[^>]+)>.*/\1/p' | head -n 1)
    if [ -z "$why" ]; then
      KDEPS=$(echo "$deps" | awk '/Depends: linux-(binary|modules)-/ { print $2 }' | sort -u | tr '\n' ' ')
      return 0
    fi
    why="the mirror serves $KPKG $KVERSION but no package provides its $why"
    if [ -z "$why_ver" ] || dpkg --compare-versions "$KVERSION" gt "$why_ver"; then
      best_why=$why why_ver=$KVERSION
    fi
    rejected="$rejected$KPKG=$KVERSION "
  done
  KERR=${best_why:-"apt serves no Linux $label image for amd64 in $KERNEL_SUITES"}
  [ "$KAPT_STATE" = ok ] || KERR="$KERR; $KAPT_STATE"
  return 1
}

# prepare LABEL: KDIR = the cached, unpacked kernel (downloads it if needed).
prepare() {
  local label=$1 dir tmp deb vmlinuz kv base moddir line m t0 rel p bytes=0
  KDIR=""
  if ! resolve "$label"; then
    # Offline: the newest cached kernel of this series still counts.
    dir=$(ls -dt "$CACHE"/*/ 2> /dev/null | while read -r d; do
      [ "$(cat "$d/.complete" 2> /dev/null)" = "$CACHE_FORMAT" ] && [ "$(cat "$d/label")" = "$label" ] && echo "${d%/}" && break
    done)
    if [ -n "$dir" ]; then
      note "kernel $label: apt cannot resolve it, using the cached $(basename "$dir")"
      KDIR=$dir
      return 0
    fi
    return 1 # KERR from resolve
  fi
  dir=$CACHE/${KPKG}_${KVERSION}
  if [ "$(cat "$dir/.complete" 2> /dev/null)" = "$CACHE_FORMAT" ]; then
    note "kernel $label: $KPKG $KVERSION ($KNOTE, $(($(cat "$dir/deb-bytes") / 1048576)) MB .deb), cached in $dir"
    KDIR=$dir
    return 0
  fi
  tmp=$CACHE/.tmp-$KPKG.$$
  rm -rf "$tmp"
  mkdir -p "$tmp/out"
  t0=$(now)
  # shellcheck disable=SC2046
  if ! (cd "$tmp" && "${APT[@]}" "${KAPT[@]}" download "$KPKG=$KVERSION" $(for p in $KDEPS; do echo "$p=$KVERSION"; done)) \
    > "$WORK/download-$label.log" 2>&1; then
    KERR="apt-get download $KPKG=$KVERSION $KDEPS failed: $(tail -n 2 "$WORK/download-$label.log" | tr '\n' ' ')"
    rm -rf "$tmp"
    return 1
  fi
  for deb in "$tmp"/*.deb; do
    bytes=$((bytes + $(stat -c %s "$deb")))
    dpkg-deb -x "$deb" "$tmp/root" || {
      KERR="dpkg-deb -x $deb failed"
      rm -rf "$tmp"
      return 1
    }
  done
  note "kernel $label: downloaded $KPKG $KVERSION ${KDEPS:+(+ $KDEPS)}($KNOTE), $((bytes / 1048576)) MB in $(since "$t0") s"
  t0=$(now)
  # boot/vmlinuz-<kver> up to 6.x; the split 7.x packages put it in the
  # modules directory (linux-binary-*: usr/lib/modules/<kver>/vmlinuz).
  vmlinuz=$(ls "$tmp"/root/boot/vmlinuz-* 2> /dev/null | head -n 1)
  if [ -n "$vmlinuz" ]; then
    kv=${vmlinuz##*/vmlinuz-}
  else
    vmlinuz=$(ls "$tmp"/root/usr/lib/modules/*/vmlinuz "$tmp"/root/lib/modules/*/vmlinuz 2> /dev/null | head -n 1)
    kv=$(basename "$(dirname "$vmlinuz")")
  fi
  base=$tmp/root
  [ -d "$base/lib/modules/$kv" ] || base=$tmp/root/usr # merged /usr packages
  moddir=$base/lib/modules/$kv
  if [ -z "$vmlinuz" ] || [ ! -d "$moddir" ]; then
    KERR="$KPKG ${KDEPS}has no vmlinuz or no lib/modules/$kv"
    rm -rf "$tmp"
    return 1
  fi
  # The .deb ships no modules.dep (postinst makes it); the split packages
  # no modules.order or modules.builtin either, whose absence depmod warns
  # about, harmlessly.
  depmod -b "$base" "$kv" 2> "$WORK/depmod-$label.log"
  line=$(grep -E '(^|/)amdgpu\.ko(\.[a-z]+)?:' "$moddir/modules.dep")
  if [ -z "$line" ]; then
    KERR="$KPKG has no amdgpu module"
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$tmp/out"
  closure_cpio "$moddir" "$kv" "$tmp/out/modules.cpio.gz" "$line" "$label"
  # What shares a host directory with the guest (9p over virtio: the
  # simulator tier's HIP roots, run_sim_tier.sh), a cpio of its own: =m in
  # Debian's configs of 6.1-7.3 (virtio_pci too in 6.1's, =y later, so not
  # in modules.dep: skipped).
  share=""
  for m in virtio_pci 9pnet_virtio 9p; do
    share="$share $(grep -E "(^|/)$m\.ko(\.[a-z]+)?:" "$moddir/modules.dep")"
  done
  closure_cpio "$moddir" "$kv" "$tmp/out/share.cpio.gz" "$share" "$label"
  cp "$vmlinuz" "$tmp/out/vmlinuz"
  cp "$tmp/root/boot/config-$kv" "$tmp/out/config" 2> /dev/null || cp "$moddir/config" "$tmp/out/config" 2> /dev/null
  echo "$kv" > "$tmp/out/kver"
  echo "$label" > "$tmp/out/label"
  echo "$KPKG $KVERSION $KNOTE" > "$tmp/out/package"
  echo "$bytes" > "$tmp/out/deb-bytes"
  echo "$CACHE_FORMAT" > "$tmp/out/.complete"
  rm -rf "$dir"
  mv "$tmp/out" "$dir"
  rm -rf "$tmp"
  note "kernel $label: unpacked $kv, amdgpu closure of $(echo "$line" | wc -w) modules, in $(since "$t0") s"
  # Older builds of the same series are dead weight now.
  for m in "$CACHE"/*/; do
    m=${m%/}
    [ "$m" != "$dir" ] && [ -f "$m/label" ] && [ "$(cat "$m/label")" = "$label" ] && rm -rf "$m"
  done
  KDIR=$dir
  return 0
}

# vmlinux_btf VMLINUZ OUT: the BTF sections of the kernel image.
vmlinux_btf() {
  local img=$1 out=$2 off
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$img" | head -n 1 | cut -d: -f1)
  if [ -n "$off" ]; then
    tail -c +$((off + 1)) "$img" | xz -dc --single-stream > "$out.full" 2> /dev/null
  else
    off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$img" | head -n 1 | cut -d: -f1)
    [ -n "$off" ] && tail -c +$((off + 1)) "$img" | zstd -dcq > "$out.full" 2> /dev/null
  fi
  objcopy --only-section=.BTF --only-section=.BTF_ids "$out.full" "$out" 2> /dev/null
  rm -f "$out.full"
  [ -s "$out" ]
}

# real_btf KDIR: KDIR/vmlinux.btf and KDIR/amdgpu.btf, the real kernel's and
# amdgpu.ko's BTF (extracted once).
real_btf() {
  local kdir=$1 x
  [ -s "$kdir/vmlinux.btf" ] && [ -s "$kdir/amdgpu.btf" ] && return 0
  x=$(mktemp -d)
  vmlinux_btf "$kdir/vmlinuz" "$x/vmlinux" && objcopy --dump-section .BTF="$kdir/vmlinux.btf" "$x/vmlinux" /dev/null
  (cd "$x" && zcat "$kdir/modules.cpio.gz" | cpio -idm --quiet '*amdgpu.ko')
  objcopy --dump-section .BTF="$kdir/amdgpu.btf" "$(find "$x" -name amdgpu.ko | head -n 1)" /dev/null
  rm -rf "$x"
  [ -s "$kdir/vmlinux.btf" ] && [ -s "$kdir/amdgpu.btf" ]
}

# copy_with_libs BIN DEST ROOT: BIN to ROOT/DEST plus its ldd closure at the
# libraries' own paths.
copy_with_libs() {
  local bin=$1 dest=$2 root=$3
  mkdir -p "$root/$(dirname "$dest")"
  cp -L "$bin" "$root/$dest"
  # shellcheck disable=SC2046
  copy_paths "$root" $(ldd "$bin" 2> /dev/null | grep -oE '/[^ ]+')
}

# copy_paths ROOT PATH...: each absolute PATH (a library of an ldd closure)
# into ROOT at its own path, dereferenced, unless ROOT already has it.
copy_paths() {
  local root=$1 path
  shift
  for path in "$@"; do
    [ -e "$root$path" ] && continue
    mkdir -p "$root$(dirname "$path")"
    cp -L "$path" "$root$path"
  done
}


# qemu_start LABEL KDIR INITRD LOG: boots the cached kernel KDIR with INITRD
# under TCG in the background, until the guest powers off or BOOT_TIMEOUT;
# the console goes to LOG. qemu_finish LABEL [RC] waits for it (or takes the
# RC run_guests reaped): LOG gets \r stripped, INITRD is removed, BOOT_RC is
# set (124: timeout). run_guests runs the guests of several kernels side by
# side, one vCPU each, as many at once as the machine has cores, counting
# the other kernel tier's guests (guest_slot.sh).
declare -A QEMU_PID QEMU_T0 QEMU_LOG QEMU_INITRD
# A guest's GPUQ_SCOPE (label -> "attach"; unset: every check), and more
# of its kernel command line (label -> "KEY=VALUE ..."). GUEST_SHARES: the
# host directories every guest sees read-only over 9p ("TAG=DIR ...": the
# guest mounts TAG; the simulator tier's HIP roots).
declare -A GUEST_SCOPE GUEST_APPEND
GUEST_SHARES=""
qemu_start() {
  local label=$1 kdir=$2 initrd=$3 log=$4 share shares=()
  for share in $GUEST_SHARES; do
    shares+=(-virtfs "local,path=${share#*=},mount_tag=${share%%=*},security_model=none,readonly=on")
  done
  note "kernel $label: booting $(cat "$kdir/kver") ($(cat "$kdir/package")) under qemu TCG, initramfs $(($(stat -c %s "$initrd") / 1048576)) MB, timeout $BOOT_TIMEOUT s"
  QEMU_T0[$label]=$(now)
  QEMU_LOG[$label]=$log
  QEMU_INITRD[$label]=$initrd
  # TCG only: /dev/kvm on these machines is kvm_pvm and stalls stock kernels.
  # </dev/null: -nographic reads stdin otherwise. loglevel=5: warnings reach
  # the console, so a guest that hangs before its dmesg dump still leaves
  # the backtrace of a soft lockup or RCU stall in the log.
  # -smp 1: with two vCPUs, multi-threaded TCG let one vCPU run a site the
  # other was live-patching. Seen once each in the simulator tier: 6.12
  # died of "Oops: int3" in syscall_exit_to_user_mode_prepare as the
  # tracepoint tier enabled its sys_enter/sys_exit tracepoints, and 6.1 sat
  # in a soft lockup on both CPUs as kprobes attached. One vCPU cannot race
  # itself; the simulator tier took 394 s with it (364-384 s with two).
  # guest_slot.sh: the kernel tiers share the machine's cores (it says how);
  # BOOT_TIMEOUT counts from when the guest got its slot.
  start_bg "$SRC/tests/kernel/guest_slot.sh" timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 2G -nic none \
    -kernel "$kdir/vmlinuz" -initrd "$initrd" "${shares[@]}" \
    -append "console=ttyS0 panic=-1 loglevel=5 GPUQ_KERNEL=$label${GPUQ_KTEST_ONLY:+ GPUQ_ONLY=$GPUQ_KTEST_ONLY}${GUEST_SCOPE[$label]:+ GPUQ_SCOPE=${GUEST_SCOPE[$label]}}${GUEST_APPEND[$label]:+ ${GUEST_APPEND[$label]}}${GPUQ_KTEST_APPEND:+ $GPUQ_KTEST_APPEND}" \
    -nographic -no-reboot < /dev/null > "$log.raw" 2>&1
  QEMU_PID[$label]=$BG_PID
}

qemu_finish() {
  local label=$1 log=${QEMU_LOG[$1]} wall tl
  if [ $# -ge 2 ]; then
    BOOT_RC=$2
  else
    wait "${QEMU_PID[$label]}"
    BOOT_RC=$?
  fi
  _procs_forget "${QEMU_PID[$label]}"
  tr -d '\r' < "$log.raw" > "$log"
  rm -f "$log.raw" "${QEMU_INITRD[$label]}"
  wall=$(since "${QEMU_T0[$label]}")
  tl=$(sed -n 's/.*\(GPUQ-KTIME .*\)/\1/p' "$log" | awk -v k="$label" '$2 == k { printf "%s%s=%.1fs", sep, $3, $4; sep = " " }')
  note "kernel $label: qemu exit $BOOT_RC after $wall s wall; guest uptime at: ${tl:-no timing markers}"
  if [ $BOOT_RC = 124 ]; then
    note "kernel $label: TIMEOUT after $BOOT_TIMEOUT s; last lines of $log:"
    tail -n 15 "$log" | sed 's/^/#   /'
  fi
}

# compat_skipped LABEL REASON: LABEL's row of the compatibility table
# (sim_check compat-rows) when its kernel could not be had.
declare -A KDIR_OF
compat_skipped() {
  printf '%s\tnot tested: %s\t-\t-\tskip\t%s\n' "$1" "$2" "$(date -u +%F)" >> "$WORK/compat.tsv"
}

# run_guests START JUDGE ENTRY...: for each ENTRY ("label ..."), START ENTRY
# boots its guest (qemu_start) and, once it powered off, qemu_finish and
# JUDGE LABEL judge it. At most KTEST_JOBS guests run at once: each is one
# TCG vCPU, so more guests than cores only slow every one of them down
# (and a slowed guest may hit BOOT_TIMEOUT).
KTEST_JOBS=${GPUQ_KTEST_JOBS:-$(nproc)}
run_guests() {
  local start=$1 judge=$2 entry label pid rc next pids=()
  shift 2
  local queue=("$@")
  declare -A label_of=()
  while [ ${#queue[@]} -gt 0 ] || [ ${#label_of[@]} -gt 0 ]; do
    while [ ${#queue[@]} -gt 0 ] && [ ${#label_of[@]} -lt "$KTEST_JOBS" ]; do
      entry=${queue[0]}
      queue=("${queue[@]:1}")
      label=${entry%% *}
      # The guest hands the tier's mark on once its own is in place (at
      # the rank of the tier's next guest, or removed by the last): changed
      # here, before that guest's guest_slot.sh (at nice 10 beside two busy
      # guests) has marked itself, the mark would let the other tier's
      # waiting guest take the slot meant for it, and this guest would wait
      # for that whole guest.
      next=""
      [ ${#queue[@]} = 0 ] || next=${GUEST_RANK[${queue[0]%% *}]:-0}
      GPUQ_GUEST_SLOT_HANDOFF=$SLOT_MARK GPUQ_GUEST_SLOT_NEXT=$next \
        GPUQ_GUEST_SLOT_RANK=${GUEST_RANK[$label]:-0} "$start" "$entry" || continue
      [ -n "$next" ] || SLOT_MARK=""
      label_of[${QEMU_PID[$label]}]=$label
    done
    [ ${#queue[@]} -gt 0 ] || slots_release
    [ ${#label_of[@]} -gt 0 ] || break
    pids=("${!label_of[@]}")
    pid=""
    wait -n -p pid "${pids[@]}"
    rc=$?
    [ -n "$pid" ] || continue # a signal, not a guest
    label=${label_of[$pid]}
    unset "label_of[$pid]"
    qemu_finish "$label" "$rc"
    "$judge" "$label"
  done
}

# judge_markers LABEL LOG: one ok/FAIL/skip per expected check from the
# guest's "GPUQ-KTEST <label> <check> PASS|FAIL|SKIP <detail>" lines
# (sim_check judge-guest: a missing one, and one the host does not expect,
# fail).
judge_markers() {
  local out
  expected_checks "${GUEST_SCOPE[$1]:-}" "$1" > "$WORK/expected-$1"
  out=$("$CHECKER" judge-guest "$1" "$2" "$WORK/expected-$1" "$BOOT_RC")
  tally "$out"
}

# require_checker: CHECKER (the caller's: the build tree's sim_check beside
# AGENT, or GPUQ_KTEST_CHECKER) is the guests' checks (tests/kernel/sim/check,
# one subcommand per file), linked statically: both tiers' guests run it as
# /bin/sim_check, and the host judges their logs with it. Built with the
# agent (tests/kernel/CMakeLists.txt), not here: the tiers each spent about a
# minute of one core on it.
require_checker() {
  if [ ! -x "$CHECKER" ]; then
    echo "$0: no sim_check at $CHECKER (build the sim_check target, or set GPUQ_KTEST_CHECKER)" >&2
    exit 2
  fi
  if LC_ALL=C readelf -l "$CHECKER" 2> /dev/null | grep -q 'INTERP'; then
    echo "$0: $CHECKER is linked dynamically; the guests need it static (the sim_check target is)" >&2
    exit 2
  fi
}

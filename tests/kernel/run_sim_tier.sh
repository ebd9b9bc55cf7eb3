#!/usr/bin/env bash
# Kernel tests, simulator: the real gpuq-agent against the KFD simulator
# (tests/kernel/sim: a module named amdgpu with amdkfd's functions and
# structs; its enums and version-dependent fields generated from the real
# amdgpu.ko's BTF), built here with each kernel's own Debian headers and
# compiler (a root file system of the kernel's suite where that is not
# bookworm) and booted with that kernel under QEMU (TCG). Every metric family
# the agent exports is compared with the simulator's ground truth, and every
# amdkfd type the agent reads with the real module's. See
# tests/kernel/sim/README.md.
#
#   run_sim_tier.sh AGENT SRC [CACHE]
#     AGENT  the gpuq-agent binary to test (its ldd closure goes into the guest)
#     SRC    the repository
#     CACHE  kernels and headers, downloaded and unpacked once
#            (default ${XDG_CACHE_HOME:-/var/cache}/gpuq-kernels, shared with
#            run_qemu_tier.sh)
#
# Environment: GPUQ_KTEST_KERNELS (default: the newest series apt serves;
# "all": every series), GPUQ_KTEST_MAINS and GPUQ_KTEST_PROGRAMS (the
# kernels that get a main pair of guests, default the newest, and a
# programs guest, default none; split_guests), GPUQ_KTEST_BOOT_TIMEOUT
# (seconds per boot, 2400: 7.3's main guest, every check but the programs,
# took 1401 s in one guest from a clean clone on 2026-11-28 and ran a
# quarter slower in the next run; the limit is for a hung guest, not a slow
# host), GPUQ_KTEST_WORKDIR (logs; default a new
# /tmp/gpuq-simtest.XXXXXX, kept and printed), GPUQ_KTEST_HIP_CLIENT (the
# hip_client hipcc built; default AGENT's build tree's
# tests/nullgpu/hip_client), GPUQ_KTEST_ONLY (a developer's knob: only the
# guest's groups named, comma-separated, e.g. fentry,kprobe; the other
# checks report no result and fail).
#
# Needs root and Debian 12 (installs what it needs with apt-get). Prints one
# ok/FAIL/skip line per check and "N passed, N failed, N skipped"; exits
# non-zero on any failure. Without QEMU or the kernel/header packages it says
# what is missing, counts the checks as skipped and exits 0.
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 AGENT SRC [CACHE]" >&2
  exit 2
fi
AGENT=$1
SRC=$(cd "$2" && pwd)
CACHE=${3:-${XDG_CACHE_HOME:-/var/cache}/gpuq-kernels}
. "$SRC/tests/lib/assert.sh"
HERE=$SRC/tests/kernel
SIMSRC=$HERE/sim
KERNELS=${GPUQ_KTEST_KERNELS:-}
BOOT_TIMEOUT=${GPUQ_KTEST_BOOT_TIMEOUT:-2400}
# This tier's guests are the longest (14-20 min): they take a free core
# before the QEMU tier's when both wait (guest_slot.sh).
export GPUQ_GUEST_SLOT_FIRST=${GPUQ_GUEST_SLOT_FIRST:-1}
WORK=${GPUQ_KTEST_WORKDIR:-$(mktemp -d /tmp/gpuq-simtest.XXXXXX)}
mkdir -p "$WORK" "$CACHE"
rm -f "$WORK/compat.tsv"
T_START=$(date +%s)
. "$HERE/qemu_lib.sh"
prepare_lock
# The simulator tier runs on the newest series apt serves (7.3 when this
# was written), the end of what users run where amdkfd's shape changes most
# (secondary contexts, mm_exit_exec_release, preemptible BPF programs): its
# main pair of guests, every check but the programs group. The oldest series (6.1:
# kfd_dev, the DIQ) and the programs guests run on request
# (GPUQ_KTEST_KERNELS="6.1 7.3", GPUQ_KTEST_MAINS, GPUQ_KTEST_PROGRAMS;
# split_guests says why). The QEMU tier's series get the real module's
# attach and verifier checks, and 6.1 and the newest its daemon against
# real KFD calls.
KERNELS=$(kernels_to_boot "$KERNELS" "")
# kfd_btf (sim/kfd_btf.cc) and the BPF object it reads, from AGENT's build.
KFD_BTF=${GPUQ_KTEST_KFD_BTF:-$(dirname "$AGENT")/tests/kernel/kfd_btf}
BPF_OBJECT=${GPUQ_KTEST_BPF_OBJECT:-$(dirname "$AGENT")/bpf/gpuq.bpf.o}

# The checks each guest reports (sim/guest-init.sh); one missing is a failure.
# Each group's list (ROCR_CHECKS, HIP_CHECKS, PROG_CHECKS...) is the guest's
# own (sim/check_lists.sh, which the payload carries).
. "$SIMSRC/check_lists.sh"
# rocr-6.4:*, rocr-7.2:*: Debian's ROCr 6.4.3 (sid) and 7.2.4 (experimental)
# on the KFD null GPU forwarding to the simulator (build_rocm_stacks).
ROCM_STACKS="6.4 7.2"
# has_contexts LABEL: the simulator built for LABEL's kernel has secondary
# KFD contexts (its real amdgpu.ko has kfd_process.context_id).
has_contexts() { grep -qx contexts "$WORK/mod-$(series_of "$1")/root/lib/kfd-sim/features" 2> /dev/null; }
# series_of LABEL: the kernel series a guest's label names ("7.3-nobtf": 7.3).
series_of() { echo "${1%%-*}"; }
# expected_checks [SCOPE]: the checks of a guest of that GPUQ_SCOPE ("btf",
# "nobtf", "programs": sim/guest-init.sh's only() says which groups each
# runs; "": all).
expected_checks() {
  local scope=${1:-} m c
  echo insmod btf-flavor agent-version
  case $scope in btf | "") btf_checks ;; esac
  case $scope in nobtf | "") nobtf_checks ;; esac
  if [ -z "$scope" ] || [ "$scope" = programs ]; then
    echo programs:reload programs:run programs:report
    for m in $PROG_TIERS; do
      for c in $PROG_CHECKS; do echo "programs-$m:$c"; done
    done
  fi
  echo drivers kernel-clean
}
# btf_checks: the simulator with its BTF: the fentry and kprobe tiers, the
# runtime clients in btf-fentry, record and short-lived containers.
btf_checks() {
  tier_checks fentry kprobe
  client_checks_of btf
  # beside the rocr client's agent: the deployment's capabilities, and without CAP_SYS_PTRACE
  echo rocr:least-privilege rocr:no-ptrace
  echo record-command record-container record-sigint short-lived-named
}
# nobtf_checks: the simulator reloaded without BTF: the args-kprobe and
# tracepoint tiers and their runtime clients.
nobtf_checks() {
  echo nobtf-reload kprobes-off
  tier_checks args tracepoint
  client_checks_of nobtf
}
# client_checks_of btf|nobtf: the checks of JUDGED's runtime client groups
# the guest with (NAME[-STACK] in btf-fentry, ...-kprobe) or without BTF
# (...-args, ...-tp) runs, and the start and stops checks of the agents
# watching them, one per tier (clients, clients-kprobe; clients-args,
# clients-tp: sim/guest-init.sh's client_runs).
client_checks_of() {
  local m c
  for m in $([ "$1" = btf ] && echo clients clients-kprobe || echo clients-args clients-tp); do
    echo "$m:start $m:stops"
  done
  for m in $(client_plan "$JUDGED"); do
    case $m in
      *-args | *-tp) [ "$1" = nobtf ] || continue ;;
      *) [ "$1" = btf ] || continue ;;
    esac
    case $m in
      hip*) for c in $HIP_CHECKS; do echo "$m:$c"; done ;;
      rocblas*) for c in $ROCBLAS_CHECKS; do echo "$m:$c"; done ;;
      *) for c in $ROCR_CHECKS; do echo "$m:$c"; done ;;
    esac
  done
}
# tier_checks GROUP...: the lifecycle checks of each probe tier's group.
tier_checks() {
  local m c extra
  for m in "$@"; do
    case $m in
      fentry | kprobe) extra="gws restart-seeded after-restart runlist runlist-durations oversubscription-xnack evicted-queues" ;;
      # the BTF-free tiers restart fresh (docs/probe-tiers.md "What differs")
      args) extra="gws restart-seeded after-restart fresh-start runlist runlist-durations evicted-queues" ;;
      tracepoint) extra="restart-seeded after-restart fresh-start runlist runlist-lifecycle" ;;
    esac
    # 7.2+: a secondary KFD context's queues and teardown
    has_contexts "$JUDGED" && extra="context-teardown context $extra"
    for c in serves attached sysfs-inventory queues processes creates destroys exits \
      create-failures queue-type-labels once $extra burst oversubscription evictions submissions gtt-queue priority-update cu-mask final stops; do
      echo "$m:$c"
    done
  done
}
# client_plan LABEL: the runtime client groups LABEL's main pair runs
# (sim/guest-init.sh's GPUQ_CLIENTS; each guest of the pair runs those of
# its scope): every client (rocr, hip: Debian 12's ROCr and HIP 5.2.3;
# rocr-6.4, hip-7.2...: ROCr and HIP 6.4.3 and 7.2.4, build_rocm_stacks and
# build_hip_stacks; rocblas-6.4: rocBLAS 6.4.4) in every probe tier: the
# group's name alone is btf-fentry, -kprobe btf-kprobe, -args args-kprobe,
# -tp tracepoint. One main pair (the default) runs every group. With two
# (GPUQ_KTEST_MAINS), every client in btf-fentry runs on each, the other
# tiers of the 5.2.3 clients on the older kernel and of the 2026 stacks on
# the newer (every client in every tier took 696 s of the 7.3 guest's 1312 s
# on 2026-11-28, one run per tier). N_CHECKS (no guests yet): every group.
NEWEST_MAIN=""
SPLIT_CLIENTS=0
client_plan() {
  local label s c
  label=$(series_of "$1")
  echo rocr hip
  for s in $ROCM_STACKS; do echo "rocr-$s hip-$s"; done
  echo rocblas-6.4
  if [ "$SPLIT_CLIENTS" = 0 ] || [ "$label" != "$NEWEST_MAIN" ]; then
    for c in rocr hip; do echo "$c-kprobe $c-args $c-tp"; done
  fi
  if [ "$SPLIT_CLIENTS" = 0 ] || [ "$label" = "$NEWEST_MAIN" ]; then
    for s in $ROCM_STACKS; do
      for c in rocr-$s hip-$s; do echo "$c-kprobe $c-args $c-tp"; done
    done
    echo rocblas-6.4-kprobe rocblas-6.4-args rocblas-6.4-tp
  fi
}
JUDGED=""
N_CHECKS=$(expected_checks | wc -w)

require_agent
for f in "$KFD_BTF" "$BPF_OBJECT"; do
  [ -f "$f" ] || { fail "$f is missing (built with the agent: kfd_btf, bpf/gpuq.bpf.o)"; summary; exit 1; }
done

# ---- host packages ----------------------------------------------------------
# make + dwarves (pahole): kbuild and the module's BTF.
PKGS=(qemu-system-x86 cpio kmod xz-utils zstd gcc make libc6-dev linux-libc-dev binutils dwarves mmdebstrap bpftool)
[ -x /bin/busybox ] || PKGS+=(busybox-static)
need_packages "${PKGS[@]}"
need_tools qemu-system-x86_64 cpio gzip depmod gcc make pahole objcopy readelf dpkg-deb \
  apt-get apt-cache timeout ldd xz bpftool
[ -x /bin/busybox ] || skip_all "/bin/busybox is not available (package busybox-static)"
[ -f /usr/include/linux/kfd_ioctl.h ] || skip_all "linux/kfd_ioctl.h is missing (package linux-libc-dev)"

# ---- the build environment of each kernel ----------------------------------------
# A module is built with its kernel's own headers, kbuild and compiler.
# bookworm's kernels (6.1; 6.12's bookworm build): the headers unpacked
# into the cache, built on this host. The others (trixie, trixie-backports,
# sid, experimental) need that suite's gcc and glibc (their kbuild tools are
# linked against it): a root file system of the suite with the headers
# installed (mmdebstrap --variant=apt), cached, the build run in it with
# chroot. Either way HDIR is the headers' directory as the build sees it and
# BUILD_ROOT the root ("" on the host).
HCACHE_FORMAT=2

# suite_of KDIR: the Debian suite the cached kernel came from.
suite_of() { awk '{ print $3 }' "$1/package"; }

# prepare_buildenv LABEL KDIR: BUILD_ROOT and HDIR for KDIR's kernel.
prepare_buildenv() {
  local kdir=$2 suite
  suite=$(suite_of "$kdir")
  case $suite in
    bookworm*) prepare_headers "$@" ;;
    *) prepare_buildroot "$@" "$suite" ;;
  esac
}

# prepare_headers LABEL KDIR: the headers unpacked in the cache, as
# $CACHE/headers-<kver>_<version>/root (linux-headers-<kver>, its -common and
# linux-kbuild), with a BTF-only vmlinux where the package has none (6.1):
# without it kbuild skips the module's BTF.
prepare_headers() {
  local label=$1 kdir=$2 kv ver dir tmp deps p h t0
  kv=$(cat "$kdir/kver")
  ver=$(awk '{ print $2 }' "$kdir/package")
  dir=$CACHE/headers-${kv}_$ver
  BUILD_ROOT=""
  HDIR=$dir/root/usr/src/linux-headers-$kv
  if [ "$(cat "$dir/.complete" 2> /dev/null)" = "$HCACHE_FORMAT" ]; then
    note "kernel $label: headers for $kv cached in $dir"
    return 0
  fi
  kernel_apt
  t0=$(now)
  tmp=$CACHE/.tmp-headers-$kv.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  deps=$(apt-cache "${KAPT[@]}" depends "linux-headers-$kv=$ver" 2> /dev/null |
    awk '/Depends: linux-(headers|kbuild)-/ { print $2 }' | sort -u)
  if ! (cd "$tmp" && "${APT[@]}" "${KAPT[@]}" download "linux-headers-$kv=$ver" \
    $(for p in $deps; do echo "$p=$ver"; done)) > "$WORK/download-headers-$label.log" 2>&1; then
    KERR="apt-get download linux-headers-$kv=$ver $deps failed: $(tail -n 2 "$WORK/download-headers-$label.log" | tr '\n' ' ')"
    rm -rf "$tmp"
    return 1
  fi
  for p in "$tmp"/*.deb; do
    dpkg-deb -x "$p" "$tmp/root" || {
      KERR="dpkg-deb -x $p failed"
      rm -rf "$tmp"
      return 1
    }
  done
  h=$tmp/root/usr/src/linux-headers-$kv
  if [ ! -f "$h/Makefile" ]; then
    KERR="linux-headers-$kv has no Makefile"
    rm -rf "$tmp"
    return 1
  fi
  # It includes the -common tree by absolute path.
  sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" "$h/Makefile"
  if [ ! -f "$h/vmlinux" ] && ! vmlinux_btf "$kdir/vmlinuz" "$h/vmlinux"; then
    KERR="no BTF could be extracted from $kdir/vmlinuz"
    rm -rf "$tmp"
    return 1
  fi
  echo "$HCACHE_FORMAT" > "$tmp/.complete"
  rm -f "$tmp"/*.deb
  rm -rf "$dir"
  mv "$tmp" "$dir"
  note "kernel $label: headers linux-headers-$kv $ver (+ $(echo $deps)) unpacked in $(since "$t0") s"
  for p in "$CACHE"/headers-*/; do # older builds of the same kernel series
    p=${p%/}
    [ "$p" != "$dir" ] && [ ! -d "$CACHE/$(cat "$p/kdir" 2> /dev/null)" ] && rm -rf "$p"
  done
  basename "$kdir" > "$dir/kdir"
  return 0
}

# prepare_buildroot LABEL KDIR SUITE: a root file system of SUITE's family
# (trixie with trixie-backports, sid with experimental) with the kernel's
# headers, gcc, make, binutils and pahole, as $CACHE/buildroot-<kver>_<version>.
prepare_buildroot() {
  local label=$1 kdir=$2 suite=$3 kv ver dir tmp base mirror t0 sources=() p
  kv=$(cat "$kdir/kver")
  ver=$(awk '{ print $2 }' "$kdir/package")
  dir=$CACHE/buildroot-${kv}_$ver
  BUILD_ROOT=$dir/root
  HDIR=/usr/src/linux-headers-$kv
  if [ "$(cat "$dir/.complete" 2> /dev/null)" = "$HCACHE_FORMAT" ]; then
    note "kernel $label: $suite build root for $kv cached in $dir"
    return 0
  fi
  command -v mmdebstrap > /dev/null ||
    { KERR="mmdebstrap is not installed (package mmdebstrap): $suite's compiler builds the simulator for $kv"; return 1; }
  mirror=$(awk '/^deb / { print $2; exit }' "$CACHE/apt/sources.list" 2> /dev/null)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  case $suite in
    trixie*) base=trixie; sources=("deb $mirror trixie main" "deb $mirror trixie-backports main") ;;
    sid | experimental) base=sid; sources=("deb $mirror sid main" "deb $mirror experimental main") ;;
    *) KERR="no build root recipe for suite $suite"; return 1 ;;
  esac
  t0=$(now)
  tmp=$CACHE/.tmp-buildroot-$kv.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  if ! mmdebstrap --variant=apt --mode=root --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="linux-headers-$kv=$ver,dwarves,make,binutils" "$base" "$tmp/root" "${sources[@]}" \
    > "$WORK/buildroot-$label.log" 2>&1; then
    KERR="mmdebstrap $base with linux-headers-$kv=$ver failed: $(grep -E '^(E|W):' "$WORK/buildroot-$label.log" | tail -n 2 | tr '\n' ' ')"
    rm -rf "$tmp"
    return 1
  fi
  if [ ! -f "$tmp/root$HDIR/vmlinux" ] && ! vmlinux_btf "$kdir/vmlinuz" "$tmp/root$HDIR/vmlinux"; then
    KERR="no BTF could be extracted from $kdir/vmlinuz"
    rm -rf "$tmp"
    return 1
  fi
  echo "$HCACHE_FORMAT" > "$tmp/.complete"
  basename "$kdir" > "$tmp/kdir"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  note "kernel $label: $base build root with linux-headers-$kv $ver, $(du -sm "$dir" | cut -f1) MB, in $(since "$t0") s"
  for p in "$CACHE"/buildroot-*/; do # older builds of the same kernel series
    p=${p%/}
    [ "$p" != "$dir" ] && [ ! -d "$CACHE/$(cat "$p/kdir" 2> /dev/null)" ] && rm -rf "$p"
  done
  return 0
}

# run_build DIR CMD...: CMD in the build environment, DIR (a directory of
# this host) being where the sources are: DIR itself on the host, /build in
# a build root (bind-mounted there, in a mount namespace of its own so that
# nothing stays mounted whatever happens).
run_build() {
  local dir=$1
  shift
  if [ -z "$BUILD_ROOT" ]; then
    (cd "$dir" && "$@")
    return
  fi
  mkdir -p "$BUILD_ROOT/build"
  unshare --mount --fork -- /bin/sh -c '
    root=$1 dir=$2
    shift 2
    mount --bind "$dir" "$root/build" && mount -t proc proc "$root/proc" &&
      exec chroot "$root" /bin/sh -c "cd /build && exec \"\$@\"" sh "$@"' sh "$BUILD_ROOT" "$dir" "$@"
}

# compile_sim LABEL KDIR DIR HEADER: the simulator's sources in DIR (with
# HEADER as its kfd_sim_btf.h), built for KDIR's kernel: DIR/amdgpu.ko.
compile_sim() {
  local label=$1 kdir=$2 dir=$3 header=$4 kv flavor extra=() mdir
  kv=$(cat "$kdir/kver")
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$SIMSRC"/Kbuild "$SIMSRC"/*.c "$SIMSRC"/*.h "$dir/"
  rm -f "$dir/kfd_sim_driver.c"
  cp "$header" "$dir/kfd_sim_btf.h"
  # 6.1's linux-kbuild has no resolve_btfids; the module has no BTF_ID sets.
  [ -x "$BUILD_ROOT$HDIR/tools/bpf/resolve_btfids/resolve_btfids" ] || extra+=(RESOLVE_BTFIDS=true)
  # queue->device became a struct kfd_node in v6.5
  case $kv in
    [0-5].* | 6.[0-4].* | 6.[0-4]-*) flavor=kfd_dev ;;
    *) flavor=kfd_node ;;
  esac
  mdir=$dir
  [ -n "$BUILD_ROOT" ] && mdir=/build
  run_build "$dir" make -C "$HDIR" M="$mdir" "${extra[@]}" SIM_FLAVOR=$flavor modules > "$dir/build.log" 2>&1 &&
    [ -f "$dir/amdgpu.ko" ] && echo $flavor > "$dir/flavor"
}

# describe_module KO OUT: what gpuq's BPF object reads of amdkfd, as the
# module KO's BTF presents it (kfd_btf describe; a module built by 6.12+'s
# kbuild carries pahole's distilled base in .BTF.base).
describe_module() {
  local ko=$1 out=$2 x
  x=$(mktemp -d)
  objcopy --dump-section .BTF="$x/btf" "$ko" /dev/null 2> /dev/null
  if readelf -S "$ko" | grep -q ' \.BTF\.base '; then
    objcopy --dump-section .BTF.base="$x/base" "$ko" /dev/null
    "$KFD_BTF" describe "$BPF_OBJECT" "$KDIR_OF_KO/vmlinux.btf" "$x/btf" "$x/base" > "$out"
  else
    "$KFD_BTF" describe "$BPF_OBJECT" "$KDIR_OF_KO/vmlinux.btf" "$x/btf" > "$out"
  fi
  local rc=$?
  rm -rf "$x"
  return $rc
}

# build_module LABEL KDIR: MODCPIO = the simulator built for it, as a cpio,
# with the enums and field presence of its real amdgpu.ko (kfd_sim_btf.h
# from kfd_btf header). Two host-side checks per kernel, from the BTF:
#   <label> sim-types       every amdkfd field and enum value gpuq's BPF
#                           object reads is the same in the simulator's
#                           module as in the real amdgpu.ko
#   <label> sim-types-control  the negative control: the simulator built with
#                           another kernel's header (6.12's; 7.2's on 6.12)
#                           must differ from the real module
build_module() {
  local label=$1 kdir=$2 kv b t0 other okdir
  kv=$(cat "$kdir/kver")
  b=$WORK/mod-$label
  rm -rf "$b"
  mkdir -p "$b/root/lib/kfd-sim"
  if ! real_btf "$kdir"; then
    KERR="no BTF could be extracted from $kdir (vmlinuz, amdgpu.ko)"
    return 1
  fi
  "$KFD_BTF" header "$kdir/vmlinux.btf" "$kdir/amdgpu.btf" > "$b/kfd_sim_btf.h" || {
    KERR="kfd_btf header failed on $kdir's BTF"
    return 1
  }
  t0=$(now)
  if ! compile_sim "$label" "$kdir" "$b/src" "$b/kfd_sim_btf.h"; then
    KERR="module build failed: $(grep -E 'error|Error' "$b/src/build.log" | head -n 3 | tr '\n' ' ') (log $b/src/build.log)"
    return 1
  fi
  if ! readelf -S "$b/src/amdgpu.ko" | grep -q ' \.BTF '; then
    KERR="the module has no .BTF section (pahole? vmlinux?): $(grep -i btf "$b/src/build.log" | head -n 2 | tr '\n' ' ')"
    return 1
  fi
  note "kernel $label: simulator built ($(cat "$b/src/flavor") shape${BUILD_ROOT:+, in $(basename "$(dirname "$BUILD_ROOT")")}) in $(since "$t0") s, $(($(stat -c %s "$b/src/amdgpu.ko") / 1024)) KiB"
  # The simulator as gpuq reads it = the real module as gpuq reads it.
  KDIR_OF_KO=$kdir
  "$KFD_BTF" describe "$BPF_OBJECT" "$kdir/vmlinux.btf" "$kdir/amdgpu.btf" > "$b/real.types" &&
    describe_module "$b/src/amdgpu.ko" "$b/sim.types"
  if [ -s "$b/real.types" ] && cmp -s "$b/real.types" "$b/sim.types"; then
    pass "$label sim-types: the simulator's BTF = the real amdgpu.ko's for all $(wc -l < "$b/real.types") amdkfd fields and enum values gpuq reads ($(grep -c '^enum kfd_queue_type' "$b/real.types") kfd_queue_type values, context_id $(grep -q 'context_id: int' "$b/real.types" && echo present || echo absent))"
  else
    fail "$label sim-types: the simulator's BTF differs from the real amdgpu.ko's" "$(diff "$b/real.types" "$b/sim.types" | head -n 20)"
  fi
  # Negative control: another kernel's enums in this kernel's simulator.
  other=6.12
  [ "$label" = 6.12 ] && other=7.2
  if prepare "$other" > /dev/null && okdir=$KDIR && real_btf "$okdir" &&
    "$KFD_BTF" header "$okdir/vmlinux.btf" "$okdir/amdgpu.btf" > "$b/other.h" &&
    compile_sim "$label" "$kdir" "$b/other" "$b/other.h" &&
    describe_module "$b/other/amdgpu.ko" "$b/other.types"; then
    if ! cmp -s "$b/real.types" "$b/other.types"; then
      pass "$label sim-types-control: built with $other's header, the simulator differs from the real module in $(diff "$b/real.types" "$b/other.types" | grep -c '^[<>]') lines (e.g. $(diff "$b/real.types" "$b/other.types" | grep -m 1 '^[<>]'))"
    else
      fail "$label sim-types-control: built with $other's header, the simulator still looks like the real module: the comparison cannot fail"
    fi
  else
    skip "$label sim-types-control: no simulator with kernel $other's header could be built: ${KERR:-$(tail -n 2 "$b/other/build.log" 2> /dev/null | tr '\n' ' ')}"
  fi
  rm -rf "$b/other"
  KDIR=$kdir
  cp "$b/src/amdgpu.ko" "$b/root/lib/kfd-sim/"
  strip --strip-debug "$b/root/lib/kfd-sim/amdgpu.ko" # keeps .BTF
  # What amdgpu-dkms hosts load: the same module with no .BTF, so
  # /sys/kernel/btf/amdgpu is absent and the BTF-free tiers are planned.
  mkdir -p "$b/root/lib/kfd-sim/nobtf"
  objcopy --remove-section=.BTF --remove-section=.BTF.base "$b/root/lib/kfd-sim/amdgpu.ko" "$b/root/lib/kfd-sim/nobtf/amdgpu.ko"
  cp "$b/src/flavor" "$b/root/lib/kfd-sim/flavor"
  # What the guest learns of this kernel's amdkfd (from the real BTF)
  grep -q 'KFD_SIM_HAS_KFD_PROCESS_CONTEXT_ID' "$b/kfd_sim_btf.h" && echo contexts >> "$b/root/lib/kfd-sim/features"
  grep -q 'KFD_SIM_HAS_AMDGPU_GMC_XNACK_FLAGS' "$b/kfd_sim_btf.h" && echo xnack-chain >> "$b/root/lib/kfd-sim/features"
  touch "$b/root/lib/kfd-sim/features"
  (cd "$b/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$b/module.cpio.gz"
  MODCPIO=$b/module.cpio.gz
}

# ---- Debian's real ROCr on the null GPU (tests/nullgpu) -------------------------
# build_rocr ROOT: the null thunk (nullgpu.c, with KFD forwarding) as
# ROOT/lib/nullgpu/libhsakmt.so.1 and rocr_client (the HSA API, linked to
# Debian's libhsa-runtime64.so.1, which lands at its own path, where the
# agent's --hsa-runtime finds it) with its closure; Debian's own thunk is not
# copied. What is missing goes to ROOT/lib/nullgpu/missing: the guest skips
# the rocr: checks naming it.
ROCR_LIB=/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1
build_rocr() {
  local r=$1 ng=$SRC/tests/nullgpu out=$WORK/nullgpu why=""
  mkdir -p "$r/lib/nullgpu" "$out"
  if [ ! -f /usr/include/hsakmt.h ] && [ ! -f /usr/include/hsakmt/hsakmt.h ]; then
    why="the null thunk needs hsakmt.h: package libhsakmt-dev (scripts/install-deps.sh --test)"
  elif [ ! -e "$ROCR_LIB" ]; then
    why="Debian's ROCr is missing: package libhsa-runtime64-1 (scripts/install-deps.sh --test)"
  elif [ ! -f /usr/include/hsa/hsa.h ]; then
    why="rocr_client needs hsa/hsa.h: package libhsa-runtime-dev (scripts/install-deps.sh --test)"
  elif ! gcc -std=gnu11 -shared -fPIC -O2 -Wall -Wextra -Wpedantic -Werror -fvisibility=hidden \
    -I "$WORK/shim" -Wl,--version-script="$ng/libhsakmt.map" -o "$out/libhsakmt.so.1" \
    "$ng/nullgpu.c" -lpthread > "$out/build.log" 2>&1; then
    fail "build the null thunk (nullgpu.c)" "$(cat "$out/build.log")"
    why="the null thunk did not build"
  elif ! gcc -std=gnu11 -O2 -Wall -Wextra -Wpedantic -Werror -o "$out/rocr_client" \
    "$ng/rocr_client.c" "$ROCR_LIB" >> "$out/build.log" 2>&1; then
    fail "build rocr_client" "$(cat "$out/build.log")"
    why="rocr_client did not build"
  fi
  if [ -n "$why" ]; then
    echo "$why" > "$r/lib/nullgpu/missing"
    note "rocr checks will skip: $why"
    return 0
  fi
  cp "$out/libhsakmt.so.1" "$r/lib/nullgpu/"
  cp "$out/rocr_client" "$r/bin/"
  # ROCr once, at the path the agent's --hsa-runtime names: ldd says
  # /lib/..., a second copy there would be the one the client maps (the
  # guest's /lib is no symlink) and the uprobes would sit on the other.
  # shellcheck disable=SC2046
  copy_paths "$r" $(LD_LIBRARY_PATH=$out ldd "$out/rocr_client" | grep -oE '/[^ ]+' |
    grep -vE "^$out/|/libhsa-runtime64\.so")
  mkdir -p "$r$(dirname "$ROCR_LIB")"
  cp -L "$ROCR_LIB" "$r$ROCR_LIB"
  note "rocr client: Debian's $(readlink -f "$ROCR_LIB" | xargs basename) + the null thunk"
}

# build_hip ROOT: hip_client (tests/nullgpu/hip_client.cc, built by the
# build tree with Debian's hipcc) and its closure, with what HIP dlopen()s:
# libamd_comgr.so.2 (code-object metadata) and its own closure, LLVM
# included (about 240 MB unpacked: the guest's initramfs grows by that).
# After build_rocr, whose thunk and ROCr it shares. What is missing goes to
# ROOT/lib/nullgpu/hip-missing: the guest skips the hip: checks naming it.
HIP_CLIENT=${GPUQ_KTEST_HIP_CLIENT:-$(dirname "$AGENT")/tests/nullgpu/hip_client}
COMGR_LIB=/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2
build_hip() {
  local r=$1 why=""
  if [ -f "$r/lib/nullgpu/missing" ]; then
    return 0 # the guest skips naming what build_rocr found missing
  elif [ ! -x "$HIP_CLIENT" ]; then
    why="no hip_client at $HIP_CLIENT: Debian's hipcc builds it (package hipcc, scripts/install-deps.sh --test)"
  elif [ ! -e "$COMGR_LIB" ]; then
    why="HIP's comgr is missing: package libamd-comgr2 (scripts/install-deps.sh --test)"
  fi
  if [ -n "$why" ]; then
    echo "$why" > "$r/lib/nullgpu/hip-missing"
    note "hip checks will skip: $why"
    return 0
  fi
  cp "$HIP_CLIENT" "$r/bin/hip_client"
  # shellcheck disable=SC2046
  copy_paths "$r" $( (LD_LIBRARY_PATH=$r/lib/nullgpu ldd "$HIP_CLIENT"; ldd "$COMGR_LIB"; echo "$COMGR_LIB") |
    grep -oE '/[^ ]+' | grep -vE "^$r/|/libhsa-runtime64\.so|/libhsakmt\.so")
  note "hip client: Debian's $(readlink -f /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 | xargs basename) and $(readlink -f "$COMGR_LIB" | xargs basename) over it"
}

# build_rocm_stacks ROOT: the ROCm stacks users run in their containers in
# 2026 (ROCr 6.4.3 from Debian sid, 7.2.4 from experimental: the cached
# roots of tests/nullgpu/rocm_stacks.sh), each as ROOT/rocm/STACK: lib/ with
# that root's ROCr and its closure (its own glibc and loader: the guest runs
# bin/ through lib/ld-linux-x86-64.so.2 --library-path lib, as a container
# with its own ROCm), rocminfo, rocr_client compiled against that root's
# hsa.h, and the KFD null GPU (kfd_nullgpu.c: ROCr >= 6.3 links the thunk
# in) forwarding its queues to the simulator's /dev/kfd. About 12 MB each.
# A stack that cannot be had leaves ROOT/lib/nullgpu/rocm-STACK-missing:
# the guest skips its checks naming it.
build_rocm_stacks() {
  local r=$1 out=$WORK/nullgpu stack d p why=""
  . "$SRC/tests/nullgpu/rocm_stacks.sh"
  mkdir -p "$r/lib/nullgpu" "$out"
  echo "$ROCM_STACKS" > "$r/lib/nullgpu/rocm-stacks"
  if ! gcc -std=gnu11 -shared -fPIC -O2 -Wall -Wextra -Wpedantic -Werror -fvisibility=hidden \
    -I "$WORK/shim" -o "$out/libgpuq_kfdnull.so" "$SRC/tests/nullgpu/kfd_nullgpu.c" -ldl -lpthread \
    > "$out/kfdnull-build.log" 2>&1; then
    fail "build the KFD null GPU (kfd_nullgpu.c)" "$(cat "$out/kfdnull-build.log")"
    why="the KFD null GPU did not build"
  fi
  for stack in $ROCM_STACKS; do
    d=$r/rocm/$stack
    if [ -z "$why" ] && ! rocm_root "$stack"; then
      echo "$ROCM_WHY" > "$r/lib/nullgpu/rocm-$stack-missing"
      note "ROCm $stack checks will skip: $ROCM_WHY"
      continue
    elif [ -n "$why" ]; then
      echo "$why" > "$r/lib/nullgpu/rocm-$stack-missing"
      continue
    fi
    mkdir -p "$d/lib" "$d/bin"
    if ! gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I "$ROCM_ROOT/usr/include" "$SRC/tests/nullgpu/rocr_client.c" \
      -o "$d/bin/rocr_client" -L "$ROCM_ROOT/usr/lib/x86_64-linux-gnu" -l:libhsa-runtime64.so.1 \
      -Wl,--allow-shlib-undefined > "$out/rocr-client-$stack.log" 2>&1; then
      fail "build rocr_client against ROCm $stack's hsa.h" "$(cat "$out/rocr-client-$stack.log")"
      echo "rocr_client did not build against ROCm $stack's hsa.h" > "$r/lib/nullgpu/rocm-$stack-missing"
      continue
    fi
    cp -L "$ROCM_ROOT/usr/bin/rocminfo" "$d/bin/"
    for p in $(chroot "$ROCM_ROOT" ldd /usr/bin/rocminfo | grep -oE '/[^ ]+'); do
      cp -L "$ROCM_ROOT$p" "$d/lib/"
    done
    cp "$out/libgpuq_kfdnull.so" "$d/lib/"
    echo "$ROCM_VERSION" > "$d/version"
    note "ROCm $stack: Debian's libhsa-runtime64-1 $ROCM_VERSION ($(du -sm "$d" | cut -f1) MB with its closure) + the KFD null GPU"
  done
}

# build_hip_stacks ROOT: HIP 6.4.3 (sid) and 7.2.4 (experimental) as users
# run them, in the HIP flavour of each cached root (rocm_stacks.sh: ROCr,
# HIP, comgr with its LLVM, the root's hipcc; about 0.9 GB each), and
# rocBLAS 6.4.4 in the 6.4 root's rocBLAS flavour (4.8 GB: its kernels for
# every GPU target; Debian has no rocBLAS for HIP 7). The guest sees each
# root read-only over 9p (GUEST_SHARES, tags hip-STACK and rocblas-6.4:
# growing the initramfs by that much would cost every boot) and runs our
# client chrooted in it, as a container with its own ROCm (root_client).
build_hip_stacks() {
  local r=$1 stack
  for stack in $ROCM_STACKS; do
    root_client "$r" hip-$stack "$stack" hip hip_client
  done
  root_client "$r" rocblas-6.4 6.4 rocblas rocblas_client -lrocblas
}

# root_client ROOT TAG STACK FLAVOUR CLIENT [LIBS...]: ROOT/rocm/TAG gets
# what is ours: tests/nullgpu/CLIENT.cc built in `rocm_root STACK FLAVOUR`
# by the root's own hipcc for gfx90a (with LIBS), the KFD null GPU
# (build_rocm_stacks's) and the versions; the root goes in GUEST_SHARES as
# TAG. A client that cannot be had leaves ROOT/lib/nullgpu/TAG-missing: the
# guest skips its checks naming it.
root_client() {
  local r=$1 tag=$2 stack=$3 flavour=$4 client=$5 out=$WORK/nullgpu/$2 why="" log
  shift 5
  if [ -f "$r/lib/nullgpu/rocm-$stack-missing" ]; then
    why=$(cat "$r/lib/nullgpu/rocm-$stack-missing")
  elif ! rocm_root "$stack" "$flavour"; then
    why=$ROCM_WHY
  else
    mkdir -p "$out"
    cp "$SRC/tests/nullgpu/$client.cc" "$out/"
    log=$out/hipcc.log
    # in the root as the simulator is built in a kernel's (run_build; HOME:
    # comgr, HIP 7.2's, caches in ~/.cache)
    if ! BUILD_ROOT=$ROCM_ROOT run_build "$out" env HOME=/build hipcc --offload-arch=gfx90a -std=c++17 -O2 \
      -Wall -Wextra -Werror -o "$client" "$client.cc" "$@" > "$log" 2>&1 || [ ! -x "$out/$client" ]; then
      fail "build $client with the hipcc of ROCm $stack's $flavour root" "$(head -n 20 "$log")"
      why="$client did not build with the hipcc of ROCm $stack's $flavour root"
    fi
  fi
  if [ -n "$why" ]; then
    echo "$why" > "$r/lib/nullgpu/$tag-missing"
    note "$tag checks will skip: $why"
    return 0
  fi
  mkdir -p "$r/rocm/$tag"
  cp "$out/$client" "$WORK/nullgpu/libgpuq_kfdnull.so" "$r/rocm/$tag/"
  echo "$ROCM_HIP_VERSION" > "$r/rocm/$tag/hip-version"
  echo "$ROCM_VERSION" > "$r/rocm/$tag/rocr-version"
  [ -z "${ROCM_ROCBLAS_VERSION:-}" ] || echo "$ROCM_ROCBLAS_VERSION" > "$r/rocm/$tag/rocblas-version"
  GUEST_SHARES="$GUEST_SHARES $tag=$ROCM_ROOT"
  note "$tag: Debian's libamdhip64 $ROCM_HIP_VERSION with ROCr $ROCM_VERSION${ROCM_ROCBLAS_VERSION:+ and rocBLAS $ROCM_ROCBLAS_VERSION}, $(du -sm "$(dirname "$ROCM_ROOT")" | cut -f1) MB shared over 9p, + $client and the KFD null GPU"
}

# ---- the guest payload (same for every kernel) ------------------------------------
build_payload() {
  local r=$WORK/rootfs
  rm -rf "$r" "$WORK/shim"
  mkdir -p "$r"/{bin,sbin,dev,proc,sys,tmp,etc,usr/bin,usr/sbin,lib/kfd-sim} "$WORK/shim/drm"
  # Debian's linux-libc-dev has no drm/ headers; kfd_ioctl.h only needs these.
  printf '#include <linux/types.h>\n#include <linux/ioctl.h>\n' > "$WORK/shim/drm/drm.h"
  if ! gcc -O2 -Wall -Wextra -Werror -static -I "$WORK/shim" -I "$SIMSRC" -o "$r/bin/kfd_sim_driver" \
    "$SIMSRC/kfd_sim_driver.c" > "$WORK/driver-build.log" 2>&1; then
    fail "build kfd_sim_driver (gcc -static)" "$(cat "$WORK/driver-build.log")"
    return 1
  fi
  if ! gcc -O2 -Wall -Wextra -Werror -static -o "$r/bin/capbound" "$SIMSRC/capbound.c" > "$WORK/capbound-build.log" 2>&1; then
    fail "build capbound (gcc -static)" "$(cat "$WORK/capbound-build.log")"
    return 1
  fi
  build_rocr "$r"
  build_hip "$r"
  build_rocm_stacks "$r"
  build_hip_stacks "$r"
  copy_with_libs /bin/busybox /bin/busybox "$r"
  copy_with_libs "$AGENT" /bin/gpuq-agent "$r"
  # the kernel's own counts of skipped programs (recursion_misses)
  copy_with_libs "$(command -v bpftool)" /bin/bpftool "$r"
  command -v strip > /dev/null && strip --strip-debug "$r/bin/gpuq-agent"
  cp "$SIMSRC/guest-init.sh" "$r/init"
  chmod +x "$r/init"
  cp "$SIMSRC/compare.awk" "$SIMSRC/check_lists.sh" "$r/lib/kfd-sim/"
  (cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/payload.cpio.gz"
  note "guest payload: $(du -sm "$r" | cut -f1) MB unpacked, $(($(stat -c %s "$WORK/payload.cpio.gz") / 1048576)) MB gz"
}

# ---- main ---------------------------------------------------------------------
note "simulator tier: agent $AGENT, cache $CACHE, logs $WORK"
READY=()
for k in $KERNELS; do
  t_k=$(now)
  if prepare "$k" && prepare_buildenv "$k" "$KDIR" && build_module "$k" "$KDIR"; then
    READY+=("$k $KDIR $MODCPIO")
    note "kernel $k: ready in $(since "$t_k") s"
  else
    skip_kernel "$k" "$KERR"
    compat_skipped "$k" "$KERR"
  fi
done
if [ ${#READY[@]} = 0 ]; then
  echo "GPUQ-KTIER SKIPPED: no kernel could be had"
  summary
  exit 0
fi
# run_guests: start_guest "label kdir modcpio" boots one, judge_guest LABEL
# judges it.
start_guest() {
  local label kdir modcpio
  read -r label kdir modcpio <<< "$1"
  KDIR_OF[$label]=$kdir
  # share.cpio.gz: 9p over virtio (qemu_lib.sh), for GUEST_SHARES
  cat "$WORK/payload.cpio.gz" "$modcpio" "$kdir/share.cpio.gz" > "$WORK/initrd-$label.gz"
  qemu_start "$label" "$kdir" "$WORK/initrd-$label.gz" "$WORK/boot-$label.log"
}
judge_guest() {
  judge_markers "$1" "$WORK/boot-$1.log"
  # the compatibility rows come from the tiers' lifecycle checks (the btf
  # and nobtf scopes), one row per kernel series
  [ "${GUEST_SCOPE[$1]:-}" = programs ] ||
    "$HERE/compat.sh" rows sim "$1" "$(cat "${KDIR_OF[$1]}/package")" "$WORK/boot-$1.log" |
    awk -F'\t' -v OFS='\t' -v series="$(series_of "$1")" '{ $1 = series; print }' >> "$WORK/compat.tsv"
}
# split_guests ENTRY... (oldest first): GUESTS, the guests to boot. A main
# pair for each kernel of GPUQ_KTEST_MAINS (default: the newest): "K"
# (GPUQ_SCOPE=btf: the simulator with its BTF, the fentry and kprobe tiers,
# the runtime clients in btf-fentry, record, short-lived) and "K-nobtf"
# (GPUQ_SCOPE=nobtf: the simulator without BTF, the args-kprobe and
# tracepoint tiers and their clients), side by side, one core each. In one
# guest they took 1044 s on 7.3 (clean clone of fac2087, 2026-11-28), of
# which 517 s the nobtf group; split, 571 s and 528 s at once, the tier
# 637 s instead of 1117 s. And a programs guest
# "K-programs" (GPUQ_SCOPE=programs: the users' experiment, five HIP
# programs under four agents, one per probe tier) for each kernel of
# GPUQ_KTEST_PROGRAMS (default: none); the mains first, newest first.
# Until 2026-11-28 the oldest and newest kernels had both (four guests);
# that day the suite took over CI's 90 minutes, and the programs guests
# could not hold their five programs within 1200 s under TCG on CI's kind
# of machine: 7.3's after 849 s, then over 1237 s twice; 6.1's after 503 s
# and 866 s, then over 1065 s beside 7.3's main guest. So a default run
# checks the newest kernel's lifecycle and runtime clients (ROCr 5.2.3,
# 6.4.3, 7.2.4 and HIP 5.2.3 in their probe tiers), and the users'
# experiment with real HIP runs on request (GPUQ_KTEST_PROGRAMS=6.1 with
# GPUQ_KTEST_KERNELS="6.1 7.3": 6.1 does not preempt BPF programs, so the
# doorbells of the programs are exact there). Not with
# GPUQ_KTEST_ONLY (a developer's knob: one guest per kernel, running the
# groups named).
split_guests() {
  local e label rest last=${!#} mains=() progs=() n=0
  last=${last%% *} # the newest kernel's label
  for e in "$@"; do
    read -r label rest <<< "$e"
    if [ -n "${GPUQ_KTEST_ONLY:-}" ]; then
      mains=("$e" "${mains[@]}")
      continue
    fi
    case " ${GPUQ_KTEST_MAINS:-$last} " in
      *" $label "*)
        mains=("$e" "$label-nobtf $rest" "${mains[@]}")
        GUEST_SCOPE[$label]=btf
        GUEST_SCOPE[$label-nobtf]=nobtf
        NEWEST_MAIN=$label
        n=$((n + 1))
        ;;
    esac
    case " ${GPUQ_KTEST_PROGRAMS:-} " in
      *" $label "*)
        progs=("$label-programs $rest" "${progs[@]}")
        GUEST_SCOPE[$label-programs]=programs
        ;;
    esac
  done
  [ $n -gt 1 ] && SPLIT_CLIENTS=1
  for e in "${mains[@]}"; do
    read -r label rest <<< "$e"
    [ -n "${GPUQ_KTEST_ONLY:-}" ] ||
      GUEST_APPEND[$label]="GPUQ_CLIENTS=$(client_plan "$label" | tr -s ' \n' ',' | sed 's/,$//')"
  done
  GUESTS=("${mains[@]}" "${progs[@]}")
}
if build_payload; then
  prepare_unlock
  t_k=$(now)
  split_guests "${READY[@]}"
  run_guests start_guest judge_guest "${GUESTS[@]}"
  note "kernels ${KERNELS}: boots and checks, $KTEST_JOBS at a time, took $(since "$t_k") s"
fi
if [ -s "$WORK/compat.tsv" ]; then
  note "compatibility, as this run found it ($WORK/compat.tsv; scripts/compat-table.sh puts it in the README):"
  "$HERE/compat.sh" table "$WORK/compat.tsv" | sed 's/^/#   /'
fi
rm -rf "$WORK/rootfs" "$WORK/payload.cpio.gz" "$WORK/shim"
note "simulator tier took $(($(date +%s) - T_START)) s in all; logs in $WORK"
summary

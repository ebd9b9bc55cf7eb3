# Shared host side of the QEMU kernel tiers (run_qemu_tier.sh: the real
# amdgpu.ko; run_sim_tier.sh: the KFD simulator). Sourced, not run.
#
# The caller sets SRC (repository), WORK (logs, scratch), CACHE (kernel
# cache), BOOT_TIMEOUT (seconds per boot), KERNELS (labels), N_CHECKS (checks
# per kernel), AGENT, sources tests/lib/assert.sh, and defines:
#   expected_checks     the checks each guest must report (judge_markers)
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
# Each kernel is cached as $CACHE/<package>_<version>/ holding vmlinuz, kver,
# label, deb-bytes, config and modules.cpio.gz (the amdgpu closure, plain .ko,
# with its own modules.dep); .complete holds CACHE_FORMAT, so a cache written
# by another version of this script is rebuilt.
CACHE_FORMAT=2
APT_LISTS_FRESH=0
apt_update_once() {
  [ $APT_LISTS_FRESH = 1 ] && return 0
  APT_LISTS_FRESH=1
  "${APT[@]}" update > "$WORK/apt-update.log" 2>&1
}

candidate() { # PKG [APT OPTIONS...]: its candidate version, or nothing
  local pkg=$1
  shift
  apt-cache "$@" policy "$pkg" 2> /dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2; exit }'
}
dep_of() { # META [APT OPTIONS...]: the linux-image-* it depends on
  local meta=$1
  shift
  apt-cache "$@" depends "$meta" 2> /dev/null | awk '/Depends: linux-image-/ { print $2; exit }'
}

# trixie through a private apt config (the system's sources stay untouched):
# only used when bookworm has no 6.12 (test-environments.md 2.6).
TRIXIE_OPTS=()
trixie_opts() {
  local d=$CACHE/trixie-apt mirror
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
  [ -n "$mirror" ] || mirror=$(awk '/^deb / && !/security/ { print $2; exit }' /etc/apt/sources.list 2> /dev/null)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  mkdir -p "$d/lists/partial" "$d/archives/partial"
  echo "deb $mirror trixie main" > "$d/trixie.list"
  TRIXIE_OPTS=(-o "Dir::Etc::sourcelist=$d/trixie.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$d/lists"
    -o "Dir::Cache::archives=$d/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1)
  "${APT[@]}" "${TRIXIE_OPTS[@]}" update > "$WORK/apt-update-trixie.log" 2>&1
}

# resolve LABEL: sets KPKG, KVERSION, KAPTO (apt options) and KNOTE, or
# returns 1.
resolve() {
  local label=$1 meta dep
  KPKG="" KVERSION="" KAPTO=() KNOTE=""
  case $label in
    6.1) meta=linux-image-amd64 ;;
    6.12) meta=linux-image-6.12-amd64 ;;
    *) return 1 ;;
  esac
  for attempt in 1 2; do
    dep=$(dep_of "$meta")
    if [ -n "$dep" ]; then
      # 6.12: the unsigned image (same kernel and modules, no shim signature).
      if [ "$label" = 6.12 ] && [ -n "$(candidate "$dep-unsigned")" ]; then dep=$dep-unsigned; fi
      KVERSION=$(candidate "$dep")
      if [ -n "$KVERSION" ]; then
        KPKG=$dep
        KNOTE="bookworm"
        return 0
      fi
    fi
    [ $attempt = 1 ] && apt_update_once
  done
  if [ "$label" = 6.12 ]; then
    trixie_opts
    dep=$(dep_of linux-image-amd64 "${TRIXIE_OPTS[@]}")
    case $dep in linux-image-6.12*) ;; *) dep="" ;; esac
    if [ -n "$dep" ]; then
      KVERSION=$(candidate "$dep" "${TRIXIE_OPTS[@]}")
      if [ -n "$KVERSION" ]; then
        KPKG=$dep
        KAPTO=("${TRIXIE_OPTS[@]}")
        KNOTE="trixie (bookworm has no 6.12 in this machine's apt sources)"
        return 0
      fi
    fi
  fi
  return 1
}

# prepare LABEL: KDIR = the cached, unpacked kernel (downloads it if needed).
prepare() {
  local label=$1 dir tmp deb vmlinuz kv base moddir line m t0 rel
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
    KERR="no Debian package for Linux $label is available from apt (looked for the dependency of linux-image-amd64 / linux-image-6.12-amd64 in bookworm, then trixie)"
    return 1
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
  if ! (cd "$tmp" && "${APT[@]}" "${KAPTO[@]}" download "$KPKG=$KVERSION") > "$WORK/download-$label.log" 2>&1; then
    # Stale package lists name a build the mirror no longer has: refresh once.
    if [ $APT_LISTS_FRESH = 0 ] && [ ${#KAPTO[@]} = 0 ]; then
      rm -rf "$tmp"
      apt_update_once
      prepare "$label"
      return $?
    fi
    KERR="apt-get download $KPKG=$KVERSION failed: $(tail -n 2 "$WORK/download-$label.log" | tr '\n' ' ')"
    rm -rf "$tmp"
    return 1
  fi
  deb=$(ls "$tmp"/*.deb)
  note "kernel $label: downloaded $KPKG $KVERSION ($KNOTE), $(($(stat -c %s "$deb") / 1048576)) MB in $(since "$t0") s"
  t0=$(now)
  dpkg-deb -x "$deb" "$tmp/root" || {
    KERR="dpkg-deb -x $deb failed"
    rm -rf "$tmp"
    return 1
  }
  vmlinuz=$(ls "$tmp"/root/boot/vmlinuz-* 2> /dev/null | head -n 1)
  kv=${vmlinuz##*/vmlinuz-}
  base=$tmp/root
  [ -d "$base/lib/modules/$kv" ] || base=$tmp/root/usr # merged /usr packages
  moddir=$base/lib/modules/$kv
  if [ -z "$vmlinuz" ] || [ ! -d "$moddir" ]; then
    KERR="$KPKG has no boot/vmlinuz-* or no lib/modules/$kv"
    rm -rf "$tmp"
    return 1
  fi
  depmod -b "$base" "$kv" # the .deb ships no modules.dep (postinst makes it)
  line=$(grep -E '(^|/)amdgpu\.ko(\.[a-z]+)?:' "$moddir/modules.dep")
  if [ -z "$line" ]; then
    KERR="$KPKG has no amdgpu module"
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$tmp/out/modroot/lib/modules/$kv"
  for m in $(echo "$line" | tr -d ':'); do
    rel=$(dirname "$m")
    mkdir -p "$tmp/out/modroot/lib/modules/$kv/$rel"
    cp "$moddir/$m" "$tmp/out/modroot/lib/modules/$kv/$rel/"
  done
  for m in modules.builtin modules.builtin.modinfo modules.order; do
    [ -f "$moddir/$m" ] && cp "$moddir/$m" "$tmp/out/modroot/lib/modules/$kv/"
  done
  # 6.12 ships .ko.xz: busybox modprobe can load those, but decompressing
  # under TCG costs ~3 s per boot; plain .ko only grow the initramfs by 3 MB.
  find "$tmp/out/modroot" -name '*.ko.xz' -exec xz -d {} +
  find "$tmp/out/modroot" -name '*.ko.zst' -exec zstd -q -d --rm {} +
  [ -f "$tmp/out/modroot/lib/modules/$kv/modules.order" ] &&
    sed -i -E 's/\.ko\.(xz|zst)$/.ko/' "$tmp/out/modroot/lib/modules/$kv/modules.order"
  depmod -b "$tmp/out/modroot" "$kv" # a modules.dep of just the closure
  (cd "$tmp/out/modroot" && find . | cpio -o -H newc --quiet | gzip -1) > "$tmp/out/modules.cpio.gz"
  rm -rf "$tmp/out/modroot"
  cp "$vmlinuz" "$tmp/out/vmlinuz"
  cp "$tmp/root/boot/config-$kv" "$tmp/out/config" 2> /dev/null
  echo "$kv" > "$tmp/out/kver"
  echo "$label" > "$tmp/out/label"
  echo "$KPKG $KVERSION $KNOTE" > "$tmp/out/package"
  stat -c %s "$deb" > "$tmp/out/deb-bytes"
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
# the console goes to LOG. qemu_finish LABEL waits for it: LOG gets \r
# stripped, INITRD is removed, BOOT_RC is set (124: timeout). The guests of
# several kernels run side by side, one vCPU each, so each keeps one of this
# machine's 2 cores busy.
declare -A QEMU_PID QEMU_T0 QEMU_LOG QEMU_INITRD
qemu_start() {
  local label=$1 kdir=$2 initrd=$3 log=$4
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
  start_bg timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 2G -nic none \
    -kernel "$kdir/vmlinuz" -initrd "$initrd" \
    -append "console=ttyS0 panic=-1 loglevel=5 GPUQ_KERNEL=$label" \
    -nographic -no-reboot < /dev/null > "$log.raw" 2>&1
  QEMU_PID[$label]=$BG_PID
}

qemu_finish() {
  local label=$1 log=${QEMU_LOG[$1]} wall tl
  wait "${QEMU_PID[$label]}"
  BOOT_RC=$?
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

# judge_markers LABEL LOG: one ok/FAIL per expected check from the guest's
# "GPUQ-KTEST <label> <check> PASS|FAIL <detail>" lines; a missing marker
# and a FAIL the host does not know about are failures too.
judge_markers() {
  local label=$1 log=$2 check line status detail group
  for check in $(expected_checks); do
    line=$(grep -F "GPUQ-KTEST $label $check " "$log" | tail -n 1)
    if [ -z "$line" ]; then
      fail "$label $check: no result from the guest (qemu exit $BOOT_RC; see $log)"
      continue
    fi
    status=$(echo "$line" | awk '{ print $4 }')
    detail=$(echo "$line" | cut -d' ' -f5-)
    if [ "$status" = PASS ]; then
      pass "$label $check: $detail"
    elif [ "$status" = SKIP ]; then
      skip "$label $check: $detail"
    else
      group=${check%%:*}
      fail "$label $check: $detail" "$( (grep -F "GPUQ-LOG $label $group| " "$log" | head -n 60) ; echo "full log: $log")"
    fi
  done
  grep -E "^GPUQ-KTEST $label [^ ]+ FAIL" "$log" | while read -r _ _ check _; do
    expected_checks | tr ' ' '\n' | grep -qxF "$check" || echo "$check"
  done > "$WORK/unexpected-$label"
  while read -r check; do
    fail "$label $check: $(grep -F "GPUQ-KTEST $label $check " "$log" | cut -d' ' -f5- | tail -n 1)"
  done < "$WORK/unexpected-$label"
}

#!/usr/bin/env bash
# Kernel tests, real kernels in QEMU: the real gpuq-agent against the real
# amdgpu.ko of Debian's 6.1 and 6.12 kernels,
# booted under QEMU (TCG; no GPU, so KFD has a CPU-only topology). See
# tests/kernel/README.md for what it proves and what it does not.
#
#   run_qemu_tier.sh AGENT SRC [CACHE]
#     AGENT  the gpuq-agent binary to test (dynamically linked: its ldd
#            closure is copied into the guest)
#     SRC    the repository (for tests/lib/assert.sh and tests/kernel/*)
#     CACHE  where kernels are downloaded and unpacked once
#            (default ${XDG_CACHE_HOME:-/var/cache}/gpuq-kernels)
#
# Environment: GPUQ_KTEST_KERNELS ("6.1 6.12", or "all": those series, every
# check; default: KERNEL_SERIES_DEFAULT (6.1) and the newest series the
# mirror serves with every check, KERNEL_SERIES_ATTACH with the attach and
# verifier checks only, qemu_lib.sh), GPUQ_KTEST_APPEND (more kernel command line for
# every guest, a developer's knob), GPUQ_KTEST_SCOPE (attach: every series given gets the
# attach and verifier checks only), GPUQ_KTEST_BOOT_TIMEOUT
# (seconds per boot, 900: a loaded 2-core host needs ~450), GPUQ_KTEST_WORKDIR (logs and initramfs; default a
# new /tmp/gpuq-ktest.XXXXXX, kept and printed).
#
# Needs root and Debian 12 (installs what it needs with apt-get). Prints one
# ok/FAIL line per check and "N passed, N failed, N skipped"; exits non-zero
# on any failure. When QEMU or a kernel cannot be had it says what is missing,
# counts those checks as skipped (never passed) and exits 0.
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
KERNELS=${GPUQ_KTEST_KERNELS:-}
BOOT_TIMEOUT=${GPUQ_KTEST_BOOT_TIMEOUT:-900}
WORK=${GPUQ_KTEST_WORKDIR:-$(mktemp -d /tmp/gpuq-ktest.XXXXXX)}
mkdir -p "$WORK" "$CACHE"
rm -f "$WORK/compat.tsv"
T_START=$(date +%s)
. "$HERE/qemu_lib.sh"
prepare_lock
if [ -z "$KERNELS" ]; then
  # The full checks (record, the daemon against real KFD calls in every
  # tier) take 5-10 min per TCG guest, so only the default series and the
  # newest get them; KERNEL_SERIES_ATTACH boot for the attach and verifier
  # checks (~4 min each).
  full=" $(kernels_to_boot "" "$KERNEL_SERIES_DEFAULT") "
  KERNELS=$(kernels_to_boot "" "$KERNEL_SERIES_DEFAULT $KERNEL_SERIES_ATTACH")
  for k in $KERNELS; do
    case $full in *" $k "*) ;; *) GUEST_SCOPE[$k]=attach ;; esac
  done
else
  KERNELS=$(kernels_to_boot "$KERNELS" "$KERNEL_SERIES_DEFAULT")
  # GPUQ_KTEST_SCOPE=attach: the attach and verifier checks only, quickly,
  # e.g. for a new series (a developer's knob).
  if [ "${GPUQ_KTEST_SCOPE:-}" = attach ]; then
    for k in $KERNELS; do GUEST_SCOPE[$k]=attach; done
  fi
fi

# The hooks the guest checks: the probe names of guest-init.sh's PROBES and
# SCHED_PROBES ("probe:function" pairs), read from it so the lists cannot drift.
guest_probes() {
  awk '/^(PROBES|SCHED_PROBES)="/ { on = 1 }
    on { print; q += gsub(/"/, "\""); if (q % 2 == 0) { on = 0; q = 0 } }' "$HERE/guest-init.sh" |
    grep -oE '[a-z][a-z0-9_]*:[a-z][a-z0-9_]*' | cut -d: -f1
}
# guest_has CHECK: the guest script reports CHECK (checks added with hooks).
guest_has() { grep -q "pass $1 " "$HERE/guest-init.sh"; }

# The checks each guest reports (tests/kernel/guest-init.sh); one missing is
# a failure. expected_checks attach: those of a GPUQ_SCOPE=attach guest (no
# record, no daemon).
expected_checks() {
  local scope=${1:-}
  echo modprobe-amdgpu agent-version
  guest_has hook-presence && echo hook-presence
  local m c probes
  probes=$(guest_probes)
  for m in fentry kprobe args nobtf btf; do
    for c in $probes exit-code; do
      echo "check-$m:$c"
    done
  done
  echo check:preemption kprobes-off
  for c in tp_ioctl tp_exit exit-code; do echo "check-tp:$c"; done
  for c in fentry kprobe args-kprobe tracepoint doorbell doorbell-preemption; do echo "check-verify:$c"; done
  echo nobtf-reload
  echo kernel-clean
  [ "$scope" = attach ] && return 0
  for c in serves kfdtest attached:tp_ioctl attached:tp_exit create-failure \
    process-exit no-queues no-drops attribution stops; do
    echo "daemon-tp:$c"
  done
  echo core-flavor
  guest_has core-sched && echo core-sched
  echo record:runs record:create-failed record:process-exit record:no-queue-records
  for m in fentry kprobe args nobtf btf; do
    for c in serves kfdtest $(for p in $probes; do echo "attached:$p"; done) create-failure \
      process-exit no-queues no-drops attribution stops; do
      echo "daemon-$m:$c"
    done
  done
}
N_CHECKS=$(expected_checks | wc -w)

require_agent

# ---- host packages ----------------------------------------------------------
# busybox: any /bin/busybox will do (its libraries are copied if it is the
# dynamic one); else busybox-static, which must not replace a `busybox`.
PKGS=(qemu-system-x86 cpio kmod xz-utils zstd gcc libc6-dev linux-libc-dev binutils bpftool)
[ -x /bin/busybox ] || PKGS+=(busybox-static)
need_packages "${PKGS[@]}"
need_tools qemu-system-x86_64 cpio gzip depmod gcc dpkg-deb apt-get apt-cache timeout ldd bpftool objcopy
[ -x /bin/busybox ] || skip_all "/bin/busybox is not available (package busybox-static)"
[ -f /usr/include/linux/kfd_ioctl.h ] || skip_all "linux/kfd_ioctl.h is missing (package linux-libc-dev)"

# Kernels are resolved, downloaded and cached by prepare() (qemu_lib.sh).

# ---- the guest payload (same for every kernel) --------------------------------
build_payload() {
  local r=$WORK/rootfs
  rm -rf "$r" "$WORK/shim"
  mkdir -p "$r"/{bin,sbin,dev,proc,sys,tmp,etc,usr/bin,usr/sbin} "$WORK/shim/drm"
  # Debian's linux-libc-dev has no drm/ headers; kfd_ioctl.h only needs these.
  printf '#include <linux/types.h>\n#include <linux/ioctl.h>\n' > "$WORK/shim/drm/drm.h"
  if ! gcc -O2 -Wall -static -I "$WORK/shim" -o "$r/bin/kfdtest" "$HERE/kfdtest.c" > "$WORK/kfdtest-build.log" 2>&1; then
    fail "build kfdtest (gcc -static)" "$(cat "$WORK/kfdtest-build.log")"
    return 1
  fi
  copy_with_libs /bin/busybox /bin/busybox "$r"
  copy_with_libs "$AGENT" /bin/gpuq-agent "$r"
  copy_with_libs "$(command -v bpftool)" /bin/bpftool "$r"
  # Debug info is most of the binary's size and useless in the guest.
  command -v strip > /dev/null && strip --strip-debug "$r/bin/gpuq-agent"
  cp "$HERE/guest-init.sh" "$r/init"
  chmod +x "$r/init"
  (cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/payload.cpio.gz"
  note "guest payload: $(du -sm "$r" | cut -f1) MB unpacked, $(($(stat -c %s "$WORK/payload.cpio.gz") / 1048576)) MB gz (busybox, gpuq-agent and bpftool + $(find "$r" -name '*.so*' | wc -l) libraries, kfdtest)"
}

# ---- start one kernel's guest (judged once every guest is done) -------------
run_kernel() {
  local label=$1 kdir=$2 initrd=$WORK/initrd-$1.gz ko
  # amdgpu.ko without its .BTF section (an amdgpu-dkms build has none), at
  # /nobtf/amdgpu.ko for the guest's BTF-free phase.
  rm -rf "$WORK/nobtf"
  mkdir -p "$WORK/nobtf/x" "$WORK/nobtf/root/nobtf"
  (cd "$WORK/nobtf/x" && zcat "$kdir/modules.cpio.gz" | cpio -idm --quiet '*amdgpu.ko')
  ko=$(find "$WORK/nobtf/x" -name amdgpu.ko | head -n 1)
  if [ -n "$ko" ]; then
    objcopy --remove-section=.BTF "$ko" "$WORK/nobtf/root/nobtf/amdgpu.ko"
    # The removed section on its own (split BTF over vmlinux): what a user
    # of amdgpu-dkms makes with pahole from a debug build, for --btf.
    objcopy --dump-section .BTF="$WORK/nobtf/root/nobtf/amdgpu.btf" "$ko" /dev/null
  fi
  (cd "$WORK/nobtf/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/nobtf.cpio.gz"
  rm -rf "$WORK/nobtf"
  cat "$WORK/payload.cpio.gz" "$kdir/modules.cpio.gz" "$WORK/nobtf.cpio.gz" > "$initrd"
  rm -f "$WORK/nobtf.cpio.gz"
  qemu_start "$label" "$kdir" "$initrd" "$WORK/boot-$label.log"
}

# ---- main ---------------------------------------------------------------------
note "kernel tier: agent $AGENT, cache $CACHE, logs $WORK"
READY=() # "label dir" of every kernel that could be had
for k in $KERNELS; do
  if prepare "$k"; then
    READY+=("$k $KDIR")
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
# run_guests: start_guest "label kdir" boots one, judge_guest LABEL judges it
# (and adds its rows to the compatibility table, compat.sh).
start_guest() {
  KDIR_OF[${1%% *}]=${1#* }
  run_kernel "${1%% *}" "${1#* }"
}
judge_guest() {
  judge_markers "$1" "$WORK/boot-$1.log"
  "$HERE/compat.sh" rows qemu "$1" "$(cat "${KDIR_OF[$1]}/package")" "$WORK/boot-$1.log" >> "$WORK/compat.tsv"
}
# longest_first ENTRY...: the guests in the order they are started, the
# longest first, so that no long guest runs alone on the two cores at the
# end: the full guests, then the attach ones, newest series first within
# each (under TCG a newer kernel's guest took longer: 7.3 623 s, 6.1 291 s
# in full; 7.2 296 s, 6.17 241 s attach-only, 2026-11-28).
longest_first() {
  local e full=() attach=()
  for e in "$@"; do
    if [ "${GUEST_SCOPE[${e%% *}]:-}" = attach ]; then
      attach=("$e" "${attach[@]}")
    else
      full=("$e" "${full[@]}")
    fi
  done
  GUESTS=("${full[@]}" "${attach[@]}")
}
if build_payload; then
  prepare_unlock
  t_k=$(now)
  longest_first "${READY[@]}"
  run_guests start_guest judge_guest "${GUESTS[@]}"
  note "kernels ${KERNELS}: boots and checks, $KTEST_JOBS at a time, took $(since "$t_k") s"
fi
if [ -s "$WORK/compat.tsv" ]; then
  note "compatibility, as this run found it ($WORK/compat.tsv; scripts/compat-table.sh puts it in the README):"
  "$HERE/compat.sh" table "$WORK/compat.tsv" | sed 's/^/#   /'
fi
rm -rf "$WORK/rootfs" "$WORK/payload.cpio.gz" "$WORK/shim"
note "kernel tier took $(($(date +%s) - T_START)) s in all; logs in $WORK"
summary

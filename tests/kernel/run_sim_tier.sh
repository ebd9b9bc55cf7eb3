#!/usr/bin/env bash
# Kernel tests, simulator: the real gpuq-agent against the KFD simulator
# (tests/kernel/sim: a module named amdgpu with amdkfd's functions and
# structs), built here against Debian's own linux-headers for 6.1 and 6.12
# and booted with that kernel under QEMU (TCG). Every metric family the agent
# exports is compared with the simulator's ground truth. See
# tests/kernel/sim/README.md.
#
#   run_sim_tier.sh AGENT SRC [CACHE]
#     AGENT  the gpuq-agent binary to test (its ldd closure goes into the guest)
#     SRC    the repository
#     CACHE  kernels and headers, downloaded and unpacked once
#            (default ${XDG_CACHE_HOME:-/var/cache}/gpuq-kernels, shared with
#            run_qemu_tier.sh)
#
# Environment: GPUQ_KTEST_KERNELS ("6.1 6.12"), GPUQ_KTEST_BOOT_TIMEOUT
# (seconds per boot, 900), GPUQ_KTEST_WORKDIR (logs; default a new
# /tmp/gpuq-simtest.XXXXXX, kept and printed), GPUQ_KTEST_HIP_CLIENT (the
# hip_client hipcc built; default AGENT's build tree's
# tests/nullgpu/hip_client).
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
KERNELS=${GPUQ_KTEST_KERNELS:-"6.1 6.12"}
BOOT_TIMEOUT=${GPUQ_KTEST_BOOT_TIMEOUT:-900}
WORK=${GPUQ_KTEST_WORKDIR:-$(mktemp -d /tmp/gpuq-simtest.XXXXXX)}
mkdir -p "$WORK" "$CACHE"
T_START=$(date +%s)
. "$HERE/qemu_lib.sh"

# The checks each guest reports (sim/guest-init.sh); one missing is a failure.
# rocr:*, hip:*: Debian's real ROCr (and HIP over it) on the null GPU
# forwarding to the simulator (sim/guest-init.sh says why hip has no
# destroys check).
ROCR_CHECKS="start queues creates submissions pending drained doorbells destroys teardown stops"
HIP_CHECKS="start queues creates submissions pending drained doorbells teardown stops"
expected_checks() {
  echo insmod btf-flavor agent-version
  local m c extra
  for m in fentry kprobe args tracepoint; do
    case $m in
      fentry | kprobe) extra="restart-seeded after-restart runlist runlist-durations" ;;
      # the BTF-free tiers restart fresh (docs/probe-tiers.md "What differs")
      args) extra="restart-seeded after-restart fresh-start runlist runlist-durations" ;;
      tracepoint) extra="restart-seeded after-restart fresh-start runlist runlist-lifecycle" ;;
    esac
    for c in serves attached sysfs-inventory queues processes creates destroys exits \
      create-failures once $extra burst evictions submissions final stops; do
      echo "$m:$c"
    done
  done
  for m in rocr rocr-args rocr-tp; do for c in $ROCR_CHECKS; do echo "$m:$c"; done; done
  for m in hip hip-args; do for c in $HIP_CHECKS; do echo "$m:$c"; done; done
  echo programs:reload programs:run
  for m in btf-fentry btf-kprobe args-kprobe tracepoint; do
    for c in start live doorbells teardown stops; do echo "programs-$m:$c"; done
  done
  echo record-command record-container record-sigint short-lived-named nobtf-reload kprobes-off
  echo drivers kernel-clean
}
N_CHECKS=$(expected_checks | wc -w)

require_agent

# ---- host packages ----------------------------------------------------------
# make + dwarves (pahole): kbuild and the module's BTF.
PKGS=(qemu-system-x86 cpio kmod xz-utils zstd gcc make libc6-dev linux-libc-dev binutils dwarves)
[ -x /bin/busybox ] || PKGS+=(busybox-static)
need_packages "${PKGS[@]}"
need_tools qemu-system-x86_64 cpio gzip depmod gcc make pahole objcopy readelf dpkg-deb \
  apt-get apt-cache timeout ldd xz
[ -x /bin/busybox ] || skip_all "/bin/busybox is not available (package busybox-static)"
[ -f /usr/include/linux/kfd_ioctl.h ] || skip_all "linux/kfd_ioctl.h is missing (package linux-libc-dev)"

# ---- headers: the exact build of each cached kernel ----------------------------
# Cached as $CACHE/headers-<kver>_<version>/root (linux-headers-<kver>, its
# -common and linux-kbuild), with a BTF-only vmlinux where the package has
# none (6.1): without it kbuild skips the module's BTF.
HCACHE_FORMAT=1

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

# prepare_headers LABEL KDIR: HDIR = the headers tree for KDIR's kernel.
prepare_headers() {
  local label=$1 kdir=$2 kv ver dir tmp deps p h t0
  kv=$(cat "$kdir/kver")
  ver=$(awk '{ print $2 }' "$kdir/package")
  dir=$CACHE/headers-${kv}_$ver
  HDIR=$dir/root/usr/src/linux-headers-$kv
  if [ "$(cat "$dir/.complete" 2> /dev/null)" = "$HCACHE_FORMAT" ]; then
    note "kernel $label: headers for $kv cached in $dir"
    return 0
  fi
  t0=$(now)
  tmp=$CACHE/.tmp-headers-$kv.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  deps=$(apt-cache "${KAPTO[@]}" depends "linux-headers-$kv=$ver" 2> /dev/null |
    awk '/Depends: linux-(headers|kbuild)-/ { print $2 }' | sort -u)
  if ! (cd "$tmp" && "${APT[@]}" "${KAPTO[@]}" download "linux-headers-$kv=$ver" \
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

# build_module LABEL KDIR: MODCPIO = the simulator built for it, as a cpio.
build_module() {
  local label=$1 kdir=$2 kv b flavor extra=() t0
  kv=$(cat "$kdir/kver")
  b=$WORK/mod-$label
  rm -rf "$b"
  mkdir -p "$b/root/lib/kfd-sim"
  cp "$SIMSRC"/Kbuild "$SIMSRC"/*.c "$SIMSRC"/*.h "$b/"
  rm -f "$b/kfd_sim_driver.c"
  # 6.1's linux-kbuild has no resolve_btfids; the module has no BTF_ID sets.
  [ -x "$HDIR/tools/bpf/resolve_btfids/resolve_btfids" ] || extra+=(RESOLVE_BTFIDS=true)
  # queue->device became a struct kfd_node in v6.5
  case $kv in
    [0-5].* | 6.[0-4].* | 6.[0-4]-*) flavor=kfd_dev ;;
    *) flavor=kfd_node ;;
  esac
  t0=$(now)
  if ! make -C "$HDIR" M="$b" "${extra[@]}" SIM_FLAVOR=$flavor modules > "$b/build.log" 2>&1; then
    KERR="module build failed: $(grep -E 'error|Error' "$b/build.log" | head -n 3 | tr '\n' ' ') (log $b/build.log)"
    return 1
  fi
  if ! readelf -S "$b/amdgpu.ko" | grep -q ' \.BTF '; then
    KERR="the module has no .BTF section (pahole? vmlinux?): $(grep -i btf "$b/build.log" | head -n 2 | tr '\n' ' ')"
    return 1
  fi
  note "kernel $label: simulator built ($flavor shape) in $(since "$t0") s, $(($(stat -c %s "$b/amdgpu.ko") / 1024)) KiB"
  cp "$b/amdgpu.ko" "$b/root/lib/kfd-sim/"
  strip --strip-debug "$b/root/lib/kfd-sim/amdgpu.ko" # keeps .BTF
  # What amdgpu-dkms hosts load: the same module with no .BTF, so
  # /sys/kernel/btf/amdgpu is absent and the BTF-free tiers are planned.
  mkdir -p "$b/root/lib/kfd-sim/nobtf"
  objcopy --remove-section=.BTF "$b/root/lib/kfd-sim/amdgpu.ko" "$b/root/lib/kfd-sim/nobtf/amdgpu.ko"
  echo $flavor > "$b/root/lib/kfd-sim/flavor"
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
  build_rocr "$r"
  build_hip "$r"
  copy_with_libs /bin/busybox /bin/busybox "$r"
  copy_with_libs "$AGENT" /bin/gpuq-agent "$r"
  command -v strip > /dev/null && strip --strip-debug "$r/bin/gpuq-agent"
  cp "$SIMSRC/guest-init.sh" "$r/init"
  chmod +x "$r/init"
  cp "$SIMSRC/compare.awk" "$r/lib/kfd-sim/"
  (cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/payload.cpio.gz"
  note "guest payload: $(du -sm "$r" | cut -f1) MB unpacked, $(($(stat -c %s "$WORK/payload.cpio.gz") / 1048576)) MB gz"
}

# ---- main ---------------------------------------------------------------------
note "simulator tier: agent $AGENT, cache $CACHE, logs $WORK"
READY=()
for k in $KERNELS; do
  t_k=$(now)
  if prepare "$k" && prepare_headers "$k" "$KDIR" && build_module "$k" "$KDIR"; then
    READY+=("$k $KDIR $MODCPIO")
    note "kernel $k: ready in $(since "$t_k") s"
  else
    skip_kernel "$k" "$KERR"
  fi
done
if [ ${#READY[@]} = 0 ]; then
  echo "GPUQ-KTIER SKIPPED: no kernel could be had"
  summary
  exit 0
fi
if build_payload; then
  t_k=$(now)
  # every kernel's guest at once (qemu_start says why), then each judged
  for entry in "${READY[@]}"; do
    read -r label kdir modcpio <<< "$entry"
    cat "$WORK/payload.cpio.gz" "$modcpio" > "$WORK/initrd-$label.gz"
    qemu_start "$label" "$kdir" "$WORK/initrd-$label.gz" "$WORK/boot-$label.log"
  done
  for entry in "${READY[@]}"; do
    read -r label _ <<< "$entry"
    qemu_finish "$label"
    judge_markers "$label" "$WORK/boot-$label.log"
  done
  note "kernels ${KERNELS}: boots and checks, side by side, took $(since "$t_k") s"
fi
rm -rf "$WORK/rootfs" "$WORK/payload.cpio.gz" "$WORK/shim"
note "simulator tier took $(($(date +%s) - T_START)) s in all; logs in $WORK"
summary

#!/usr/bin/env bash
# Extracts the BTF of Debian's 6.1, 6.12 and 7.3 kernels (vmlinux, from the
# bzImage's compressed payload) and of their amdgpu.ko (qemu_lib.sh
# real_btf), for the host tests: every argument position the args-kprobe
# tier reads (tests/bpf/args_positions_test.cc), and gpuq's programs through
# this host's verifier against 6.1's and 6.12's real amdkfd
# (host_bpf_test.cc). The kernels come from the QEMU tiers' cache
# (tests/kernel/qemu_lib.sh prepare: downloaded once, with apt).
#
#   debian_btf.sh SRC OUT CACHE KFD_BTF
# Writes OUT/<label>/{vmlinux.btf,amdgpu.btf} (raw BTF; amdgpu's is split
# over vmlinux's), and for 6.1 and 6.12 OUT/<label>/kfd.btf, the two as one
# standalone BTF (kfd_btf standalone: what libbpf's btf_custom_path takes);
# for 6.12 also the negative controls kfd-badtype.btf and kfd-badsched.btf,
# with queue_properties.type and qcm_process_device.evicted of another kind.
# Exits 77 (skip) with the reason when it cannot.
set -u
SRC=$1
OUT=$2
CACHE=${3:-${XDG_CACHE_HOME:-/var/cache}/gpuq-kernels}
KFD_BTF=${4:-}
KERNELS="6.1 6.12 7.3"
N_CHECKS=1
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
procs_init       # TMP, removed at exit
WORK=$TMP        # qemu_lib's logs
. "$SRC/tests/kernel/qemu_lib.sh"
skip_all() { # qemu_lib's helpers call this when a kernel cannot be had
  echo "skip: $1"
  exit 77
}
for tool in objcopy cpio xz zstd grep; do
  command -v $tool > /dev/null || skip_all "$tool is not installed"
done
mkdir -p "$CACHE" "$OUT"
for label in $KERNELS; do
  dest=$OUT/$label
  [ -s "$dest/vmlinux.btf" ] && [ -s "$dest/amdgpu.btf" ] && continue
  rm -f "$dest/vmlinux.btf" "$dest/amdgpu.btf"
  [ "$(id -u)" = 0 ] || skip_all "needs root to download Debian's $label kernel into $CACHE"
  prepare "$label" || skip_all "kernel $label: $KERR"
  real_btf "$KDIR" || skip_all "kernel $label: no .BTF in its vmlinux or amdgpu.ko"
  mkdir -p "$dest"
  cp "$KDIR/vmlinux.btf" "$KDIR/amdgpu.btf" "$dest/"
  echo "kernel $label: $(stat -c %s "$dest/vmlinux.btf") bytes of vmlinux BTF, $(stat -c %s "$dest/amdgpu.btf") of amdgpu"
done
# standalone LABEL NAME [STRUCT.FIELD]: OUT/LABEL/NAME.btf, made again each
# run (a fraction of a second) so it follows kfd_btf.
standalone() {
  local d=$OUT/$1
  rm -f "$d/$2.btf"
  "$KFD_BTF" standalone "$d/vmlinux.btf" "$d/amdgpu.btf" "$d/$2.btf" ${3:+"$3"} ||
    { echo "FAIL - kfd_btf standalone $1 $2"; exit 1; }
}
if [ -n "$KFD_BTF" ]; then
  standalone 6.1 kfd
  standalone 6.12 kfd
  standalone 6.12 kfd-badtype queue_properties.type
  standalone 6.12 kfd-badsched qcm_process_device.evicted
  echo "6.1 and 6.12: vmlinux and amdgpu as one standalone BTF, and 6.12's two negative controls"
fi
echo "1 passed, 0 failed"

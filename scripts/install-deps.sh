#!/usr/bin/env bash
# Installs the Debian 12 packages gpuq-agent needs. `--test` adds what the
# test tiers use. Idempotent; needs root (apt-get).
set -euo pipefail
BUILD=(build-essential cmake ninja-build pkg-config git clang clang-format llvm bpftool libbpf-dev
  libelf-dev zlib1g-dev libzstd-dev prometheus-cpp-dev libcli11-dev libfmt-dev
  nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libncurses-dev libcrypt-dev
  libyaml-dev libcap-dev help2man)
TEST=(googletest libgtest-dev prometheus prometheus-node-exporter curl podman runc
  debootstrap mmdebstrap docker-compose aardvark-dns python3-yaml systemd
  python3 util-linux bpftrace openssl nodejs npm lintian catatonit
  qemu-system-x86 cpio kmod xz-utils zstd dwarves tmux universal-ctags
  chromium python3-pil libclang-rt-14-dev
  libhsa-runtime64-1 libhsa-runtime-dev libhsakmt-dev libamdhip64-5 libamdhip64-dev
  hipcc rocminfo)
want=("${BUILD[@]}")
[ "${1:-}" = "--test" ] && want+=("${TEST[@]}")

# provided NAME: an installed package provides NAME (e.g. npm, which
# NodeSource's nodejs package carries and conflicts with).
provided() {
  dpkg-query -W -f='${Status} ${Provides}\n' 2> /dev/null |
    grep -E "^install ok installed (.*, )?$1( \(|,|$)" > /dev/null # all input: pipefail
}
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || provided "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing ${missing[*]}; run as root to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null

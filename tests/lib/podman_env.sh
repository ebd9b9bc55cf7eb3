#!/usr/bin/env bash
# Podman on a CI-class host (test-environments.md, section 3): podman, runc
# and debootstrap from Debian, the containers.conf this host needs (no
# CAP_SYS_RESOURCE: lower rlimits; crun refuses hybrid cgroups: runc), given
# through CONTAINERS_CONF so /etc is untouched, and a local base image
# localhost/debian:bookworm-slim made by debootstrap (no image registry is
# reachable). Callers that run podman themselves export the same
# CONTAINERS_CONF (tests/lib/containers.conf). `podman_env.sh setup` is idempotent and
# exits 0 when podman can run containers here, non-zero with one line naming
# what is missing otherwise.
set -u
IMAGE=localhost/debian:bookworm-slim
export CONTAINERS_CONF=${CONTAINERS_CONF:-$(cd "$(dirname "$0")" && pwd)/containers.conf}

setup() {
  if [ "$(id -u)" != 0 ]; then echo "podman setup needs root"; return 1; fi
  local missing=()
  for p in podman runc debootstrap; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null 2>&1 ||
      { echo "cannot install ${missing[*]} with apt-get"; return 1; }
  fi
  if ! podman image exists "$IMAGE" 2> /dev/null; then
    local mirror rootfs
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
    mirror=${mirror:-http://deb.debian.org/debian}
    rootfs=$(mktemp -d)
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > /dev/null 2>&1 ||
      { rm -rf "$rootfs"; echo "debootstrap of bookworm from $mirror failed"; return 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . | podman import - "$IMAGE" > /dev/null 2>&1 ||
      { rm -rf "$rootfs"; echo "podman import of the base image failed"; return 1; }
    rm -rf "$rootfs"
  fi
  podman run --rm "$IMAGE" true > /dev/null 2>&1 || { echo "podman cannot run a container here"; return 1; }
  echo "podman ready: $(podman --version), image $IMAGE"
}

case "${1:-}" in
  setup) setup || exit 77 ;;  # 77: ctest SKIP_RETURN_CODE, the line says why
  *) echo "usage: $0 setup" >&2; exit 2 ;;
esac

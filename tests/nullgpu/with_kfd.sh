#!/usr/bin/env bash
# with_kfd.sh CMD ARGS...: CMD in a private mount namespace whose /dev is a
# fresh tmpfs holding null, zero, full, random, urandom, shm and kfd (= the
# host's /dev/null). For rocminfo, which refuses to start unless /dev/kfd
# opens read-write; the host's /dev is not changed. Needs root.
set -e
exec unshare --mount --propagation private bash -c '
  set -e
  old=$(mktemp -d)
  mount --bind /dev "$old"
  mount -t tmpfs -o mode=755 nullgpu-dev /dev
  for n in null zero full random urandom; do
    touch /dev/$n && mount --bind "$old/$n" /dev/$n
  done
  mkdir /dev/shm && mount -t tmpfs -o mode=1777 shm /dev/shm
  touch /dev/kfd && mount --bind "$old/null" /dev/kfd
  umount "$old" && rmdir "$old"
  exec "$@"' with_kfd "$@"

#!/usr/bin/env bash
# The release artifacts, from the build scripts/build.sh made (no second
# compile), each from the install rules of cmake/Install.cmake:
#   build/package/gpuq-agent_<version>_amd64.deb          Debian 12 (cpack, dpkg-shlibdeps)
#   build/package/gpuq-agent-<version>-linux-x86_64.tar.gz any x86-64 Linux with
#       glibc 2.34 and GCC 11's libstdc++ or later (RHEL 9, Ubuntu 22.04+):
#       the agent linked statically where Debian ships the archive, the
#       other libraries carried in lib/gpuq-agent (cmake/Portable.cmake)
#   --image: localhost/gpuq-agent:<version>, deploy/Containerfile over the .deb
# Prints one line per artifact with its size.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${GPUQ_BUILD_DIR:-build}
BUILD=$(cd "$BUILD" && pwd)
image=no
for arg in "$@"; do
  case "$arg" in
    --image) image=yes ;;
    *) echo "package.sh: unknown argument $arg (usage: package.sh [--image])" >&2; exit 2 ;;
  esac
done
VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
[ -n "$VERSION" ] || { echo "package.sh: no project version in $BUILD/CMakeCache.txt: run scripts/build.sh first" >&2; exit 1; }
OUT=$BUILD/package
mkdir -p "$OUT"
size() { du -h "$1" | cut -f1; }

# --- the Debian package ---------------------------------------------------------
(cd "$BUILD" && cmake --build . --target gpuq-agent gpuq-agent-portable gpuq-man \
  gpuq-example-captures gpuq-debian-changelog > /dev/null && cpack > "$OUT/cpack.log" 2>&1) ||
  { tail -20 "$OUT/cpack.log" >&2; exit 1; }
DEB=$OUT/gpuq-agent_${VERSION}_amd64.deb
echo "package: $DEB ($(size "$DEB"))"

# --- the portable tarball ---------------------------------------------------------
NAME=gpuq-agent-$VERSION-linux-x86_64
STAGE=$OUT/tarball
rm -rf "$STAGE"
# The prefix the unit names: where the README says to unpack it.
DESTDIR=$STAGE/root cmake --install "$BUILD" --prefix /opt/gpuq-agent --strip > /dev/null
mv "$STAGE/root/opt/gpuq-agent" "$STAGE/$NAME"
rm -rf "$STAGE/root"
T=$STAGE/$NAME
install -m 0755 "$BUILD/portable/bin/gpuq-agent" "$T/bin/gpuq-agent"
strip --strip-debug "$T/bin/gpuq-agent"
# glibc's own libraries and GCC's runtime come from the host (cmake/Portable.cmake).
system_lib() {
  case "$1" in
    linux-vdso.so.* | ld-linux-x86-64.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | \
      librt.so.* | libresolv.so.* | libutil.so.* | libstdc++.so.* | libgcc_s.so.*) return 0 ;;
  esac
  return 1
}
mkdir -p "$T/share/doc/gpuq-agent/third-party"
while read -r soname path; do
  system_lib "$soname" && continue
  [ -f "$path" ] || { echo "package.sh: $soname not found ($path)" >&2; exit 1; }
  install -m 0644 "$path" "$T/lib/gpuq-agent/$soname"
  # The licence of each carried library, as its Debian package states it.
  # By file name: dpkg knows a file under /lib or /usr/lib, not both (merged /usr).
  pkg=$(dpkg -S "*/$(basename "$(realpath "$path")")" 2> /dev/null | head -1 | cut -d: -f1)
  [ -n "$pkg" ] || { echo "package.sh: no Debian package owns $path" >&2; exit 1; }
  cp "/usr/share/doc/$pkg/copyright" "$T/share/doc/gpuq-agent/third-party/$pkg.copyright"
done < <(ldd "$T/bin/gpuq-agent" "$T"/lib/gpuq-agent/libgpuq-civetweb-*.so |
  awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u)
tar -C "$STAGE" --owner=0 --group=0 --numeric-owner -czf "$OUT/$NAME.tar.gz" "$NAME"
echo "tarball: $OUT/$NAME.tar.gz ($(size "$OUT/$NAME.tar.gz"); $(ls "$T/lib/gpuq-agent" | wc -l) libraries carried)"

# --- the image --------------------------------------------------------------------
if [ "$image" = yes ]; then
  REVISION=$(git -C "$SRC" rev-parse HEAD 2> /dev/null || echo unknown)
  SOURCE=$(git -C "$SRC" config --get remote.origin.url 2> /dev/null || echo unpublished)
  CTX=$OUT/image
  rm -rf "$CTX" && mkdir -p "$CTX" && cp "$DEB" "$CTX/"
  podman build --pull=never -f "$SRC/deploy/Containerfile" --build-arg VERSION="$VERSION" \
    --build-arg REVISION="$REVISION" --build-arg SOURCE="$SOURCE" \
    -t "localhost/gpuq-agent:$VERSION" "$CTX" > "$OUT/image.log" 2>&1 ||
    { tail -20 "$OUT/image.log" >&2; exit 1; }
  # The image this tag named before is now untagged: remove it (ours only).
  podman image prune -f --filter label=org.opencontainers.image.title=gpuq-agent > /dev/null 2>&1 || true
  echo "image: localhost/gpuq-agent:$VERSION ($(podman image inspect --format '{{.Size}}' "localhost/gpuq-agent:$VERSION" |
    awk '{ printf "%d MB", $1 / 1e6 }'))"
fi

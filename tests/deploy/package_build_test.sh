#!/usr/bin/env bash
# Makes what a user installs, from this build, as scripts/package.sh does
# for a release: the Debian package, the portable tarball and (with podman)
# the image localhost/gpuq-agent:<version>. The fixture of the tests that
# install and run them (package_test.sh, container_test.sh, kube play).
# Usage: package_build_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
BUILD=$(dirname "$(realpath "$AGENT")")
export CONTAINERS_CONF=$SRC/tests/lib/containers.conf
args=()
missing=$(missing_of podman runc)
[ "$(id -u)" = 0 ] || missing="$missing root"
if [ -n "$missing" ]; then
  skip "image: missing $missing (Debian: podman runc)"
elif ! setup=$("$SRC/tests/lib/podman_env.sh" setup 2>&1); then
  skip "image: $setup"
else
  args+=(--image)
fi
start=$(date +%s.%N)
run_long() { OUT=$(GPUQ_BUILD_DIR=$BUILD timeout 1200 "$@" 2>&1); RC=$?; }
run_long "$SRC/scripts/package.sh" "${args[@]}"
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f s", e - s }')
if [ "$RC" = 0 ]; then
  pass "scripts/package.sh ${args[*]} ($took)"
  printf '%s\n' "$OUT" | sed 's/^/       /'
else
  fail "scripts/package.sh ${args[*]} (exit $RC)" "$OUT"
fi
summary

# shellcheck shell=bash
# Helpers shared by tests/deploy/*.sh (sourced after tests/lib/assert.sh).
# free_port, wait_http and the PIDS/TMP cleanup come from tests/lib/net.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/net.sh"

# Debian's python3 (python3-yaml lives there), not whatever PATH finds first.
PY=/usr/bin/python3

# checks_from: PASS/FAIL lines (deploy_checks.py's format: status, name,
# detail, tab-separated) on stdin, one pass/fail each.
checks_from() {
  local line status name detail
  while IFS= read -r line; do
    IFS=$'\t' read -r status name detail <<< "$line"
    case "$status" in
      PASS) pass "$name" ;;
      FAIL) fail "$name" "$detail" ;;
      *) fail "unexpected check output" "$line" ;;
    esac
  done
}

# py_checks NAME-PREFIX ARGS...: runs deploy_checks.py, one pass/fail per line.
py_checks() {
  checks_from < <("$PY" "$(dirname "${BASH_SOURCE[0]}")/deploy_checks.py" "$@" 2>&1)
}

# package_image AGENT: IMAGE, the image deploy_package_build made of this
# build's version (VERSION, from its CMake cache; BUILD: its directory);
# false, with a failed check saying so, when it is missing.
package_image() {
  BUILD=$(dirname "$(realpath "$1")")
  VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
  IMAGE=localhost/gpuq-agent:$VERSION
  podman image exists "$IMAGE" && return 0
  fail "$IMAGE missing: deploy_package_build (scripts/package.sh --image) makes it"
  return 1
}

# need CMD... : true when every command exists, else prints what is missing.
missing_of() {
  local m=()
  for c in "$@"; do command -v "$c" > /dev/null 2>&1 || m+=("$c"); done
  echo "${m[*]}"
}

have_pyyaml() { "$PY" -c 'import yaml' > /dev/null 2>&1; }

# Debian 12's kubectl (package kubernetes-client), unpacked, not installed:
# apt-get download + dpkg-deb -x into TOOLS/kubernetes-client, once, then
# reused (the machine's own kubectl, if any, is not used).
#   kubectl_unpacked TOOLS   sets KC (the unpacked tree), KUBECTL, and
#                            KUBECTL_WHY (why it cannot be had, one line);
#                            true when KUBECTL runs from KC
kubectl_unpacked() {
  KC=$1/kubernetes-client
  KUBECTL=$KC/usr/bin/kubectl
  KUBECTL_WHY=
  if [ ! -x "$KUBECTL" ] || [ ! -s "$KC/.deb-version" ]; then
    KUBECTL_WHY=$(_kubectl_fetch "$KC")
  fi
  if [ -x "$KUBECTL" ] && [ -s "$KC/.deb-version" ]; then
    return 0
  fi
  KUBECTL_WHY=${KUBECTL_WHY:-not unpacked}
  return 1
}
_kubectl_fetch() { # KC
  local kc=$1 d deb rc=0
  if ! command -v apt-get > /dev/null || ! command -v dpkg-deb > /dev/null; then
    echo "apt-get/dpkg-deb"
    return 1
  fi
  d=$(mktemp -d)
  if ! (cd "$d" && apt-get download kubernetes-client > /dev/null 2>&1); then
    # No package lists yet (a fresh container): fetch them, then retry.
    apt-get update -qq > /dev/null 2>&1
    (cd "$d" && apt-get download kubernetes-client > "$d/apt.log" 2>&1) || {
      echo "apt-get download kubernetes-client: $(tail -1 "$d/apt.log")"
      rm -rf "$d"
      return 1
    }
  fi
  deb=$(ls "$d"/kubernetes-client_*.deb)
  if ! { rm -rf "$kc.new" && mkdir -p "$kc.new" &&
    dpkg-deb -x "$deb" "$kc.new" &&
    dpkg-deb -f "$deb" Version > "$kc.new/.deb-version" &&
    rm -rf "$kc" && mv "$kc.new" "$kc"; }; then
    echo "dpkg-deb -x of $(basename "$deb") into $kc failed"
    rc=1
  fi
  rm -rf "$d"
  return $rc
}

# readme_output NAME: the code block after `<!-- output: NAME -->` in the
# README, the output a user is shown; the tests hold it to the real one.
readme_output() {
  awk -v mark="<!-- output: $1 -->" '
    $0 == mark { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }' "$SRC/README.md"
}
# readme_has LINE: the README shows exactly this command line.
readme_has() { grep -qxF -- "$1" "$SRC/README.md"; }

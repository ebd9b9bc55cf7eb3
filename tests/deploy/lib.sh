# shellcheck shell=bash
# Helpers shared by tests/deploy/*.sh (sourced after tests/lib/assert.sh).
# free_port, wait_http and the PIDS/TMP cleanup come from tests/lib/net.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/net.sh"

# Debian's python3 (python3-yaml lives there), not whatever PATH finds first.
PY=/usr/bin/python3

# py_checks NAME-PREFIX ARGS...: runs deploy_checks.py, one pass/fail per line.
py_checks() {
  local line status name detail
  while IFS= read -r line; do
    IFS=$'\t' read -r status name detail <<< "$line"
    case "$status" in
      PASS) pass "$name" ;;
      FAIL) fail "$name" "$detail" ;;
      *) fail "deploy_checks.py: unexpected output" "$line" ;;
    esac
  done < <("$PY" "$(dirname "${BASH_SOURCE[0]}")/deploy_checks.py" "$@" 2>&1)
}

# need CMD... : true when every command exists, else prints what is missing.
missing_of() {
  local m=()
  for c in "$@"; do command -v "$c" > /dev/null 2>&1 || m+=("$c"); done
  echo "${m[*]}"
}

have_pyyaml() { "$PY" -c 'import yaml' > /dev/null 2>&1; }

#!/usr/bin/env bash
# The main job: install, build, run. Live on a host with amdkfd (the daemon,
# /metrics on :9464); elsewhere one line says why, and the bundled capture's
# --once snapshot is printed instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh > /dev/null
AGENT=${GPUQ_BUILD_DIR:-build}/gpuq-agent
if reason=$("$AGENT" check 2>&1 > /dev/null); then
  exec "$AGENT" "$@"
fi
# The reason is check's last log line (logfmt): its msg, unquoted.
reason=$(tail -n 1 <<< "$reason")
reason=${reason#*msg=}
reason=${reason#\"}
reason=${reason%\"}
reason=${reason//\\\"/\"}
echo "gpuq-agent: no live KFD hooks here ($reason); showing the bundled synthetic capture examples/default.gpuqcap"
exec "$AGENT" --once --replay examples/default.gpuqcap "$@"

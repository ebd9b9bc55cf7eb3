#!/usr/bin/env bash
# What can be checked without running a cluster or Grafana: the dashboard
# JSON (what Grafana needs, only metrics the agent exports), its provisioning,
# the Kubernetes manifests (valid YAML, what a DaemonSet needs), the compose
# file, the shipped Prometheus configs (promtool check config), the systemd
# unit (systemd-analyze verify), the Containerfile's shape, and that
# dashboards/README.md documents every panel.
# Usage: static_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if ! have_pyyaml; then
  skip "dashboard, manifest and compose checks: missing Debian's python3-yaml (/usr/bin/python3 with yaml)"
else
  # The metric families the agent exports: a replay, plus live mode on the
  # fixture host (probe status and reconciliation exist only live).
  { "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus
    "$AGENT" --once --host-root "$SRC/tests/fixtures/root" --output prometheus; } 2> /dev/null |
    awk '/^# TYPE / { print $3 }' | sort -u > "$TMP/metrics"
  if [ "$(wc -l < "$TMP/metrics")" -ge 15 ]; then
    pass "agent exports $(wc -l < "$TMP/metrics") metric families (replay + fixture host)"
  else
    fail "could not list the agent's metric families" "$(cat "$TMP/metrics")"
  fi
  py_checks dashboard "$SRC/dashboards/gpuq.json" "$TMP/metrics"
  py_checks provisioning "$SRC/dashboards/provisioning"
  py_checks manifests "$SRC/deploy/kubernetes"
  py_checks compose "$SRC/deploy/docker-compose.yml"
  # Every panel is documented, with its query.
  missing=$("$PY" - "$SRC/dashboards/gpuq.json" "$SRC/dashboards/README.md" << 'PY'
import json, sys
d = json.load(open(sys.argv[1])); readme = open(sys.argv[2]).read()
for p in d["panels"]:
    if p["title"] not in readme:
        print("panel:", p["title"])
    for t in p.get("targets", []):
        if t["expr"] not in readme:
            print("query:", t["expr"])
PY
  )
  if [ -z "$missing" ]; then pass "dashboards/README.md lists every panel and its exact query"; else fail "dashboards/README.md is missing" "$missing"; fi
fi

if command -v promtool > /dev/null; then
  for f in deploy/prometheus/prometheus.yml deploy/prometheus/hosts.yml; do
    run promtool check config "$SRC/$f"
    expect_rc "promtool check config $f" 0
  done
  f=deploy/prometheus/kubernetes-scrape-config.yml
  run promtool check config "$SRC/$f"
  if [ "$RC" = 0 ]; then
    pass "promtool check config $f"
  elif grep -q 'field kubernetes_sd_configs not found' <<< "$OUT$ERR" && have_pyyaml; then
    # Debian builds Prometheus without the Kubernetes service discovery.
    skip "promtool check config $f as is: this promtool ($(promtool --version 2>&1 | awk 'NR==1 { print $3 }')) is built without kubernetes_sd_configs"
    py_checks swap-k8s-sd "$SRC/$f" "$TMP/k8s-static.yml"
    run promtool check config "$TMP/k8s-static.yml"
    expect_rc "promtool check config $f with its kubernetes_sd_configs made static (relabel_configs checked)" 0
  else
    fail "promtool check config $f (exit $RC)" "$OUT $ERR"
  fi
  for f in deploy/prometheus/prometheus.yml deploy/prometheus/hosts.yml deploy/prometheus/kubernetes-scrape-config.yml; do
    if grep -qE '^\s*honor_labels: true' "$SRC/$f"; then pass "$f: honor_labels: true"; else fail "$f lacks honor_labels: true"; fi
  done
else
  skip "promtool check config: missing promtool (Debian: prometheus)"
fi

if command -v systemd-analyze > /dev/null; then
  # The unit as installed, with ExecStart pointing at this build.
  mkdir -p "$TMP/unit"
  # (the package's unit is verified where it is installed: package_test.sh)
  sed "s|@GPUQ_UNIT_BINDIR@|$(dirname "$(realpath "$AGENT")")|" "$SRC/deploy/systemd/gpuq-agent.service.in" > "$TMP/unit/gpuq-agent.service"
  run systemd-analyze verify --man=no "$TMP/unit/gpuq-agent.service"
  expect_rc "systemd-analyze verify deploy/systemd/gpuq-agent.service.in (ExecStart: this build)" 0
  caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$SRC/deploy/systemd/gpuq-agent.service.in")
  [ "$caps" = "CAP_BPF CAP_PERFMON CAP_SYS_ADMIN CAP_SYS_PTRACE" ] && pass "systemd unit: capability bounding set $caps" ||
    fail "systemd unit capabilities: $caps"
else
  skip "systemd unit: missing systemd-analyze (Debian: systemd)"
fi

# The Containerfile: the image is the Debian package installed by apt (one
# recipe, no second compile), with an exec-form entrypoint.
D=$SRC/deploy/Containerfile
if grep -q '^ARG BASE=debian:bookworm-slim$' "$D" && [ "$(grep -c '^FROM ' "$D")" = 1 ] &&
  grep -q 'apt-get install -y --no-install-recommends /tmp/gpuq-agent_${VERSION}_amd64.deb' "$D" &&
  ! grep -qE 'cmake|gcc|clang' "$D"; then
  pass "Containerfile: one stage FROM debian:bookworm-slim that installs the package, no compiler"
else
  fail "Containerfile shape" "$(grep -E '^(ARG BASE|FROM|RUN)' "$D")"
fi
if grep -q '^ENTRYPOINT \["/usr/bin/gpuq-agent"' "$D"; then pass "Containerfile: exec-form entrypoint, the agent itself"; else fail "Containerfile entrypoint"; fi
# The version is one fact, CMake's project version: the images the compose
# file and the DaemonSet name carry it.
version=$(sed -n 's/^project(gpuq-agent VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
tag=$(sed -n 's|^    image: localhost/gpuq-agent:||p' "$SRC/deploy/docker-compose.yml")
if [ -n "$version" ] && [ "$tag" = "$version" ]; then
  pass "docker-compose.yml runs the agent image of the project's version ($version)"
else
  fail "docker-compose.yml's agent image tag '$tag' is not the project's version '$version'"
fi
summary

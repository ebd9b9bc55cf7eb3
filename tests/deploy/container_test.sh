#!/usr/bin/env bash
# The sidecar image and the compose file, with podman on this machine (no
# Docker engine, no registry but Debian's):
#   1. the base image: a debootstrap'd bookworm imported as
#      localhost/debian:bookworm-slim, which is what deploy/Containerfile's
#      `FROM debian:bookworm-slim` resolves to (built once, then reused);
#   2. the image deploy_package_build made from the Debian package with
#      deploy/Containerfile (scripts/package.sh --image): labels, content;
#   3. the image runs: the bundled capture served to the host (same series
#      as the host binary), the least-privilege command of deploy/README.md
#      on the fixture host tree, and the --privileged quick start;
#   4. deploy/docker-compose.yml through Debian's docker-compose against
#      `podman system service`: agent + Prometheus (a local image of
#      Debian's prometheus package stands in for prom/prometheus), and
#      Prometheus inside compose scrapes the agent through the shipped
#      prometheus.yml. Grafana and the ROCm workload cannot be pulled here.
# Usage: container_test.sh AGENT SRC   (AGENT: the host build, for comparison)
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
use_background_cleanup # TMP, and one EXIT trap (tests/lib/procs.sh)
NAME=gpuq-deploy-test-$$
PROM_IMAGE=localhost/gpuq-prometheus:deploy-test
BASE=localhost/debian:bookworm-slim
PROJECT=gpuqdeploytest$$
SVC_PID=
# At exit, after the start_bg processes (the podman service) are stopped:
# every container, volume and network of the compose project (compose
# labels them) and the containers this test named, through podman itself.
cleanup_containers() {
  local kind label="label=com.docker.compose.project=$PROJECT"
  podman ps -aq --filter "$label" 2> /dev/null | xargs -r podman rm -f > /dev/null 2>&1
  for kind in volume network; do
    podman "$kind" ls -q --filter "$label" 2> /dev/null | xargs -r podman "$kind" rm -f > /dev/null 2>&1
  done
  for c in "$NAME-replay" "$NAME-tls" "$NAME-leastpriv" "$NAME-privileged"; do
    podman rm -f "$c" > /dev/null 2>&1
  done
}
on_exit cleanup_containers
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f s", e - s }'; }

missing=$(missing_of podman runc curl)
[ "$(id -u)" = 0 ] || missing="$missing root (host PID namespace, capabilities)"
if [ -n "$missing" ]; then
  skip "sidecar image and compose tests: missing $missing (Debian: podman runc curl)"
  summary
  exit
fi
# podman as the other container tier sets it up (tests/lib/podman_env.sh:
# the rlimit + runc fix of test-environments.md section 3 through
# CONTAINERS_CONF, without touching /etc, and the debootstrap'd base image).
export CONTAINERS_CONF=$SRC/tests/lib/containers.conf

# --- 1. base image ------------------------------------------------------------
t=$(now)
if setup=$("$SRC/tests/lib/podman_env.sh" setup 2>&1); then
  pass "base image $BASE ready ($(since "$t")): $setup"
else
  skip "podman: $setup"
  summary
  exit
fi
if run podman run --rm "$BASE" cat /etc/os-release && [[ $OUT == *bookworm* ]]; then
  pass "podman runs the base image"
else
  fail "podman cannot run $BASE" "$ERR"
  summary
  exit
fi

# --- 2. the image deploy_package_build made from the package ---------------------
if ! package_image "$AGENT"; then
  summary
  exit
fi
run podman image inspect --format '{{json .Config.Entrypoint}} {{.Size}}' "$IMAGE"
if [[ $OUT == '["/usr/bin/gpuq-agent","--host-root","/host"]'* ]]; then
  pass "entrypoint is the agent itself, non-interactive (size $(awk '{ printf "%d MB", $2 / 1e6 }' <<< "$OUT"))"
else
  fail "unexpected entrypoint" "$OUT"
fi
label() { podman image inspect --format "{{index .Labels \"org.opencontainers.image.$1\"}}" "$IMAGE"; }
revision=$(git -C "$SRC" rev-parse HEAD 2> /dev/null || echo unknown)
if [ "$(label version)" = "$VERSION" ] && [ "$(label revision)" = "$revision" ] && [ -n "$(label source)" ]; then
  pass "OCI labels: version $VERSION (the project's), revision $revision, source $(label source)"
else
  fail "OCI labels" "version=$(label version) revision=$(label revision) source=$(label source)"
fi
run podman run --rm --entrypoint sh "$IMAGE" -c \
  'ldd /usr/bin/gpuq-agent | grep -c "not found"; command -v gcc cmake clang; dpkg-query -W -f "\${Version}" gpuq-agent; echo; test -f /usr/share/gpuq-agent/examples/default.gpuqcap && echo capture'
if [[ $OUT == 0*"$VERSION"*capture ]] && ! grep -qE 'gcc|cmake|clang' <<< "$OUT"; then
  pkgs() { podman run --rm --entrypoint dpkg-query "$1" -W -f '${Package}\n' 2> /dev/null | sort; }
  added=$(comm -13 <(pkgs "$BASE") <(pkgs "$IMAGE") | tr '\n' ' ')
  pass "image = the base + the package $VERSION by apt: every library resolves, no toolchain; adds $added"
else
  fail "runtime image content" "$OUT $ERR"
fi

# --- 3. run it ----------------------------------------------------------------------
wait_metrics() { # PORT -> 0 when /metrics answers within 10 s
  wait_http "http://127.0.0.1:$1/metrics" 100
}
port=$(free_port)
t=$(now)
podman run -d --name "$NAME-replay" -p "127.0.0.1:$port:9464" "$IMAGE" \
  --replay /usr/share/gpuq-agent/examples/default.gpuqcap > /dev/null 2> "$TMP/run.err"
if wait_metrics "$port"; then
  pass "containerised agent serves /metrics to the host on the bundled capture ($(since "$t"))"
else
  fail "containerised agent: no /metrics on 127.0.0.1:$port" "$(cat "$TMP/run.err"; podman logs "$NAME-replay" 2>&1)"
fi
for _ in $(seq 50); do
  curl -s "http://127.0.0.1:$port/metrics" | grep -q '^gpuq_events_total{type="queue_create"} 53$' && break
  sleep 0.1
done
gpuq_only() { grep '^gpuq_' | grep -v '^gpuq_build_info' | sort; }
curl -s "http://127.0.0.1:$port/metrics" | gpuq_only > "$TMP/container.txt"
"$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus 2> /dev/null | gpuq_only > "$TMP/host.txt"
if [ -s "$TMP/host.txt" ] && diff "$TMP/host.txt" "$TMP/container.txt" > "$TMP/diff.txt"; then
  pass "container /metrics == host --once on the capture ($(wc -l < "$TMP/host.txt") gpuq series, build_info aside)"
else
  fail "container and host differ on the capture" "$(head -10 "$TMP/diff.txt")"
fi
# The README's container path: its command, and the lines it shows.
shown=$(readme_output container)
real=$(curl -s "http://127.0.0.1:$port/metrics" | grep '^gpuq_queues{' | head -3)
if readme_has "podman run -d --name gpuq-demo -p 9464:9464 $IMAGE --replay /usr/share/gpuq-agent/examples/default.gpuqcap" &&
  [ -n "$shown" ] && [ "$shown" = "$real" ]; then
  pass "README's container path: the command for $IMAGE and its output are this run's"
else
  fail "README's container path differs from this run" "$(diff <(echo "$shown") <(echo "$real"))"
fi
podman rm -f "$NAME-replay" > /dev/null 2>&1

# TLS from the image: the civetweb shims ship in /usr/lib/gpuq-agent.
if command -v openssl > /dev/null; then
  mkdir -p "$TMP/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/tls/key.pem" -out "$TMP/tls/cert.pem" 2> /dev/null
  chmod 644 "$TMP/tls/key.pem"
  printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n' > "$TMP/tls/web.yml"
  port=$(free_port)
  podman run -d --name "$NAME-tls" -p "127.0.0.1:$port:9464" -v "$TMP/tls:/etc/gpuq:ro" "$IMAGE" \
    --replay /usr/share/gpuq-agent/examples/default.gpuqcap --web.config.file /etc/gpuq/web.yml > /dev/null 2> "$TMP/run.err"
  for _ in $(seq 100); do
    curl -s -o /dev/null --cacert "$TMP/tls/cert.pem" "https://127.0.0.1:$port/metrics" && break
    sleep 0.1
  done
  if curl -s --cacert "$TMP/tls/cert.pem" "https://127.0.0.1:$port/metrics" | grep -q '^gpuq_queues{'; then
    pass "containerised agent serves /metrics over HTTPS (web config mounted read-only)"
  else
    fail "containerised agent over HTTPS" "$(cat "$TMP/run.err"; podman logs "$NAME-tls" 2>&1)"
  fi
  podman rm -f "$NAME-tls" > /dev/null 2>&1
else
  skip "containerised agent over HTTPS: missing openssl (Debian: openssl)"
fi

# The least-privilege command of deploy/README.md, with the fixture host tree
# in place of /sys/class/kfd, /sys/fs/cgroup and /proc (no amdkfd here).
F=$SRC/tests/fixtures/root
port=$(free_port)
podman run -d --name "$NAME-leastpriv" --pid=host -p "127.0.0.1:$port:9464" \
  --cap-drop=ALL --cap-add=BPF --cap-add=PERFMON --cap-add=SYS_ADMIN --cap-add=SYS_PTRACE --read-only \
  -v /sys/kernel/btf:/host/sys/kernel/btf:ro \
  -v "$F/sys/fs/cgroup:/host/sys/fs/cgroup:ro" \
  -v "$F/sys/class/kfd:/host/sys/class/kfd:ro" \
  -v "$F/sys/class/kfd:/host/sys/devices/virtual/kfd:ro" \
  -v /sys/bus/event_source:/host/sys/bus/event_source:ro \
  -v "$F/proc:/host/proc:ro" \
  "$IMAGE" --reconcile-interval 1s > /dev/null 2> "$TMP/run.err"
if wait_metrics "$port"; then
  pass "least-privilege container (caps BPF, PERFMON, SYS_ADMIN, SYS_PTRACE; read-only; host PID) serves /metrics"
else
  fail "least-privilege container: no /metrics" "$(cat "$TMP/run.err"; podman logs "$NAME-leastpriv" 2>&1)"
fi
body=$(curl -s "http://127.0.0.1:$port/metrics")
if grep -q '^gpuq_queues{container="3f6a9e2b1c8d",.*gpu_id="45412",queue_type="sdma"} 1$' <<< "$body" &&
  grep -q '^gpuq_gpu_info{gpu_id="45412"' <<< "$body"; then
  pass "least-privilege container reads the KFD inventory and cgroups through its /host mounts"
else
  fail "least-privilege container: fixture queues not seen" "$(grep '^gpuq_queues' <<< "$body"; podman logs "$NAME-leastpriv" 2>&1)"
fi
# Host PID namespace: the agent's /proc entry, seen from the host.
run grep CapEff "/proc/$(podman inspect --format '{{.State.Pid}}' "$NAME-leastpriv")/status"
# CAP_SYS_PTRACE 19, CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39.
if [[ $OUT == *000000c000280000 ]]; then
  pass "agent runs with exactly CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYS_PTRACE ($OUT)"
else
  fail "unexpected capabilities" "$OUT"
fi
logs=$(podman logs "$NAME-leastpriv" 2>&1)
if grep -q 'serving the KFD sysfs inventory and self-metrics only' <<< "$logs"; then
  pass "without amdgpu the containerised agent degrades with one warning"
else
  fail "no degradation warning" "$logs"
fi
podman rm -f "$NAME-leastpriv" > /dev/null 2>&1

port=$(free_port)
podman run -d --name "$NAME-privileged" --privileged --pid=host -p "127.0.0.1:$port:9464" \
  -v /sys:/host/sys:ro -v /proc:/host/proc:ro "$IMAGE" > /dev/null 2> "$TMP/run.err"
if wait_metrics "$port" && curl -s "http://127.0.0.1:$port/metrics" | grep -q '^gpuq_probe_attached{probe="queue_create",mode="none",tier="none"} 0$'; then
  pass "--privileged quick start runs live on this host (no amdkfd: self-metrics, probes none)"
else
  fail "--privileged quick start" "$(cat "$TMP/run.err"; podman logs "$NAME-privileged" 2>&1)"
fi
podman rm -f "$NAME-privileged" > /dev/null 2>&1

# --- 4. compose -----------------------------------------------------------------------
missing=$(missing_of docker-compose)
if [ -n "$missing" ]; then
  skip "compose: missing docker-compose (Debian: docker-compose)"
  summary
  exit
fi
t=$(now)
if podman build --pull=never -f "$SRC/tests/deploy/prometheus.Containerfile" -t "$PROM_IMAGE" \
  "$TMP" > "$TMP/prom-build.log" 2>&1; then
  pass "local Prometheus image from Debian's prometheus package ($(since "$t"))"
else
  fail "local Prometheus image does not build" "$(tail -10 "$TMP/prom-build.log")"
  summary
  exit
fi
start_bg podman system service --time=0 "unix://$TMP/podman.sock" > "$TMP/service.log" 2>&1
SVC_PID=$BG_PID
export DOCKER_HOST=unix://$TMP/podman.sock
for _ in $(seq 50); do curl -sf --unix-socket "$TMP/podman.sock" http://d/_ping > /dev/null && break; sleep 0.1; done
export GPUQ_TEST_IMAGE=$IMAGE GPUQ_TEST_PROMETHEUS_IMAGE=$PROM_IMAGE GPUQ_FIXTURE_ROOT=$F
export GPUQ_TEST_SOCKET=$TMP/podman.sock
GPUQ_PORT=$(free_port) PROMETHEUS_PORT=$(free_port) GRAFANA_PORT=$(free_port)
export GPUQ_PORT PROMETHEUS_PORT GRAFANA_PORT
DC=(env -C "$SRC/deploy" docker-compose -p "$PROJECT")
BOTH=(-f docker-compose.yml -f "$SRC/tests/deploy/compose.test.yml")
run "${DC[@]}" -f docker-compose.yml config -q
expect_rc "docker-compose config: deploy/docker-compose.yml is valid for docker-compose $(docker-compose version --short 2> /dev/null)" 0
run "${DC[@]}" -f docker-compose.yml config --services
if [ "$(sort <<< "$OUT" | tr '\n' ' ')" = "agent grafana prometheus workload " ]; then
  pass "compose services: agent, grafana, prometheus, workload"
else
  fail "compose services" "$OUT"
fi
t=$(now)
run "${DC[@]}" "${BOTH[@]}" up -d --no-build agent prometheus
expect_rc "docker-compose up agent prometheus (podman system service)" 0
if wait_http "http://127.0.0.1:$GPUQ_PORT/metrics" 100; then
  pass "compose agent serves /metrics on the host port ($(since "$t"))"
else
  fail "compose agent: no /metrics" "$("${DC[@]}" "${BOTH[@]}" logs 2>&1 | tail -20)"
fi
# The shipped prometheus.yml scrapes every 15 s: the first scrape lands
# within ~20 s (offset in the interval + the scrape manager's 5 s tick).
n=0
for _ in $(seq 600); do
  n=$(curl -s -G --data-urlencode 'query=count(gpuq_queues{job="gpuq",instance="agent:9464"})' \
    "http://127.0.0.1:$PROMETHEUS_PORT/api/v1/query" | "$PY" -c 'import json,sys
try: r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)
except Exception: print(0)')
  [ "$n" != 0 ] && break
  sleep 0.1
done
if [ "$n" != 0 ]; then
  pass "compose Prometheus scrapes the compose agent by service name: $n gpuq_queues series ($(since "$t"))"
else
  fail "compose Prometheus has no gpuq_queues after 60 s" "$(curl -s "http://127.0.0.1:$PROMETHEUS_PORT/api/v1/targets")"
fi
skip "compose grafana: grafana/grafana-oss cannot be pulled here (no registry); its provisioning is checked statically"
skip "compose workload: rocm/pytorch cannot be pulled here and there is no AMD GPU"
t=$(now)
run "${DC[@]}" "${BOTH[@]}" down -v
expect_rc "docker-compose down -v ($(since "$t"))" 0
summary

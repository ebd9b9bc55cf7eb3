#!/usr/bin/env bash
# The DaemonSet's pod template, run for real with `podman kube play` (no
# cluster here; podman plays Pods, not DaemonSets):
#   1. deploy/kubernetes rendered by Debian's kubectl (kustomize v2.0.3, the
#      same private copy kubernetes_test.sh uses);
#   2. a Pod derived from the rendered DaemonSet by python3-yaml: its pod
#      template as it is, with a test name and only the hostPath sources that
#      cannot be this host's moved to the fixture host tree (no amdkfd here);
#      the line of check 2 names each one moved;
#   3. `podman kube play` of that Pod with the image deploy_package_build made
#      from the Debian package: the agent serves /metrics on the pod's IP and
#      port "metrics", runs the manifest's command and args, with exactly its
#      capabilities, no privilege escalation, the runtime's seccomp filter,
#      uid 0, a read-only root, its mounts read-only at their targets, in the
#      host PID namespace (all read from the host's /proc/<pid>), reads the
#      fixture KFD inventory through its /host mounts, and degrades with one
#      warning without amdkfd;
#   4. sampling: no sample denied under these capabilities; sampled
#      submissions need a queue create seen by a KFD hook, which this host
#      cannot give (the skip line says why, and which tier covers it);
#   5. `podman kube down` removes the pod and its processes.
# Usage: kube_play_test.sh AGENT SRC   (AGENT: the host build, for its version)
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
use_background_cleanup # TMP, and one EXIT trap (tests/lib/procs.sh)
POD=gpuq-kube-play-test-$$
TOOLS=${GPUQ_TOOLS_DIR:-$PWD/tools}
F=$SRC/tests/fixtures/root
# The pod, whatever happened before (a failed check, a signal): kube down by
# the played file, then by name in case the file never got written.
cleanup_pod() {
  [ -s "$TMP/pod.yaml" ] && podman kube down "$TMP/pod.yaml" > /dev/null 2>&1
  podman pod rm -f "$POD" > /dev/null 2>&1
}
on_exit cleanup_pod

missing=$(missing_of podman runc curl)
have_pyyaml || missing="$missing python3-yaml"
[ "$(id -u)" = 0 ] || missing="$missing root (host PID namespace, capabilities)"
missing=${missing# }
if [ -n "$missing" ]; then
  skip "podman kube play of the DaemonSet: missing $missing (Debian: podman runc curl python3-yaml)"
  summary
  exit
fi
export CONTAINERS_CONF=$SRC/tests/lib/containers.conf

# A pod's infra container is podman's pause image, which podman 4.3 builds
# locally from catatonit (no registry to pull one from); a test package
# (scripts/install-deps.sh), not installed here: apt beside the other tests
# would take the dpkg lock from under them.
if ! command -v catatonit > /dev/null; then
  skip "podman kube play: missing catatonit, which podman builds the pod's pause image from (Debian: catatonit)"
  summary
  exit
fi
if ! package_image "$AGENT"; then
  summary
  exit
fi

# --- 1. render ----------------------------------------------------------------------
if ! kubectl_unpacked "$TOOLS"; then
  skip "podman kube play of the DaemonSet: missing Debian's kubernetes-client ($KUBECTL_WHY)"
  summary
  exit
fi
export KUBECONFIG=/dev/null # no cluster: kustomize needs none
run "$KUBECTL" kustomize "$SRC/deploy/kubernetes"
if [ "$RC" = 0 ] && [ -n "$OUT" ]; then
  printf '%s\n' "$OUT" > "$TMP/render.yaml"
  pass "kubectl kustomize deploy/kubernetes (kubernetes-client $(cat "$KC/.deb-version"))"
else
  fail "kubectl kustomize deploy/kubernetes (exit $RC)" "$ERR"
  summary
  exit
fi

# --- 2. the Pod -----------------------------------------------------------------------
# Host paths the Pod cannot take from this host, and why. Everything else
# (securityContext, hostPID, command, args, ports, mount targets and
# readOnly, resources, probes, the other hostPaths) is the template's.
mkdir -p "$TMP/run"
kfd_why="absent here: no amdkfd"
[ -e /sys/class/kfd ] && kfd_why="the fixture inventory in place of this host's"
MOVES=(
  "/sys/class/kfd=$F/sys/class/kfd=$kfd_why"
  "/sys/devices/virtual/kfd=$F/sys/class/kfd=$kfd_why"
  "/proc=$F/proc=the fixture inventory's processes 4242 and 987 live there"
  "/sys/fs/cgroup=$F/sys/fs/cgroup=those processes' cgroups"
  "/run/containerd/io.containerd.runtime.v2.task=$TMP/run/containerd-tasks=kept out of this host's /run, where DirectoryOrCreate would make it"
)
"$PY" - "$TMP/render.yaml" "$POD" "$TMP/pod.yaml" "${MOVES[@]}" > "$TMP/derive.out" 2> "$TMP/derive.err" << 'EOF'
# Prints the changes made ("MOVED ...") and what the manifest asks of the
# container ("WANT key value"), for the checks below.
import copy, sys, yaml

render, name, out = sys.argv[1:4]
moves = {}
for m in sys.argv[4:]:
    old, new, why = m.split("=", 2)
    moves[old] = (new, why)
docs = [d for d in yaml.safe_load_all(open(render)) if d]
ds = [d for d in docs if d["kind"] == "DaemonSet"]
if len(ds) != 1:
    sys.exit("want one DaemonSet in the render, got %d" % len(ds))
ds = ds[0]
tmpl = ds["spec"]["template"]
spec = copy.deepcopy(tmpl["spec"])
pod = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": name, "namespace": ds["metadata"]["namespace"],
                 "labels": dict(tmpl["metadata"].get("labels", {}))},
    "spec": spec,
}
used = set()
for v in spec.get("volumes", []):
    hp = v.get("hostPath")
    if hp and hp["path"] in moves:
        new, why = moves[hp["path"]]
        print("MOVED\t%s: %s -> %s (%s)" % (v["name"], hp["path"], new, why))
        used.add(hp["path"])
        hp["path"] = new
if used != set(moves):
    sys.exit("no hostPath volume for %s" % sorted(set(moves) - used))
yaml.safe_dump(pod, open(out, "w"), sort_keys=False)

# linux/capability.h order.
CAPS = ("CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID "
        "SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW "
        "IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT "
        "SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD "
        "LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG "
        "WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE").split()
def quantity(q):  # a Kubernetes quantity, for the forms the manifest uses
    q = str(q)
    for suffix, factor in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("m", 1e-3)):
        if q.endswith(suffix):
            return float(q[: -len(suffix)]) * factor
    return float(q)

(c,) = spec["containers"]
sc = c["securityContext"]
caps = sc["capabilities"]
if caps.get("drop") != ["ALL"]:
    sys.exit("capabilities.drop is %r, not [ALL]: CapEff is not the add list alone" % caps.get("drop"))
mask = sum(1 << CAPS.index(n) for n in caps["add"])
want = {
    "container": c["name"],
    "cmdline": " ".join(c.get("command", []) + c.get("args", [])),
    "caps": "%016x" % mask,
    "caps_names": ",".join(caps["add"]),
    "uid": sc["runAsUser"],
    "no_new_privs": 0 if sc.get("allowPrivilegeEscalation", True) else 1,
    "seccomp": sc.get("seccompProfile", {}).get("type", ""),
    "privileged": str(sc.get("privileged", False)).lower(),
    "ro_root": str(sc.get("readOnlyRootFilesystem", False)).lower(),
    "host_pid": str(spec.get("hostPID", False)).lower(),
    "port": [p["containerPort"] for p in c["ports"] if p.get("name") == "metrics"][0],
    "memory_limit": int(quantity(c["resources"]["limits"]["memory"])),
    "cpu_limit_m": round(quantity(c["resources"]["limits"]["cpu"]) * 1000),
    "mounts": " ".join("%s:%s" % (m["mountPath"], "ro" if m.get("readOnly") else "rw")
                       for m in c.get("volumeMounts", [])),
}
for k, v in want.items():
    print("WANT\t%s\t%s" % (k, v))
EOF
declare -A WANT
moved=()
while IFS=$'\t' read -r kind a b; do
  case $kind in
    MOVED) moved+=("$a") ;;
    WANT) WANT[$a]=$b ;;
  esac
done < "$TMP/derive.out"
if [ -s "$TMP/pod.yaml" ] && [ -n "${WANT[caps]:-}" ]; then
  pass "Pod $POD from the rendered DaemonSet's template; only these hostPath sources changed: $(printf '%s\n' "${moved[@]}" | paste -sd ';' | sed 's/;/; /g')"
else
  fail "cannot derive a Pod from the rendered DaemonSet" "$(cat "$TMP/derive.err")"
  summary
  exit
fi

# --- 3. kube play -------------------------------------------------------------------
# podman reads hostPID from 4.5 on (containers/podman#17168); Debian 12's 4.3
# ignores it and gives the pod a PID namespace of its own. The manifest's
# hostPID: true is applied as podman's default PID namespace instead, in a
# copy of the tier's containers.conf used by this script's podman calls only.
if [ "${WANT[host_pid]}" = true ]; then
  sed '/^\[containers\]$/a pidns = "host"' "$CONTAINERS_CONF" > "$TMP/containers.conf"
  export CONTAINERS_CONF=$TMP/containers.conf
fi
CTR=$POD-${WANT[container]}
run podman kube play "$TMP/pod.yaml"
state=$(podman pod inspect --format '{{.State}}' "$POD" 2> /dev/null)
cstate=$(podman inspect --format '{{.State.Status}}' "$CTR" 2> /dev/null)
# The manifest's image name, gpuq-agent:<version>, resolves to the local one.
image=$(podman inspect --format '{{.Image}}' "$CTR" 2> /dev/null)
if [ "$RC" = 0 ] && [ "$state" = Running ] && [ "$cstate" = running ] &&
  [ "$image" = "$(podman image inspect --format '{{.Id}}' "$IMAGE")" ]; then
  pass "podman kube play starts the pod ($(podman --version); pod $state, container $CTR $cstate, image $IMAGE)"
else
  fail "podman kube play (exit $RC): pod '$state', container '$cstate', image '$image' (want $IMAGE)" "$OUT $ERR
$(podman logs "$CTR" 2>&1 | tail -20)"
  summary
  exit
fi
PID=$(podman inspect --format '{{.State.Pid}}' "$CTR")
# No --publish in podman 4.3's kube play and no hostPort in the manifest: the
# pod's own address, from the host (rootful bridge network).
INFRA=$(podman pod inspect --format '{{.InfraContainerID}}' "$POD")
IP=$(podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$INFRA")
URL=http://$IP:${WANT[port]}/metrics
if [ -n "$IP" ] && wait_http "$URL" 100; then
  pass "agent serves /metrics on the pod's IP, containerPort ${WANT[port]} (\"metrics\"): $URL"
else
  fail "no /metrics at $URL" "$(podman logs "$CTR" 2>&1 | tail -20)"
fi

# The process, seen from the host.
cmdline=$(tr '\0' ' ' < "/proc/$PID/cmdline" 2> /dev/null)
cmdline=${cmdline% }
if [ "$cmdline" = "${WANT[cmdline]}" ]; then
  pass "the agent runs the manifest's command and args: $cmdline"
else
  fail "agent command line" "got '$cmdline', want '${WANT[cmdline]}'"
fi
status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status" 2> /dev/null; }
if [ "$(status CapEff)" = "${WANT[caps]}" ] && [ "$(status CapPrm)" = "${WANT[caps]}" ] &&
  [ "$(status CapBnd)" = "${WANT[caps]}" ]; then
  pass "effective capabilities exactly the manifest's drop ALL + add ${WANT[caps_names]}: CapEff $(status CapEff) (= CapPrm = CapBnd)"
else
  fail "capabilities" "CapEff '$(status CapEff)' CapPrm '$(status CapPrm)' CapBnd '$(status CapBnd)', want ${WANT[caps]} (${WANT[caps_names]})"
fi
uid=$(status Uid) nnp=$(status NoNewPrivs) seccomp=$(status Seccomp)
# Seccomp 2: a filter (the runtime's default profile, RuntimeDefault).
want_seccomp=0
[ "${WANT[seccomp]}" = RuntimeDefault ] && want_seccomp=2
privileged=$(podman inspect --format '{{.HostConfig.Privileged}}' "$CTR")
if [ "$uid" = "${WANT[uid]}" ] && [ "$nnp" = "${WANT[no_new_privs]}" ] &&
  [ "$seccomp" = "$want_seccomp" ] && [ "$privileged" = "${WANT[privileged]}" ]; then
  pass "securityContext: uid $uid (runAsUser), NoNewPrivs $nnp (allowPrivilegeEscalation false), Seccomp $seccomp (${WANT[seccomp]}), privileged $privileged"
else
  fail "securityContext" "uid '$uid' NoNewPrivs '$nnp' Seccomp '$seccomp' privileged '$privileged'; want ${WANT[uid]} ${WANT[no_new_privs]} $want_seccomp ${WANT[privileged]}"
fi
# Limits, as the runtime set them (requests only matter to a scheduler).
run podman inspect --format '{{.HostConfig.Memory}} {{.HostConfig.CpuQuota}} {{.HostConfig.CpuPeriod}}' "$CTR"
read -r mem quota period <<< "$OUT"
cpu_m=$(( ${quota:-0} * 1000 / ${period:-1} ))
if [ "$mem" = "${WANT[memory_limit]}" ] && [ "$cpu_m" = "${WANT[cpu_limit_m]}" ]; then
  pass "resources.limits applied: memory $mem bytes, cpu ${cpu_m}m (CFS quota $quota of $period us)"
else
  fail "resources.limits" "memory '$mem' want ${WANT[memory_limit]}, cpu '${cpu_m}m' want ${WANT[cpu_limit_m]}m"
fi
# The probes are the kubelet's: podman 4.3 turns the livenessProbe into a
# healthcheck command, which only a systemd timer would run, without
# resolving the named port.
hc=$(podman inspect --format '{{range .Config.Healthcheck.Test}}{{.}} {{end}}' "$CTR")
skip "readinessProbe/livenessProbe (tcpSocket on port \"metrics\"): not exercised by podman 4.3 (its healthcheck from the livenessProbe: '${hc% }'); the port they probe answers /metrics above"
# mountinfo: field 5 the mount point, field 6 its per-mount options.
mount_opts() { awk -v m="$1" '$5 == m { split($6, o, ","); print o[1] }' "/proc/$PID/mountinfo" | tail -1; }
root=$(mount_opts /)
run podman exec "$CTR" sh -c 'echo x > /kube-play-probe'
if [ "${WANT[ro_root]}" = true ] && [ "$root" = ro ] && [ "$RC" != 0 ] && [[ $ERR == *"Read-only file system"* ]]; then
  pass "root file system read-only (readOnlyRootFilesystem): / mounted ro, a write fails: ${ERR##*: }"
else
  fail "root file system" "readOnlyRootFilesystem ${WANT[ro_root]}, / mounted '$root', write exit $RC: $ERR"
fi
bad=
for m in ${WANT[mounts]}; do
  got=$(mount_opts "${m%:*}")
  [ "$got" = "${m##*:}" ] || bad="$bad ${m%:*}: '$got' want ${m##*:};"
done
if [ -z "$bad" ]; then
  pass "every volumeMount at its mountPath, as readOnly says: ${WANT[mounts]}"
else
  fail "volume mounts" "$bad"
fi
if [ "${WANT[host_pid]}" = true ] && [ "$(readlink "/proc/$PID/ns/pid")" = "$(readlink /proc/self/ns/pid)" ]; then
  pass "host PID namespace (hostPID; podman 4.3: through containers.conf pidns): the agent's $(readlink "/proc/$PID/ns/pid") is the host's, pid $PID"
else
  fail "PID namespace" "hostPID ${WANT[host_pid]}, agent $(readlink "/proc/$PID/ns/pid"), host $(readlink /proc/self/ns/pid)"
fi

# The fixture inventory, through the /host mounts (as container_test.sh's
# least-privilege run): 4 queue series, GPU 45412's details.
for _ in $(seq 50); do
  body=$(curl -s "$URL")
  grep -q '^gpuq_gpu_info{gpu_id="45412"' <<< "$body" && break
  sleep 0.1
done
queues=$(grep -c '^gpuq_queues{' <<< "$body")
if grep -q '^gpuq_queues{container="3f6a9e2b1c8d",.*gpu_id="45412",queue_type="sdma"} 1$' <<< "$body" &&
  grep -q '^gpuq_gpu_info{gpu_id="45412"' <<< "$body" && [ "$queues" = 4 ]; then
  pass "reads the fixture KFD inventory and cgroups through its /host mounts ($queues gpuq_queues series, gpuq_gpu_info of 45412)"
else
  fail "fixture inventory not seen" "$(grep -E '^gpuq_(queues|gpu_info)\{' <<< "$body")"
fi
logs=$(podman logs "$CTR" 2>&1)
n=$(grep -c 'serving the KFD sysfs inventory and self-metrics only' <<< "$logs")
if [ "$n" = 1 ]; then
  pass "without amdkfd the agent degrades with one warning: $(grep -m1 'self-metrics only' <<< "$logs" | cut -c1-120)"
else
  fail "degradation warning: $n lines, want 1" "$logs"
fi

# --- 4. sampling --------------------------------------------------------------------
# The sampler reads only queues whose ring addresses a KFD hook's create
# record carried; the fixture's are seeded from sysfs (sysfs_only). So here:
# no sample taken, none denied, and the agent's own reason for no create hook.
denied=$(series_sum 'gpuq_queue_samples_total\{result="denied"\}' "$body")
ok=$(series_sum 'gpuq_queue_samples_total\{result="ok"\}' "$body")
sysfs_only=$(series_sum 'gpuq_unsampled_queues\{.*reason="sysfs_only"\}' "$body")
if [ "$denied" = 0 ] && [ "$sysfs_only" = 3 ]; then
  pass "no queue sample denied under the manifest's capabilities; the fixture's 3 compute queues are unsampled, reason sysfs_only (ok samples $ok)"
else
  fail "samples" "denied '$denied' (want 0), sysfs_only '$sysfs_only' (want 3): $(grep -E '^gpuq_(queue_samples_total|unsampled_queues)' <<< "$body")"
fi
# The agent's own reasons, from `check` in the same container (same mounts,
# same capabilities).
run podman exec "$CTR" /usr/bin/gpuq-agent --host-root /host check
reason() { awk -v p="$1" '$1 == p { $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }' <<< "$OUT"; }
attached=$(grep -E '^gpuq_probe_attached\{probe="(create_ioctl|queue_create|tp_ioctl)"' <<< "$body" | awk '{ s += $NF } END { print s + 0 }')
host_kfd=$(awk '$2 == "kfd" { print "major " $1 }' /proc/devices)
if [ "$attached" = 0 ]; then
  skip "sampled submissions (gpuq_queue_samples_total{result=\"ok\"}, gpuq_submissions_total > 0): the sampler reads only queues whose addresses came from a KFD create hook, and none can attach here (create_ioctl: $(reason create_ioctl); tp_ioctl: $(reason tp_ioctl); this host's own /proc/devices: ${host_kfd:-no kfd either}); the null GPU's ROCr queues reach a create hook only through KFD forwarding in the QEMU simulator tier (ctest kernel_sim, tests/kernel/sim/guest-init.sh rocr:least-privilege: an agent under capbound with exactly ${WANT[caps_names]}, CapEff ${WANT[caps]}, samples ROCr's queues, none denied)"
else
  fail "a KFD create hook attached on this host ($attached), yet no ROCr client runs here: extend this test" "$(grep '^gpuq_probe_attached' <<< "$body" | grep -v ' 0$')"
fi

# --- 5. kube down -------------------------------------------------------------------
run podman kube down "$TMP/pod.yaml"
left=0
for _ in $(seq 50); do
  left=0
  podman pod exists "$POD" 2> /dev/null && left=1
  [ -d "/proc/$PID" ] && left=1
  [ "$left" = 0 ] && break
  sleep 0.1
done
if [ "$RC" = 0 ] && [ "$left" = 0 ]; then
  pass "podman kube down removes the pod; the agent (pid $PID) is gone"
else
  fail "podman kube down (exit $RC)" "$OUT $ERR; pod exists: $(podman pod exists "$POD" && echo yes || echo no); pid $PID: $([ -d "/proc/$PID" ] && echo alive || echo gone)"
fi
summary

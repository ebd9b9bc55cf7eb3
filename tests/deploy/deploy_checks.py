#!/usr/bin/python3
"""Static checks of what deploy/ and dashboards/ ship, for tests/deploy/*.sh.

Prints one line per check: "PASS\t<name>" or "FAIL\t<name>\t<detail>"; the
shell side counts them (tests/lib/assert.sh). Needs Debian's python3-yaml.

  deploy_checks.py dashboard FILE METRICS     Grafana needs + only exported metrics
  deploy_checks.py queries FILE               every panel/variable query, variables
                                              set to match-all: "what<TAB>expr" lines
  deploy_checks.py manifests DIR              Kubernetes manifests (the YAML under DIR)
  deploy_checks.py kustomize-files DIR        every file under DIR is applied by kubectl apply -k
  deploy_checks.py compose FILE               docker-compose file
  deploy_checks.py provisioning DIR           Grafana provisioning files
  deploy_checks.py swap-k8s-sd IN OUT         IN with kubernetes_sd_configs made static
"""
import json
import re
import sys

import yaml

RESULTS = []


def check(name, ok, detail=""):
    RESULTS.append(ok)
    line = ("PASS\t" if ok else "FAIL\t") + name
    if not ok and detail:
        line += "\t" + str(detail).replace("\n", " ")
    print(line)


# ----------------------------------------------------------------- dashboard
# Grafana's variables that are not the dashboard's own (substituted by Grafana).
MACROS = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1m"}
# PromQL words that may stand before "(" or alone; anything else before "{"
# or standing bare is a metric name.
PROMQL_WORDS = {
    "sum", "count", "max", "min", "avg", "by", "without", "on", "ignoring",
    "group_left", "group_right", "rate", "irate", "increase", "delta",
    "label_replace", "label_join", "topk", "bottomk", "and", "or", "unless",
    "offset", "bool", "vector", "scalar", "time", "abs", "clamp_min",
    "clamp_max", "max_over_time", "min_over_time", "avg_over_time",
    "last_over_time", "changes", "resets", "absent", "sort", "sort_desc",
    "count_values", "quantile", "histogram_quantile", "label_values",
    "query_result",
}


def panels_of(dash):
    """Every panel, rows' nested panels included (collapsed rows keep theirs)."""
    out = []
    for p in dash.get("panels", []):
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def metric_names(expr):
    """Metric names an expression selects: identifiers not in PROMQL_WORDS,
    outside strings, braces' contents and by/on/without label lists."""
    e = strip_strings(expr)
    e = re.sub(r"\{[^}]*\}", "{}", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        word = m.group(0)
        if word in PROMQL_WORDS or re.fullmatch(r"[0-9.e]+", word):
            continue
        names.add(word)
    return names


def histogram_base(name):
    """The family of a histogram's _bucket/_sum/_count series."""
    return re.sub(r"_(bucket|sum|count)$", "", name)


def variable_query(v):
    q = v.get("query")
    if isinstance(q, dict):
        q = q.get("query", "")
    return q or ""


def substitute(expr, variables):
    for macro, value in MACROS.items():
        expr = expr.replace(macro, value)
    for name in sorted(variables, key=len, reverse=True):
        expr = expr.replace("${" + name + "}", ".*").replace("$" + name, ".*")
    return expr


def cmd_dashboard(path, metrics_path):
    exported = set(open(metrics_path).read().split())
    try:
        dash = json.load(open(path))
    except ValueError as e:
        check("dashboard is valid JSON", False, e)
        return
    check("dashboard is valid JSON", True)
    sv = dash.get("schemaVersion")
    check("schemaVersion is an integer Grafana 9-11 reads (36..41)",
          isinstance(sv, int) and 36 <= sv <= 41, sv)
    check("dashboard has a uid of at most 40 characters",
          isinstance(dash.get("uid"), str) and 0 < len(dash["uid"]) <= 40, dash.get("uid"))
    check("dashboard has a title", bool(dash.get("title")))
    panels = panels_of(dash)
    ids = [p.get("id") for p in panels]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    check("every panel has an integer id", all(isinstance(i, int) for i in ids), ids)
    check("panel ids are unique", not dup, dup)
    check("every panel has a gridPos with h, w, x, y",
          all(all(k in p.get("gridPos", {}) for k in "hwxy") for p in panels))
    check("every panel fits the 24-column grid",
          all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in panels))
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    want = {"datasource", "instance", "namespace", "pod", "container", "gpu"}
    check("variables datasource, instance, namespace, pod, container, gpu exist",
          want <= set(variables), sorted(want - set(variables)))
    ds = variables.get("datasource", {})
    check("datasource variable is of type datasource for prometheus",
          ds.get("type") == "datasource" and ds.get("query") == "prometheus", ds)
    ref = {"type": "prometheus", "uid": "${datasource}"}
    bad = []
    for p in panels:
        if p.get("type") == "row":
            continue
        if p.get("datasource") != ref:
            bad.append(f"panel {p.get('id')}")
        for t in p.get("targets", []):
            if t.get("datasource") != ref:
                bad.append(f"panel {p.get('id')} target {t.get('refId')}")
    for name, v in variables.items():
        if v.get("type") == "query" and v.get("datasource") != ref:
            bad.append(f"variable {name}")
    check("every panel, target and query variable uses ${datasource}", not bad, bad)
    for name in ("instance", "namespace", "pod", "container", "gpu"):
        v = variables.get(name, {})
        check(f"variable {name} offers All = .* (matches the empty label of host processes)",
              v.get("includeAll") is True and v.get("allValue") == ".*", v.get("allValue"))
    data_panels = [p for p in panels if p.get("type") != "row"]
    check("every data panel has at least one query",
          all(p.get("targets") for p in data_panels),
          [p.get("title") for p in data_panels if not p.get("targets")])
    refs_ok = all(len({t.get("refId") for t in p["targets"]}) == len(p["targets"])
                  for p in data_panels if p.get("targets"))
    check("refIds are unique within each panel", refs_ok)
    unknown, not_used = {}, []
    for p in data_panels:
        text = " ".join(t.get("expr", "") for t in p.get("targets", []))
        for m in metric_names(text):
            if m not in exported and histogram_base(m) not in exported:
                unknown.setdefault(m, []).append(p.get("title"))
        if not any(n.startswith("gpuq_") for n in metric_names(text)):
            not_used.append(p.get("title"))
    for name, v in variables.items():
        if v.get("type") == "query":
            q = variable_query(v)
            lv = re.fullmatch(r"label_values\((.*),\s*\w+\)", q.strip())
            for m in metric_names(lv.group(1) if lv else q):
                if m not in exported:
                    unknown.setdefault(m, []).append("variable " + name)
    check("every query selects only metrics the agent exports", not unknown, unknown)
    check("every panel charts a gpuq_ metric", not not_used, not_used)
    for p in data_panels:
        for t in p.get("targets", []):
            used = set(re.findall(r"\$\{?(\w+)", t.get("expr", "")))
            missing = {u for u in used if u not in variables and not u.startswith("__")}
            if missing:
                check(f"panel '{p.get('title')}' uses only defined variables", False, missing)
    # The submission and preemption/eviction rows chart the submission,
    # doorbell, runlist, victims and eviction metrics (the replay of the
    # bundled capture exports every one of them).
    rows = {p.get("title") for p in panels if p.get("type") == "row"}
    check("rows 'Submissions' and 'Preemption and eviction' exist",
          {"Submissions", "Preemption and eviction"} <= rows, sorted(rows))
    charted = set()
    for p in data_panels:
        for t in p.get("targets", []):
            charted |= {histogram_base(m) for m in metric_names(t.get("expr", ""))}
    for name in ("gpuq_submissions_total", "gpuq_queue_pending_packets",
                 "gpuq_doorbell_packets_total", "gpuq_runlist_unmaps_total",
                 "gpuq_runlist_unmap_duration_seconds",
                 "gpuq_runlist_map_duration_seconds", "gpuq_runlist_failures_total",
                 "gpuq_runlist_operations_total", "gpuq_evictions_total",
                 "gpuq_eviction_duration_seconds", "gpuq_evicted_processes",
                 "gpuq_queue_preemptions_total", "gpuq_queue_preempted_seconds_total",
                 "gpuq_queues_by_priority", "gpuq_queues_cu_masked"):
        check(f"a panel charts {name}", name in charted)


def cmd_queries(path):
    dash = json.load(open(path))
    variables = {v["name"] for v in dash.get("templating", {}).get("list", [])}
    for p in panels_of(dash):
        for t in p.get("targets", []):
            print(f"panel '{p.get('title')}' {t.get('refId')}\t"
                  + substitute(t["expr"], variables).replace("\n", " "))
    for v in dash.get("templating", {}).get("list", []):
        q = variable_query(v)
        m = re.fullmatch(r"(?:label_values\((.*),\s*\w+\)|query_result\((.*)\))", q.strip())
        if v.get("type") == "query" and m:
            print(f"variable {v['name']}\t" + substitute(m.group(1) or m.group(2), variables))


# ----------------------------------------------------------------- kubernetes
def load_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def manifest_files(directory):
    """The YAML files under directory (relative paths), kustomization.yaml
    files apart: those are kustomize's, not Kubernetes objects."""
    import os
    return sorted(os.path.relpath(os.path.join(d, f), directory)
                  for d, _, fs in os.walk(directory) for f in fs
                  if f.endswith((".yaml", ".yml")) and f != "kustomization.yaml")


def cmd_manifests(directory):
    import os
    files = manifest_files(directory)
    docs = {}
    for f in files:
        try:
            docs[f] = load_docs(os.path.join(directory, f))
            check(f"kubernetes/{f} is valid YAML", True)
        except yaml.YAMLError as e:
            check(f"kubernetes/{f} is valid YAML", False, e)
    objs = [(f, d) for f, ds in docs.items() for d in ds]
    for f, d in objs:
        check(f"kubernetes/{f}: {d.get('kind')} has apiVersion, kind, metadata.name",
              bool(d.get("apiVersion")) and bool(d.get("kind")) and bool((d.get("metadata") or {}).get("name")))
    by_kind = {}
    for f, d in objs:
        by_kind.setdefault(d.get("kind"), []).append(d)

    ds_list = by_kind.get("DaemonSet", [])
    check("one DaemonSet", len(ds_list) == 1, len(ds_list))
    if not ds_list:
        return
    ds = ds_list[0]
    check("DaemonSet apiVersion is apps/v1", ds.get("apiVersion") == "apps/v1", ds.get("apiVersion"))
    spec = ds.get("spec") or {}
    sel = ((spec.get("selector") or {}).get("matchLabels")) or {}
    tmpl = spec.get("template") or {}
    tlabels = ((tmpl.get("metadata") or {}).get("labels")) or {}
    check("DaemonSet selector matches its pod template labels",
          bool(sel) and all(tlabels.get(k) == v for k, v in sel.items()), (sel, tlabels))
    pod = tmpl.get("spec") or {}
    check("pod shares the host PID namespace (hostPID: true)", pod.get("hostPID") is True)
    containers = pod.get("containers") or []
    agent = next((c for c in containers if "gpuq" in c.get("name", "")), None)
    check("pod has the gpuq-agent container with an image", bool(agent and agent.get("image")))
    if not agent:
        return
    args = agent.get("args", []) + agent.get("command", [])
    check("agent reads the host trees (--host-root /host)",
          "--host-root" in args and args[args.index("--host-root") + 1] == "/host", args)
    ports = {p.get("name"): p.get("containerPort") for p in agent.get("ports", [])}
    check("agent exposes a named metrics port 9464", ports.get("metrics") == 9464, ports)
    sc = agent.get("securityContext") or {}
    caps = sc.get("capabilities") or {}
    check("capabilities: drop ALL, add BPF, PERFMON, SYS_ADMIN (module BTF), SYS_PTRACE (sampling)",
          caps.get("drop") == ["ALL"]
          and {"BPF", "PERFMON", "SYS_ADMIN", "SYS_PTRACE"} <= set(caps.get("add", [])), caps)
    check("not privileged", sc.get("privileged") in (None, False))
    check("read-only root filesystem", sc.get("readOnlyRootFilesystem") is True)
    res = agent.get("resources") or {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    check("resources: cpu and memory requests and a memory limit",
          "cpu" in req and "memory" in req and "memory" in lim, res)

    def mib(q):
        m = re.fullmatch(r"(\d+)(Mi|Gi)", str(q))
        return int(m.group(1)) * (1024 if m.group(2) == "Gi" else 1) if m else None
    check("memory limit leaves room over the measured 20 MiB at 10k queues + BPF maps (>= 64Mi)",
          (mib(lim.get("memory")) or 0) >= 64, lim.get("memory"))
    check("memory request covers the measured 8 MiB at 1k queues (>= 16Mi)",
          (mib(req.get("memory")) or 0) >= 16, req.get("memory"))
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in agent.get("volumeMounts", [])}
    for host, path in (("/sys/kernel/btf", "/host/sys/kernel/btf"),
                       ("/sys/fs/cgroup", "/host/sys/fs/cgroup"),
                       ("/sys/class/kfd", "/host/sys/class/kfd"),
                       ("/proc", "/host/proc")):
        m = mounts.get(path)
        v = vols.get(m["name"]) if m else None
        ok = bool(m and v and (v.get("hostPath") or {}).get("path") == host and m.get("readOnly") is True)
        check(f"hostPath {host} mounted read-only at {path}", ok, m)
    dangling = [m["name"] for m in agent.get("volumeMounts", []) if m["name"] not in vols]
    check("every volumeMount has its volume", not dangling, dangling)
    rw = [m["mountPath"] for m in agent.get("volumeMounts", [])
          if (vols.get(m["name"], {}).get("hostPath")) and m.get("readOnly") is not True]
    check("every hostPath mount is read-only", not rw, rw)
    probes = [agent.get("livenessProbe"), agent.get("readinessProbe")]
    check("liveness and readiness probes set", all(probes))
    tol = pod.get("tolerations") or []
    check("tolerates tainted GPU nodes", bool(tol))

    svcs = by_kind.get("Service", [])
    check("a Service selecting the DaemonSet's pods on port metrics",
          any(all(tlabels.get(k) == v for k, v in ((s.get("spec") or {}).get("selector") or {}).items())
              and any(p.get("name") == "metrics" for p in (s.get("spec") or {}).get("ports", []))
              for s in svcs))
    sms = by_kind.get("ServiceMonitor", [])
    check("one ServiceMonitor (monitoring.coreos.com/v1)",
          len(sms) == 1 and sms[0].get("apiVersion") == "monitoring.coreos.com/v1")
    if sms:
        eps = (sms[0].get("spec") or {}).get("endpoints") or []
        check("ServiceMonitor endpoint: port metrics, honorLabels true",
              any(e.get("port") == "metrics" and e.get("honorLabels") is True for e in eps), eps)
        svc_labels = [((s.get("metadata") or {}).get("labels") or {}) for s in svcs]
        ml = (((sms[0].get("spec") or {}).get("selector") or {}).get("matchLabels")) or {}
        check("ServiceMonitor selects the Service",
              bool(ml) and any(all(l.get(k) == v for k, v in ml.items()) for l in svc_labels), ml)


def cmd_kustomize_files(directory):
    """`kubectl apply -k` applies what the kustomizations list: every file
    under directory is a kustomization.yaml or listed in the `resources` of
    the kustomization.yaml of its own folder, and everything a kustomization
    lists exists (files in or below its folder; `bases`: folders)."""
    import os
    listed = set()
    for d, _, fs in os.walk(directory):
        rel = os.path.relpath(d, directory)
        name = "kubernetes" if rel == "." else "kubernetes/" + rel
        if "kustomization.yaml" not in fs:
            check(f"{name}/ has a kustomization.yaml or no files", not fs, fs)
            continue
        k = yaml.safe_load(open(os.path.join(d, "kustomization.yaml"))) or {}
        res, bases = k.get("resources") or [], k.get("bases") or []
        for r in res:
            f = os.path.normpath(os.path.join(d, r))
            check(f"{name}/kustomization.yaml: resource {r} is a file in or below its folder",
                  os.path.isfile(f) and not os.path.relpath(f, d).startswith(".."))
            listed.add(f)
        for b in bases:
            check(f"{name}/kustomization.yaml: base {b} is a folder with a kustomization.yaml",
                  os.path.isfile(os.path.join(d, b, "kustomization.yaml")))
        for f in fs:
            if f == "kustomization.yaml":
                continue
            check(f"{name}/{f} is listed in {name}/kustomization.yaml",
                  f in [os.path.normpath(r) for r in res], res)
    for f in manifest_files(directory):
        check(f"kubernetes/{f} is applied (listed by a kustomization)",
              os.path.join(directory, f) in listed)


def cmd_compose(path):
    try:
        doc = yaml.safe_load(open(path))
        check("docker-compose.yml is valid YAML", True)
    except yaml.YAMLError as e:
        check("docker-compose.yml is valid YAML", False, e)
        return
    services = doc.get("services") or {}
    for s in ("workload", "agent", "prometheus", "grafana"):
        check(f"compose service {s} exists", s in services)
    agent = services.get("agent") or {}
    check("compose agent: pid host", agent.get("pid") == "host")
    check("compose agent: cap_drop ALL, cap_add BPF, PERFMON, SYS_ADMIN, SYS_PTRACE",
          agent.get("cap_drop") == ["ALL"]
          and {"BPF", "PERFMON", "SYS_ADMIN", "SYS_PTRACE"} <= set(agent.get("cap_add", [])))
    vols = [str(v) for v in agent.get("volumes", [])]
    for host in ("/sys/kernel/btf", "/sys/fs/cgroup", "/sys/class/kfd", "/proc"):
        check(f"compose agent mounts {host} read-only",
              any(v.startswith(host + ":") and v.endswith(":ro") for v in vols), vols)
    graf = services.get("grafana") or {}
    gv = " ".join(str(v) for v in graf.get("volumes", []))
    check("compose grafana provisions the datasource and dashboard",
          "dashboards/provisioning" in gv and "gpuq.json" in gv, gv)


def cmd_provisioning(directory):
    import os
    for sub, key in (("datasources", "datasources"), ("dashboards", "providers")):
        d = os.path.join(directory, sub)
        files = [f for f in os.listdir(d) if f.endswith((".yml", ".yaml"))] if os.path.isdir(d) else []
        check(f"provisioning/{sub} has a YAML file", bool(files))
        for f in files:
            doc = yaml.safe_load(open(os.path.join(d, f)))
            check(f"provisioning/{sub}/{f}: apiVersion 1 with {key}",
                  doc.get("apiVersion") == 1 and bool(doc.get(key)), doc)
            if sub == "datasources":
                check(f"provisioning/{sub}/{f}: a prometheus datasource",
                      any(x.get("type") == "prometheus" and x.get("url") for x in doc[key]))
            else:
                check(f"provisioning/{sub}/{f}: a file provider with a path",
                      any(x.get("type") == "file" and (x.get("options") or {}).get("path") for x in doc[key]))


def cmd_swap_k8s_sd(path, out):
    """Writes `path` with every kubernetes_sd_configs replaced by a static
    target: Debian's Prometheus is built without the Kubernetes SD, and the
    rest of the job (relabel_configs, ...) can still be checked by promtool."""
    doc = yaml.safe_load(open(path))
    n = 0
    for job in doc.get("scrape_configs", []):
        if "kubernetes_sd_configs" in job:
            del job["kubernetes_sd_configs"]
            job["static_configs"] = [{"targets": ["gpuq-agent-pod:9464"]}]
            n += 1
    yaml.safe_dump(doc, open(out, "w"))
    check(f"{path.split('/deploy/')[-1]}: {n} kubernetes_sd_configs job(s) with role pod",
          n >= 1 and all(sd.get("role") == "pod"
                         for job in yaml.safe_load(open(path))["scrape_configs"]
                         for sd in job.get("kubernetes_sd_configs", [])))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"dashboard": cmd_dashboard, "queries": cmd_queries, "manifests": cmd_manifests,
     "kustomize-files": cmd_kustomize_files,
     "compose": cmd_compose, "provisioning": cmd_provisioning,
     "swap-k8s-sd": cmd_swap_k8s_sd}[cmd](*args)
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The starter alerts (deploy/prometheus/gpuq-alerts.yml) and their Prometheus
# Operator copy (deploy/kubernetes/prometheus-operator/prometheusrule.yaml):
#   - promtool check rules, and promtool test rules on alerts_test.yml (every
#     alert fires with its exact labels and annotations, and stays quiet);
#   - the unit tests' input series are shaped as the agent exports them: each
#     name is in the agent's output (the bundled capture's replay plus live
#     mode on the fixture host, where the probe status exists) with exactly
#     its label names, plus the job and instance a scrape adds; the rules'
#     metrics, label names in selectors and matched values are the agent's;
#   - every alert has a firing case and a quiet case, and the usual fields;
#   - the PrometheusRule's spec.groups equals the rules file's groups.
# Usage: alerts_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
RULES=$SRC/deploy/prometheus/gpuq-alerts.yml
UNIT=$SRC/tests/deploy/alerts_test.yml
OPERATOR=$SRC/deploy/kubernetes/prometheus-operator/prometheusrule.yaml

if command -v promtool > /dev/null; then
  run promtool check rules "$RULES"
  expect_rc "promtool check rules deploy/prometheus/gpuq-alerts.yml" 0
  # rule_files in alerts_test.yml is relative to that file, not to the cwd.
  run promtool test rules "$UNIT"
  if [ "$RC" = 0 ]; then
    pass "promtool test rules tests/deploy/alerts_test.yml"
  else
    fail "promtool test rules tests/deploy/alerts_test.yml (exit $RC)" "$OUT$ERR"
  fi
else
  skip "promtool check rules / test rules: missing promtool (Debian: prometheus)"
fi

if ! have_pyyaml; then
  skip "alert series shapes, coverage and the PrometheusRule copy: missing Debian's python3-yaml (/usr/bin/python3 with yaml)"
  summary
  exit
fi

# What the agent exports: the replay, and live mode on the fixture host
# (gpuq_probe_attached and the reconciliation families exist only live).
run "$AGENT" --once --replay "$SRC/examples/default.gpuqcap" --output prometheus
rc_replay=$RC err_replay=$ERR
cat > "$TMP/agent.prom" <<< "$OUT"
run "$AGENT" --once --host-root "$SRC/tests/fixtures/root" --output prometheus
rc_live=$RC
cat >> "$TMP/agent.prom" <<< "$OUT"
if [ "$rc_replay" = 0 ] && [ "$rc_live" = 0 ]; then
  pass "agent --once --output prometheus: replay and fixture host (exit 0, 0)"
else
  fail "agent --once: replay exit $rc_replay, fixture host exit $rc_live, want 0" "$err_replay
$ERR"
fi

# One PASS/FAIL line per check, as deploy_checks.py prints them.
checks_from < <("$PY" - "$TMP/agent.prom" "$RULES" "$UNIT" "$OPERATOR" 2>&1 << 'PY'
import re
import sys

import yaml

agent_file, rules_file, unit_file, operator_file = sys.argv[1:5]
# Target labels Prometheus adds to every scraped series.
SCRAPE_LABELS = {"job", "instance"}
NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def check(name, ok, detail=""):
    line = ("PASS\t" if ok else "FAIL\t") + name
    if not ok and detail:
        line += "\t" + str(detail).replace("\n", " ")
    print(line)


def series(text):
    """name{labels} -> (name, {label: value}), or None."""
    m = re.fullmatch(r"\s*(%s)\s*(?:\{(.*)\})?\s*" % NAME, text)
    if not m:
        return None
    return m.group(1), {k: v for k, _, v in LABEL.findall(m.group(2) or "")}


# The agent's sample lines: label name sets and values seen, per name; and
# its family names (a histogram's is none of its series' names).
shapes, values, families = {}, {}, set()
for line in open(agent_file):
    if line.startswith("# TYPE "):
        families.add(line.split()[2])
    if not line.startswith("gpuq_"):
        continue
    s = series(line.rsplit(None, 1)[0])
    if s is None:
        continue
    name, labels = s
    shapes.setdefault(name, set()).add(frozenset(labels))
    for k, v in labels.items():
        values.setdefault((name, k), set()).add(v)
check(f"the agent's output has gpuq_ series ({len(shapes)} names)", len(shapes) >= 15,
      sorted(shapes))
inconsistent = {n: s for n, s in shapes.items() if len(s) != 1}
check("every name the agent exports has one label name set", not inconsistent, inconsistent)

rules_doc = yaml.safe_load(open(rules_file))
rules = [r for g in rules_doc["groups"] for r in g["rules"]]
alerts = {r["alert"]: r for r in rules if "alert" in r}

# The rules' selectors: metrics, label names and matched values the agent has.
for alert, r in alerts.items():
    bad = []
    for m in re.finditer(r"\b(gpuq_[a-z0-9_]+)\b(\s*\{([^}]*)\})?", r["expr"]):
        name = m.group(1)
        if name not in shapes:
            bad.append(f"{name}: not exported")
            continue
        known = set(next(iter(shapes[name])))
        for k, op, v in LABEL.findall(m.group(3) or ""):
            if k not in known:
                bad.append(f"{name}: no label {k}")
            elif op in ("=", "!=") and v not in values.get((name, k), set()):
                bad.append(f'{name}: {k}{op}"{v}" never seen')
    check(f"{alert}: its expression selects metrics, labels and values the agent exports",
          not bad, "; ".join(bad))

# The usual fields of each alert.
for alert, r in alerts.items():
    ann = r.get("annotations") or {}
    missing = [] if "for" in r else ["for"]
    if (r.get("labels") or {}).get("severity") not in ("critical", "warning", "info"):
        missing.append("labels.severity (critical, warning or info)")
    missing += [f"annotations.{a}" for a in ("summary", "description", "runbook") if not ann.get(a)]
    check(f"{alert}: for, severity, summary, description, runbook", not missing, missing)
    # Runbooks name metrics to look at: they must still exist.
    stale = sorted({n for v in ann.values() for n in re.findall(r"\bgpuq_[a-z0-9_]+\b", v)
                    if n not in shapes and n not in families})
    check(f"{alert}: the metrics its annotations name are exported", not stale, stale)

# The unit tests' input series, shaped as the agent exports them.
unit = yaml.safe_load(open(unit_file))
by_name = {}
for t in unit["tests"]:
    for s in t["input_series"]:
        parsed = series(s["series"])
        if parsed is None:
            check(f"alerts_test.yml: series {s['series']} parses", False)
            continue
        by_name.setdefault(parsed[0], []).append(parsed[1])
for name, inputs in sorted(by_name.items()):
    if name not in shapes:
        check(f"alerts_test.yml: {name} is a name the agent exports", False, sorted(shapes))
        continue
    want = set(next(iter(shapes[name])))
    bad = [sorted(l) for l in inputs
           if set(l) - SCRAPE_LABELS != want or not SCRAPE_LABELS <= set(l)]
    check(f"alerts_test.yml: {len(inputs)} {name} series carry the agent's labels "
          f"{{{', '.join(sorted(want))}}} plus job, instance", not bad,
          f"want {sorted(want | SCRAPE_LABELS)}, got {bad}")

# Each alert fires in some case and stays quiet in another; no test names an
# alert the rules do not have.
cases = {}
for t in unit["tests"]:
    for c in t.get("alert_rule_test", []):
        cases.setdefault(c["alertname"], []).append(bool(c.get("exp_alerts")))
for alert in alerts:
    got = cases.get(alert, [])
    check(f"alerts_test.yml: {alert} has a firing case and a quiet case",
          True in got and False in got, got)
check("alerts_test.yml tests only alerts of the rules file", set(cases) <= set(alerts),
      sorted(set(cases) - set(alerts)))

# The PrometheusRule: the same groups, as data.
op = yaml.safe_load(open(operator_file))
meta = op.get("metadata") or {}
check("prometheusrule.yaml: monitoring.coreos.com/v1 PrometheusRule gpuq-agent in gpuq-system",
      (op.get("apiVersion"), op.get("kind"), meta.get("name"), meta.get("namespace"))
      == ("monitoring.coreos.com/v1", "PrometheusRule", "gpuq-agent", "gpuq-system"),
      (op.get("apiVersion"), op.get("kind"), meta.get("name"), meta.get("namespace")))
labels = meta.get("labels") or {}
check("prometheusrule.yaml: labels app.kubernetes.io/name: gpuq-agent, release: prometheus",
      labels.get("app.kubernetes.io/name") == "gpuq-agent" and labels.get("release") == "prometheus",
      labels)
groups = (op.get("spec") or {}).get("groups")
diff = ""
if groups != rules_doc["groups"]:
    mine = {r.get("alert"): r for g in groups or [] for r in g.get("rules", [])}
    diff = "differs in: " + ", ".join(
        sorted(a for a in set(mine) | set(alerts) if mine.get(a) != alerts.get(a)) or ["groups"])
check("prometheusrule.yaml spec.groups == deploy/prometheus/gpuq-alerts.yml groups",
      groups == rules_doc["groups"], diff)
PY
)
summary

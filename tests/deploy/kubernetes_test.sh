#!/usr/bin/env bash
# `kubectl apply -k deploy/kubernetes` and its prometheus-operator overlay,
# without a cluster:
#   1. Debian 12's kubectl (package kubernetes-client, 1.20, whose kustomize
#      is v2.0.3), fetched with apt-get download into a private folder (the
#      machine's own kubectl, if any, is not used);
#   2. both kustomizations render, to exactly the expected objects, through
#      `kubectl kustomize` and through the offline `-k` path of kubectl
#      (`label --local -k`), also from a copy of deploy/kubernetes alone;
#      every file in the folder is a kustomization or listed by one;
#   3. every rendered object is valid against the OpenAPI schema of a current
#      Kubernetes release and of the Prometheus Operator's CRDs
#      (validate_k8s.js, npm packages pinned in k8s-schema/), unknown fields
#      included; a wrong field type, a misspelt field and a kind without a
#      schema are shown to fail;
#   4. the DaemonSet's image tag is the project version (CMakeLists.txt).
# Downloads are cached under $GPUQ_TOOLS_DIR (default ./tools: the build
# tree when ctest runs it). What cannot be had is skipped, named.
# Usage: kubernetes_test.sh AGENT SRC
set -u
AGENT=$1 SRC=$2
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/deploy/lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TOOLS=${GPUQ_TOOLS_DIR:-$PWD/tools}
K8S=$SRC/deploy/kubernetes
OVERLAY=prometheus-operator
: "$AGENT" # the agent is not run here

# ---------------------------------------------------------------- kubectl
# Debian's kubernetes-client, unpacked (not installed) under $TOOLS
# (kubectl_unpacked, tests/deploy/lib.sh).
if kubectl_unpacked "$TOOLS"; then
  HAVE_KUBECTL=1
  debver=$(cat "$KC/.deb-version")
  # 1.20.5+really1.20.2-1.1+deb12u1: the upstream release is 1.20.2.
  up=${debver%%-*} up=${up##*really} up=${up%%+*}
  run "$KUBECTL" version --client
  if [ "$RC" = 0 ] && grep -q "GitVersion:\"v$up\"" <<< "$OUT"; then
    pass "Debian's kubernetes-client $debver: kubectl v$up (kustomize v2.0.3 inside), private copy in $KC"
  else
    fail "kubectl version --client of kubernetes-client $debver: want v$up" "$OUT $ERR"
  fi
else
  HAVE_KUBECTL=
  skip "kubectl kustomize / -k checks: missing Debian's kubernetes-client ($KUBECTL_WHY)"
fi
# No kubeconfig, no cluster: what runs below must not need one.
export KUBECONFIG=/dev/null

# ---------------------------------------------------------------- layout
# The folder holds only what `kubectl apply -k` applies.
if have_pyyaml; then
  py_checks kustomize-files "$K8S"
else
  skip "kustomization file lists: missing Debian's python3-yaml"
fi
first=$(head -1 "$K8S/base/daemonset.yaml")
if grep -q 'kubectl apply -k deploy/kubernetes$' <<< "$first"; then
  pass "daemonset.yaml's first line: kubectl apply -k deploy/kubernetes"
else
  fail "daemonset.yaml's first line does not say kubectl apply -k deploy/kubernetes" "$first"
fi

# ---------------------------------------------------------------- renders
BASE_WANT="daemonset.apps/gpuq-agent
namespace/gpuq-system
service/gpuq-agent"
OVERLAY_WANT="$BASE_WANT
prometheusrule.monitoring.coreos.com/gpuq-agent
servicemonitor.monitoring.coreos.com/gpuq-agent"
declare -A RENDER
if [ -n "$HAVE_KUBECTL" ]; then
  # A copy of deploy/kubernetes alone: the kustomizations read nothing else.
  cp -r "$K8S" "$TMP/kubernetes"
  for sub in . base "$OVERLAY"; do
    name=deploy/kubernetes/$sub name=${name%/.}
    run "$KUBECTL" kustomize "$K8S/$sub"
    if [ "$RC" != 0 ]; then
      fail "kubectl kustomize $name (exit $RC)" "$ERR"
      continue
    fi
    pass "kubectl kustomize $name"
    RENDER[$sub]=$OUT
    printf '%s\n' "$OUT" > "$TMP/render-${sub//[.\/]/_}.yaml"
    run "$KUBECTL" kustomize "$TMP/kubernetes/$sub"
    if [ "$RC" = 0 ] && [ "$OUT" = "${RENDER[$sub]}" ]; then
      pass "$name renders the same from a copy of deploy/kubernetes alone"
    else
      fail "$name from a copy of deploy/kubernetes alone differs (exit $RC)" "$ERR"
    fi
    # The objects, through the -k loader `kubectl apply -k` uses; offline
    # (kubectl 1.20 cannot dry-run apply/create without a server).
    run "$KUBECTL" label --local -o name -k "$K8S/$sub" gpuq-test=1
    got=$(sort <<< "$OUT")
    want=$BASE_WANT
    [ "$sub" = "$OVERLAY" ] && want=$OVERLAY_WANT
    want=$(sort <<< "$want")
    if [ "$RC" = 0 ] && [ "$got" = "$want" ]; then
      pass "kubectl label --local -k $name: exactly $(paste -sd ' ' <<< "$want")"
    else
      fail "kubectl label --local -k $name (exit $RC): objects differ" "$(diff <(echo "$want") <(echo "$got")) $ERR"
    fi
  done
  # The README's install path: what `kubectl apply -k deploy/kubernetes`
  # prints on a new cluster is one "created" line per object, in this order.
  run "$KUBECTL" label --local -o name -k "$K8S" gpuq-test=1
  if readme_has 'kubectl apply -k deploy/kubernetes                        # namespace, DaemonSet, headless Service' &&
    [ "$RC" = 0 ] && [ "$(readme_output cluster)" = "$(sed 's/$/ created/' <<< "$OUT")" ]; then
    pass "README's cluster path: kubectl apply -k deploy/kubernetes and the objects it shows created"
  else
    fail "README's cluster output differs from the objects -k loads" "$(diff <(readme_output cluster) <(sed 's/$/ created/' <<< "$OUT"))"
  fi
  if [ -n "${RENDER[.]:-}" ] && [ "${RENDER[.]}" = "${RENDER[base]:-}" ]; then
    pass "deploy/kubernetes renders exactly its base/"
  else
    fail "deploy/kubernetes and deploy/kubernetes/base render differently"
  fi
fi

# ---------------------------------------------------------------- image tag
version=$(sed -n 's/^project(gpuq-agent VERSION \([0-9][0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
images=$(if [ -n "${RENDER[.]:-}" ]; then printf '%s\n' "${RENDER[.]}"; else cat "$K8S/base/daemonset.yaml"; fi |
  sed -n 's/^ *-\{0,1\} *image: *"\{0,1\}\([^" ]*\)"\{0,1\} *$/\1/p')
if [ -z "$version" ]; then
  fail "project(gpuq-agent VERSION x.y.z) not found in CMakeLists.txt"
elif [ "$images" = "gpuq-agent:$version" ]; then
  pass "DaemonSet image gpuq-agent:$version: the tag is the project version (CMakeLists.txt)"
else
  fail "DaemonSet images: want exactly gpuq-agent:$version" "$images"
fi

# ---------------------------------------------------------------- schemas
# npm ci of tests/deploy/k8s-schema/ (versions and integrity pinned by its
# package-lock.json) into $TOOLS/k8s-schema, reused while the lock is unchanged.
SCHEMA=$TOOLS/k8s-schema
LOCK=$SRC/tests/deploy/k8s-schema/package-lock.json
VALIDATE=$SRC/tests/deploy/validate_k8s.js
PKGS="kubernetes-models 5.1.0 (Kubernetes v1.36.0 API), @kubernetes-models/prometheus-operator 6.0.0 (operator v0.91.0 CRDs), yaml 2.9.1"
HAVE_SCHEMA=
if ! command -v node > /dev/null; then
  skip "schema validation: missing node (Debian: nodejs)"
elif [ -d "$SCHEMA/node_modules/kubernetes-models" ] && cmp -s "$LOCK" "$SCHEMA/package-lock.json"; then
  HAVE_SCHEMA=1
elif ! command -v npm > /dev/null; then
  skip "schema validation: missing npm (Debian: npm) to fetch $PKGS"
else
  rm -rf "$SCHEMA" && mkdir -p "$SCHEMA" &&
    cp "$SRC/tests/deploy/k8s-schema/package.json" "$LOCK" "$SCHEMA/"
  if timeout 300 npm ci --prefix "$SCHEMA" --no-audit --no-fund --loglevel=error > "$TMP/npm.log" 2>&1; then
    HAVE_SCHEMA=1
  else
    skip "schema validation: npm ci of $PKGS failed (no npm registry?): $(grep -m2 '^npm error' "$TMP/npm.log" | paste -sd ' ')"
    rm -rf "$SCHEMA"
  fi
fi
if [ -n "$HAVE_SCHEMA" ]; then
  pass "schemas: $PKGS, node $(node --version)"
  if [ -n "$HAVE_KUBECTL" ]; then
    for sub in . "$OVERLAY"; do
      f=$TMP/render-${sub//[.\/]/_}.yaml
      name=deploy/kubernetes/$sub name=${name%/.}
      if [ -s "$f" ]; then
        # checks_from in this shell (not a pipeline's subshell): its counts
        # must reach the summary.
        checks_from < <(node "$VALIDATE" "$SCHEMA" "$f" 2>&1 | sed "s#^\(PASS\|FAIL\)\t#&$name: #")
      else
        fail "$name: nothing rendered to validate"
      fi
    done
  else
    # Without kubectl, the files themselves (the same objects, unrendered).
    for f in "$K8S"/base/*.yaml "$K8S/$OVERLAY"/*.yaml; do
      case $f in */kustomization.yaml) continue ;; esac
      checks_from < <(node "$VALIDATE" "$SCHEMA" "$f" 2>&1 | sed "s#^\(PASS\|FAIL\)\t#&${f#"$SRC/"}: #")
    done
  fi
  # The validator catches errors: a wrong type, a misspelt field, a kind it
  # has no schema for (each must fail, naming the field or the kind).
  src=$TMP/render-_.yaml
  [ -s "$src" ] || cat "$K8S"/base/namespace.yaml <(echo ---) "$K8S"/base/daemonset.yaml > "$src"
  bad() { # NAME EXPECT-REGEX SED-EXPR [EXTRA-DOC]
    sed "$3" "$src" > "$TMP/bad.yaml"
    [ -n "${4:-}" ] && printf -- '---\n%s\n' "$4" >> "$TMP/bad.yaml"
    if cmp -s "$src" "$TMP/bad.yaml"; then
      fail "deliberate error ($1): the mutation did not apply"
      return
    fi
    run node "$VALIDATE" "$SCHEMA" "$TMP/bad.yaml"
    if [ "$RC" = 1 ] && grep -qE "^FAIL.*$2" <<< "$OUT"; then
      pass "validate_k8s.js rejects $1 ($(grep -m1 -E "^FAIL.*$2" <<< "$OUT" | cut -f3))"
    else
      fail "validate_k8s.js does not reject $1 (exit $RC)" "$OUT $ERR"
    fi
  }
  bad 'containerPort: "9464" (a string)' 'containerPort must be integer' 's/containerPort: 9464/containerPort: "9464"/'
  bad 'readOnlyRootFilesytem (misspelt)' 'securityContext/readOnlyRootFilesytem' 's/readOnlyRootFilesystem: true/readOnlyRootFilesytem: true/'
  bad 'a DaemonSet of extensions/v1beta1 (removed API)' 'extensions/v1beta1' 's#apiVersion: apps/v1#apiVersion: extensions/v1beta1#'
  bad 'a kind without a schema' 'Widget/w .*a schema' '' $'apiVersion: gpuq.example.com/v1\nkind: Widget\nmetadata:\n  name: w'
fi
summary

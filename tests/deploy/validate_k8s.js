#!/usr/bin/env node
// Validates every object of a multi-document YAML stream (what
// `kubectl kustomize DIR` prints) against the OpenAPI schema of its
// apiVersion/kind, from the npm packages pinned in tests/deploy/k8s-schema/
// (kubernetes-models: the Kubernetes API; @kubernetes-models/prometheus-operator:
// ServiceMonitor, PrometheusRule, ...).
//
// Usage: validate_k8s.js MODULES_DIR [FILE]   (FILE default: stdin)
//   MODULES_DIR: where `npm ci` installed tests/deploy/k8s-schema/.
// Prints two lines per object (schema, unknown fields): "PASS\t<what>" or
// "FAIL\t<what>\t<detail>"; exits 1 when any fails. An object whose
// apiVersion/kind has no schema in those packages fails.
//
// Beyond the schema: a field the schema does not know fails too, as the API
// server's strict field validation rejects it (current kubectl's default,
// --validate=strict). The schemas do not forbid unknown properties, so each
// field is probed: set to `true`, then to a string, a field the schema types
// fails one of the two at its own path; a field that accepts both is unknown
// (or untyped, which no object here has).
//
// kubernetes-models also carries the API versions removed since Kubernetes
// 1.16 (extensions/v1beta1, ...), so a schema exists for them: an alpha or
// beta apiVersion fails here instead (what is shipped uses stable APIs only).
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");

const [modulesDir, file] = process.argv.slice(2);
if (!modulesDir) {
  console.error("usage: validate_k8s.js MODULES_DIR [FILE]");
  process.exit(2);
}
const nm = path.resolve(modulesDir, "node_modules");
// Packages whose <apiVersion>/index.js exports one model class per kind.
const PACKAGES = ["kubernetes-models", "@kubernetes-models/prometheus-operator"];

async function modelFor(apiVersion, kind) {
  // Core group "v1" is kubernetes-models/v1; groups are <group>/<version>.
  if (!/^[a-z0-9.-]*\/?v[0-9a-z]+$/.test(apiVersion || "")) return null;
  for (const pkg of PACKAGES) {
    const f = path.join(nm, pkg, apiVersion, "index.js");
    if (!fs.existsSync(f)) continue;
    const mod = await import(pathToFileURL(f).href);
    const cls = mod[kind];
    if (cls && cls.apiVersion === apiVersion && cls.kind === kind) return cls;
  }
  return null;
}

// The schema errors of obj ([] when valid).
function errorsOf(cls, obj) {
  try {
    new cls(obj).validate();
    return [];
  } catch (e) {
    if (Array.isArray(e.errors)) return e.errors;
    throw e;
  }
}

const pointer = (p) => p.map((k) => "/" + String(k).replace(/~/g, "~0").replace(/\//g, "~1")).join("");

function withValue(obj, p, v) {
  const copy = structuredClone(obj);
  let o = copy;
  for (const k of p.slice(0, -1)) o = o[k];
  o[p[p.length - 1]] = v;
  return copy;
}

// Paths of the fields the schema does not know.
function unknownFields(cls, obj) {
  const unknown = [];
  const walk = (v, p) => {
    if (Array.isArray(v)) {
      v.forEach((e, i) => walk(e, [...p, i]));
    } else if (v !== null && typeof v === "object") {
      for (const k of Object.keys(v)) {
        const fp = [...p, k];
        const at = pointer(fp);
        const typed = [true, "gpuq-probe"].some((probe) =>
          errorsOf(cls, withValue(obj, fp, probe)).some((e) => e.instancePath === at));
        if (!typed) unknown.push(at);
        else walk(v[k], fp);
      }
    }
  };
  walk(obj, []);
  return unknown;
}

async function main() {
  const YAML = require(path.join(nm, "yaml"));
  const text = fs.readFileSync(file || 0, "utf8");
  const docs = YAML.parseAllDocuments(text);
  let failed = 0, n = 0;
  const out = (ok, what, detail) => {
    if (!ok) failed++;
    console.log((ok ? "PASS\t" : "FAIL\t") + what + (!ok && detail ? "\t" + String(detail).replace(/\s+/g, " ") : ""));
  };
  for (const d of docs) {
    if (d.errors.length) {
      out(false, "YAML document parses", d.errors.map((e) => e.message).join("; "));
      continue;
    }
    const obj = d.toJS();
    if (obj === null || obj === undefined) continue;
    n++;
    const what = `${obj.kind}/${(obj.metadata || {}).name} (${obj.apiVersion})`;
    if (/^(.*\/)?v[0-9]+(alpha|beta)[0-9]*$/.test(obj.apiVersion || "")) {
      out(false, `${what}: a stable apiVersion`, "alpha/beta (possibly removed) API");
      continue;
    }
    const cls = await modelFor(obj.apiVersion, obj.kind);
    if (!cls) {
      out(false, `${what}: a schema for its apiVersion/kind`, `none in ${PACKAGES.join(", ")}`);
      continue;
    }
    const errs = errorsOf(cls, obj);
    out(errs.length === 0, `${what} matches its schema`,
      errs.map((e) => `${e.instancePath || "/"} ${e.message}`).join("; "));
    const unknown = unknownFields(cls, obj);
    out(unknown.length === 0, `${what} has no field unknown to its schema`, unknown.join(", "));
  }
  if (n === 0) out(false, "at least one object in the input");
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log("FAIL\tvalidate_k8s.js ran\t" + String(e && e.stack || e).replace(/\s+/g, " "));
  process.exit(1);
});

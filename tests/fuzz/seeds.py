#!/usr/bin/env python3
"""Seed corpus of one fuzzing harness, made from files the repository
already tracks (goldens, fixtures, the bundled capture) and, for the
capture harness, the generator's scenarios: nothing binary is committed.

  seeds.py HARNESS OUTDIR SRC [GEN_CAPTURE]

Writes one file per seed into OUTDIR (created, emptied first).
"""
import glob
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HEADER_FMT = "<HHIQQQ"  # struct gpuq_event_header
HEADER_SIZE = struct.calcsize(HEADER_FMT)


def capture_parts(data):
    """(header bytes, [record bytes]) of a capture, by the ABI's sizes."""
    header_size = struct.unpack_from("<I", data, 12)[0]
    header, records, off = data[:header_size], [], header_size
    while off + HEADER_SIZE <= len(data):
        _type, size = struct.unpack_from("<HH", data, off)
        if size < HEADER_SIZE or off + size > len(data):
            break
        records.append(data[off:off + size])
        off += size
    return header, records


class Out:
    def __init__(self, outdir):
        self.outdir = outdir
        shutil.rmtree(outdir, ignore_errors=True)
        os.makedirs(outdir)
        self.count = 0

    def add(self, name, data):
        if isinstance(data, str):
            data = data.encode()
        digest = hashlib.sha1(data).hexdigest()[:12]
        path = os.path.join(self.outdir, f"{name}-{digest}")
        with open(path, "wb") as f:
            f.write(data)
        self.count += 1


def captures(src, gen):
    """name -> bytes: the bundled capture and the generator's scenarios."""
    result = {}
    with open(os.path.join(src, "examples/default.gpuqcap"), "rb") as f:
        result["default"] = f.read()
    if gen:
        with tempfile.TemporaryDirectory() as tmp:
            for scenario in ("cnn", "transformer", "deepseek8", "shared-gpu"):
                path = os.path.join(tmp, scenario + ".gpuqcap")
                done = subprocess.run(
                    [gen, "--scenario", scenario, "-o", path],
                    capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    sys.exit(f"seeds.py: {gen} failed: {done.stderr}")
                with open(path, "rb") as f:
                    result[scenario] = f.read()
    return result


def seed_capture(out, src, gen):
    for name, data in captures(src, gen).items():
        header, records = capture_parts(data)
        if name == "default":
            out.add(name, data)
        # Short captures keep the fuzzer fast: the first records (topology,
        # names, the first queues), and every record type at least once.
        out.add(name + "-head", header + b"".join(records[:40]))
        seen, sample = set(), []
        for rec in records:
            rtype = struct.unpack_from("<H", rec)[0]
            if rtype not in seen:
                seen.add(rtype)
                sample.append(rec)
        out.add(name + "-types", header + b"".join(sample))


def seed_event(out, src, gen):
    per_type = {}
    for name, data in captures(src, gen).items():
        _header, records = capture_parts(data)
        for rec in records:
            rtype = struct.unpack_from("<H", rec)[0]
            kept = per_type.setdefault(rtype, [])
            if len(kept) < 3 and rec not in kept:
                kept.append(rec)
                out.add(f"{name}-type{rtype}", rec)
        out.add(name + "-stream", b"".join(records[:32]))


def seed_web_config(out, src, _gen):
    with open(os.path.join(src, "deploy/web-config.example.yml")) as f:
        example = f.read()
    out.add("example", example)
    # Cost 4: as valid as cost 10, and fast enough to fuzz.
    h = "$2b$04$Fw26oQWkaaCIYecgs80hWe9vBvY03SAs7CokhoR4u7dbcdFpLGoAa"
    tls = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
    for name, text in {
        "users": f"basic_auth_users:\n  prometheus: {h}\n  alice: '{h}'  # quoted\n"
                 f"  \"bob\": $2a{h[3:]}\n",
        "tls": tls,
        "tls-users": f"---\n{tls}basic_auth_users:\n  prometheus: {h}\n",
        "tls13": tls + "  min_version: TLS13\n",
        "mtls": tls + "  client_auth_type: RequireAndVerifyClientCert\n"
                      "  client_ca_file: ca.crt\n",
        "empty-users": "basic_auth_users: {}\n",
        "comments": "# web config\nbasic_auth_users: ~\n\n  # none\n",
        "refused": "http_server_config:\n  http2: false\n",
    }.items():
        out.add(name, text)


def seed_cgroup_path(out, src, _gen):
    paths = []
    for fixture in sorted(glob.glob(os.path.join(src, "tests/fixtures/cgroup/*.dirs"))):
        with open(fixture) as f:
            paths += [l.strip() for l in f
                      if l.strip() and not l.startswith("#")]
    for path in paths:
        out.add("path", path)
        out.add("v2", f"0::{path}\n")
    # v1 and hybrid files: controllers, then the unified line.
    for i in range(0, len(paths), 7):
        group = paths[i:i + 7]
        out.add("hybrid", "".join(f"{n + 2}:memory,cpu:{p}\n"
                                  for n, p in enumerate(group)) +
                f"0::{group[0]}\n")
    for f in sorted(glob.glob(os.path.join(src, "tests/fixtures/root/proc/*/cgroup"))):
        with open(f, "rb") as fh:
            out.add("proc", fh.read())


def seed_runtime_json(out, src, gen):
    root = os.path.join(src, "tests/fixtures/runtime")
    for f in sorted(glob.glob(os.path.join(root, "**/*.json"), recursive=True)):
        with open(f, "rb") as fh:
            out.add(os.path.basename(f), fh.read())
    cid = "81a06b05f4962e20a1751a3de534e6c9e9717fc3cc332aa17c7c53d3b51c9fa2"
    out.add("event", '{"status":"create","id":"%s","Type":"container",'
            '"Action":"create","Actor":{"ID":"%s","Attributes":{'
            '"containerExitCode":"0","image":"localhost/debian:bookworm-slim",'
            '"name":"gpuq-sl-ev","podId":"","team":"x"}},"scope":"local",'
            '"time":1795474842,"timeNano":1795474842306677204}' % (cid, cid))
    out.add("event-k8s", '{"Type":"container","Action":"start","Actor":{'
            '"ID":"abc123","Attributes":{"name":"k8s_app_web-0_shop_uid_0",'
            '"io.kubernetes.pod.name":"web-0","io.kubernetes.pod.namespace":'
            '"shop","io.kubernetes.container.name":"app"}}}')
    # More labels than a container_meta record holds (32 KiB).
    labels = ",".join('"org.example.label%d":"%s"' % (i, "x" * (1000 - i))
                      for i in range(40))
    out.add("inspect-many-labels", '{"Name":"/vllm","Config":{"Labels":{%s}}}'
            % labels)
    # The container_meta payloads captures carry.
    for name, data in captures(src, gen).items():
        _header, records = capture_parts(data)
        for rec in records:
            if struct.unpack_from("<H", rec)[0] == 7:  # GPUQ_EV_CONTAINER_META
                length = struct.unpack_from("<I", rec, HEADER_SIZE)[0]
                start = HEADER_SIZE + 8
                out.add(name + "-meta", rec[start:start + length])


def main():
    harness, outdir, src = sys.argv[1:4]
    gen = sys.argv[4] if len(sys.argv) > 4 else None
    out = Out(outdir)
    globals()["seed_" + harness](out, src, gen)
    print(f"seeds.py: {out.count} seeds for {harness} in {outdir}")


if __name__ == "__main__":
    main()

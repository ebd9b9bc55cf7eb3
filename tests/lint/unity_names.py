#!/usr/bin/env python3
"""Unity builds without file-local name clashes (ctest `unity_names`).

A unity batch (GPUQ_UNITY_BUILD) compiles several .cc files as one
translation unit, so what each file keeps to itself meets the others' names:

  - two files' anonymous-namespace functions of one name, with different
    parameters, become one overload set: a call in one file can silently
    bind to the other file's function;
  - a file-local function beside a function of the same name and namespace
    declared in a header another file of the batch includes: the same;
  - a macro one file defines and does not #undef rewrites the files after it.

Variables and types of one name only stop the batch from compiling, but they
do so only when the batching puts them together, which adding an unrelated
file can change. So, per unity target (every file of it, not only today's
batches), this fails on:

  1. a name file-local (in an anonymous namespace) in two files under the
     same enclosing namespace, unless both are the same alias or typedef;
  2. a file-local function whose name and enclosing namespace are those of
     a function declared in a project header (agent/, include/gpuq/,
     tests/unit/) or defined outside an anonymous namespace in another file
     of the target;
  3. a #define in a .cc file without an #undef of it in the same file.

Input: the file CMake writes (<build>/unity_sources.txt), one line per
source, "<target> <absolute path>", and the folders of the headers a
target's files may include: --headers (every target's) and --test-headers
(a test binary's too; a target is one when a source is under --tests).
Names come from Debian's universal-ctags. Prints one line per finding and
exits 1; 0 when there is none.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

# ctags reads a gtest macro invocation as a function definition.
MACRO_CALLS = {"TEST", "TEST_F", "TEST_P", "TYPED_TEST", "INSTANTIATE_TEST_SUITE_P"}
ANON = re.compile(r"__anon[0-9a-f]+")
FUNCTION_KINDS = {"function", "prototype"}
ALIAS_KINDS = {"typedef", "alias"}


def tags(paths):
    """ctags' JSON tags of `paths`, by path."""
    if not paths:
        return {}
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+sKZ", "--kinds-c++=+p",
         "--language-force=C++", "-o", "-"] + paths,
        capture_output=True, text=True, check=True).stdout
    by_path = collections.defaultdict(list)
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and not tag["name"].startswith("__anon"):
            by_path[tag["path"]].append(tag)
    return by_path


def namespace_scope(tag):
    """(enclosing namespace with anonymous ones as "<anon>", file-local) for a
    tag declared at namespace scope; None for members, locals and the rest."""
    if tag.get("scopeKind", "namespace") != "namespace":
        return None
    scope = tag.get("scope", "")
    local = bool(ANON.search(scope))
    named = "::".join(p for p in scope.split("::") if p and not ANON.fullmatch(p))
    return named, local


def definition_text(tag):
    return re.sub(r"\s+", " ", tag.get("pattern", "")).strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sources")
    parser.add_argument("--root", required=True, help="paths are shown relative to it")
    parser.add_argument("--tests", required=True, help="the test binaries' folder")
    parser.add_argument("--headers", nargs="*", default=[])
    parser.add_argument("--test-headers", nargs="*", default=[])
    args = parser.parse_args()
    source_dir = os.path.realpath(args.root)
    tests_dir = os.path.realpath(args.tests)
    targets = collections.defaultdict(list)
    with open(args.sources) as f:
        for line in f:
            target, path = line.split(maxsplit=1)
            targets[target].append(path.strip())

    # (namespace, function) declared in a project header: the agent's for
    # every target, the tests' too for a test binary.
    declared = {"agent": set(), "tests": set()}
    macros = set()  # an X-macro invocation reads as a function to ctags
    for kind, folders in (("agent", args.headers), ("tests", args.test_headers)):
        headers = []
        for folder in folders:
            for root, _, files in os.walk(folder):
                headers += [os.path.join(root, f) for f in files if f.endswith(".h")]
        for header_tags in tags(sorted(headers)).values():
            for tag in header_tags:
                where = namespace_scope(tag)
                if tag["kind"] == "macro":
                    macros.add(tag["name"])
                elif tag["kind"] in FUNCTION_KINDS and where and not where[1]:
                    declared[kind].add((where[0], tag["name"]))

    findings = []
    for target, paths in sorted(targets.items()):
        by_path = tags(paths)
        test_binary = any(os.path.realpath(p).startswith(tests_dir + "/")
                          for p in paths)
        in_headers = declared["agent"] | (declared["tests"] if test_binary
                                          else set())
        local = collections.defaultdict(list)  # (ns, name) -> [(path, tag)]
        external = collections.defaultdict(set)  # (ns, function) -> paths
        for path in paths:
            rel = os.path.relpath(path, source_dir)
            for tag in by_path.get(path, []):
                if tag["kind"] == "macro":
                    with open(path) as f:
                        undefined = re.search(
                            r"^\s*#\s*undef\s+" + re.escape(tag["name"]) + r"\b",
                            f.read(), re.M)
                    if not undefined:
                        findings.append(
                            f"{target}: {rel}: #define {tag['name']} is not "
                            f"#undef'd in the file: it reaches the files after "
                            f"it in a unity batch")
                    continue
                where = namespace_scope(tag)
                if (where is None or tag["name"] in MACRO_CALLS or
                        tag["name"] in macros):
                    continue
                key = (where[0], tag["name"])
                if where[1]:
                    local[key].append((rel, tag))
                elif tag["kind"] in FUNCTION_KINDS:
                    external[key].add(rel)
        for (ns, name), defs in sorted(local.items()):
            files = sorted({rel for rel, _ in defs})
            shown = f"{ns + '::' if ns else ''}{name}"
            aliases = {definition_text(t) for _, t in defs if t["kind"] in ALIAS_KINDS}
            same_alias = (len(aliases) == 1 and
                          all(t["kind"] in ALIAS_KINDS for _, t in defs))
            if len(files) > 1 and not same_alias:
                findings.append(f"{target}: {shown} is file-local in "
                                f"{' and '.join(files)}")
            if any(t["kind"] in FUNCTION_KINDS for _, t in defs):
                others = sorted(external.get((ns, name), set()) - set(files))
                if (ns, name) in in_headers:
                    findings.append(f"{target}: {shown} is file-local in "
                                    f"{' and '.join(files)} and declared in a "
                                    f"header")
                elif others:
                    findings.append(f"{target}: {shown} is file-local in "
                                    f"{' and '.join(files)} and defined in "
                                    f"{' and '.join(others)}")
    for finding in findings:
        print(f"unity_names: {finding} (rename one, or share it)")
    if not findings:
        count = sum(len(p) for p in targets.values())
        print(f"unity_names: no file-local name clash in {len(targets)} unity "
              f"targets ({count} files)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

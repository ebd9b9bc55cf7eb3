#!/bin/bash
# ctest unity_names: no file-local name clash in any unity-built target
# (unity_names.py says what a clash is), after a negative control: the
# files of unity_clash/, which clash in each way the check must catch, fail
# it with one line per clash.
# Usage: unity_names_test.sh SOURCE_DIR BUILD_DIR
set -u
src=$1
build=$2
lint=$src/tests/lint
if ! command -v ctags > /dev/null || ! ctags --version | grep -q 'Universal Ctags'; then
  echo "SKIP: universal-ctags is not installed (scripts/install-deps.sh --test installs it)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf 'control %s\ncontrol %s\n' "$lint/unity_clash/a.cc" \
  "$lint/unity_clash/b.cc" > "$tmp/control.txt"
python3 "$lint/unity_names.py" "$tmp/control.txt" --root "$src" \
  --tests "$lint/unity_clash" --test-headers "$lint/unity_clash" \
  > "$tmp/control.out" 2>&1
rc=$?
want="unity_names: control: gpuq::Format is file-local in tests/lint/unity_clash/a.cc and declared in a header (rename one, or share it)
unity_names: control: gpuq::Scale is file-local in tests/lint/unity_clash/a.cc and tests/lint/unity_clash/b.cc (rename one, or share it)
unity_names: control: gpuq::kShared is file-local in tests/lint/unity_clash/a.cc and tests/lint/unity_clash/b.cc (rename one, or share it)
unity_names: control: tests/lint/unity_clash/a.cc: #define LOCAL_MACRO is not #undef'd in the file: it reaches the files after it in a unity batch (rename one, or share it)"
if [ "$rc" != 1 ] || [ "$(sort "$tmp/control.out")" != "$(sort <<<"$want")" ]; then
  echo "FAIL: the negative control (exit $rc, want 1):"
  cat "$tmp/control.out"
  echo "want:"
  echo "$want"
  exit 1
fi
echo "ok: the negative control fails with its four clashes (the same alias in two files and b_only's Scale pass)"

python3 "$lint/unity_names.py" "$build/unity_sources.txt" --root "$src" \
  --tests "$src/tests" --headers "$src/agent" "$src/include/gpuq" \
  --test-headers "$src/tests/unit" "$src/tests/lib" "$src/tests/bpf" \
  "$src/tests/kernel/sim/check"

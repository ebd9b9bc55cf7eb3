#!/usr/bin/env bash
# Every C and C++ source the repository tracks is clang-formatted with the
# .clang-format nearest to it (Google style for C++, kernel style for bpf/,
# include/ and tests/bpf/progs/).
set -u
SRC=$1
. "$SRC/tests/lib/assert.sh"
if ! command -v clang-format > /dev/null; then
  echo "clang-format missing: install Debian's clang-format package"
  exit 1
fi
cd "$SRC" || exit 1
# Outside git (a tarball's tree) git lists nothing: every source found instead.
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.h' 2> /dev/null)
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(find agent bpf include tests bench examples -name '*.c' -o -name '*.cc' -o -name '*.h')
# One clang-format for every file: a process per file spent nearly all of
# this test's time starting clang-format (about 40 s against 1 s). Its exit
# status says whether any file is unformatted; its diagnostics
# ("FILE:LINE:COL: error: code should be clang-formatted") name which.
errors=$(clang-format --dry-run --Werror "${files[@]}" 2>&1 > /dev/null)
status=$?
declare -A unformatted=()
while IFS= read -r f; do
  [ -n "$f" ] && unformatted[$f]=1
done < <(printf '%s\n' "$errors" | sed -nE 's/^(.+):[0-9]+:[0-9]+: error: code should be clang-formatted.*/\1/p')
for f in "${files[@]}"; do
  if [ -n "${unformatted[$f]:-}" ]; then
    fail "$f is not clang-formatted (run: clang-format -i $f)"
  else
    pass "$f"
  fi
done
if [ "$status" -ne 0 ] && [ ${#unformatted[@]} -eq 0 ]; then
  fail "clang-format exited $status without naming an unformatted file" "$(printf '%s\n' "$errors" | head -n 5)"
fi
summary

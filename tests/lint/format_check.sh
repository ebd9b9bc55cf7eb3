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
cd "$SRC"
files=$(git ls-files '*.c' '*.cc' '*.h' 2> /dev/null || find agent bpf include tests bench examples -name '*.c' -o -name '*.cc' -o -name '*.h')
for f in $files; do
  if clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
    pass "$f"
  else
    fail "$f is not clang-formatted (run: clang-format -i $f)"
  fi
done
summary

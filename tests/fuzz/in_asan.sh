#!/usr/bin/env bash
# in_asan.sh ASAN_DIR CMD [ARGS...]: runs CMD, a binary or tier of the
# sanitizer build ASAN_DIR, once sanitize_build made it; skips (77) with the
# reason sanitize_build gave when the machine lacks what it needs.
set -u
DIR=$1
shift
if [ -f "$DIR/SKIPPED" ]; then
  echo "SKIP: $(cat "$DIR/SKIPPED")"
  exit 77
fi
if [ ! -f "$DIR/BUILT" ]; then
  echo "FAIL - no sanitizer build in $DIR: the sanitize_build test makes it" \
    "(ctest -R sanitize_build)"
  exit 1
fi
exec "$@"

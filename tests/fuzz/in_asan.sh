#!/usr/bin/env bash
# in_asan.sh ASAN_DIR [--collect NAME] CMD [ARGS...]: runs CMD, a binary or
# tier of the sanitizer build ASAN_DIR, once sanitize_build made it; skips
# (77) with the reason sanitize_build gave when the machine lacks what it
# needs.
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
if [ "${1:-}" != --collect ]; then
  exec "$@"
fi
# --collect NAME: every sanitizer report of every process CMD starts goes to
# a file of DIR/sanitizer-logs/NAME instead of stderr, and any such file
# fails the test, whatever the exit statuses were (a replay script that
# expects exit 1 from the agent would not notice an ASan abort otherwise).
logs=$DIR/sanitizer-logs/$2
shift 2
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$logs/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$logs/ubsan"
"$@"
rc=$?
reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  for f in $reports; do
    echo "==== $f"
    head -n 80 "$f"
  done
  echo "FAIL - sanitizer reports above (all in $logs)"
  exit 1
fi
exit "$rc"

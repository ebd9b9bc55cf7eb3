# Minimal assertions for the shell-driven tiers. Each check prints one line;
# the script's summary line is the plain "N passed, N failed" CI reads.
PASSED=0
FAILED=0
SKIPPED=0

pass() { PASSED=$((PASSED + 1)); echo "ok   - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/       /'; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip - $1"; }
# tally TEXT: TEXT's check lines (another process's ok/FAIL/skip lines),
# printed and counted as this script's own.
tally() {
  printf '%s\n' "$1"
  PASSED=$((PASSED + $(grep -c '^ok   - ' <<< "$1")))
  FAILED=$((FAILED + $(grep -c '^FAIL - ' <<< "$1")))
  SKIPPED=$((SKIPPED + $(grep -c '^skip - ' <<< "$1")))
}

# run CMD...: runs with a timeout, sets RC, OUT (stdout) and ERR (stderr).
run() {
  local o e
  o=$(mktemp) e=$(mktemp)
  timeout 60 "$@" >"$o" 2>"$e"
  RC=$?
  OUT=$(cat "$o")
  ERR=$(cat "$e")
  rm -f "$o" "$e"
}

# expect_rc NAME WANT: the last run exited WANT.
expect_rc() {
  if [ "$RC" = "$2" ]; then pass "$1 (exit $RC)"; else fail "$1: exit $RC, want $2" "$ERR"; fi
}

# expect_err_line NAME REGEX: stderr has a line matching REGEX.
expect_err() {
  if printf '%s\n' "$ERR" | grep -qE -- "$2"; then pass "$1"; else fail "$1: stderr lacks /$2/" "$ERR"; fi
}

expect_out() {
  if printf '%s\n' "$OUT" | grep -qE -- "$2"; then pass "$1"; else fail "$1: stdout lacks /$2/" "$OUT"; fi
}

# series_sum REGEX TEXT: the sum of the samples of TEXT (Prometheus text)
# whose line matches ^REGEX, or "absent" when no line does: a check for 0
# must not pass on a family that was renamed or is not exported at all.
series_sum() {
  printf '%s\n' "$2" | grep -E "^$1" | awk '{ s += $NF; n++ } END { if (n) print s + 0; else print "absent" }'
}

summary() {
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" = 0 ]
}

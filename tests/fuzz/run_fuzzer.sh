#!/usr/bin/env bash
# run_fuzzer.sh HARNESS ASAN_DIR SRC SECONDS [LIBFUZZER_FLAGS...]
# One run of HARNESS (tests/fuzz/HARNESS_fuzzer.cc, built in ASAN_DIR/fuzz)
# for SECONDS: first every seed (made by seeds.py from the repository's
# goldens and fixtures) and every committed regression input
# (tests/fuzz/regressions/HARNESS), then mutations. What the run finds worth
# keeping goes to a fresh directory, so the test's time does not grow from
# run to run; set GPUQ_FUZZ_CORPUS=DIR to keep (and start from) a corpus
# across longer runs (docs/fuzzing.md). A crash, a sanitizer
# report, a leak, a timeout or running out of memory fails the test; the
# input is left in ASAN_DIR/fuzz/artifacts/HARNESS and the command that
# reproduces it is printed (docs/fuzzing.md).
set -u
NAME=$1
DIR=$2
SRC=$3
SECONDS_=$4
shift 4
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
procs_init
FUZZER=$DIR/fuzz/${NAME}_fuzzer
WORK=$DIR/fuzz
SEEDS=$WORK/seeds/$NAME
CORPUS=${GPUQ_FUZZ_CORPUS:-$TMP/corpus}
ARTIFACTS=$WORK/artifacts/$NAME/
REGRESSIONS=$SRC/tests/fuzz/regressions/$NAME
mkdir -p "$CORPUS" "$ARTIFACTS"
python3 "$SRC/tests/fuzz/seeds.py" "$NAME" "$SEEDS" "$SRC" "$DIR/gpuq-gen-capture" ||
  { echo "FAIL - seeds for $NAME"; exit 1; }
dirs=("$CORPUS" "$SEEDS")
[ -d "$REGRESSIONS" ] && dirs+=("$REGRESSIONS")

flags=(-max_total_time="$SECONDS_" -timeout=25 -rss_limit_mb=2048
  -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$ARTIFACTS")
case $NAME in
  capture)
    # Every input is replayed, analyzed and rendered in full: small ones
    # keep the run at more than a handful of inputs per second.
    flags+=(-max_len=8192)
    ;;
  runtime_json)
    # Room for documents whose labels overflow a container_meta record.
    flags+=(-max_len=65536)
    ;;
  web_config)
    # server.crt, server.key and ca.crt for the configs to name.
    tls=$WORK/tls
    if [ ! -f "$tls/ca.crt" ] && command -v openssl > /dev/null; then
      mkdir -p "$tls"
      openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=gpuq-fuzz \
        -addext subjectAltName=DNS:localhost -keyout "$tls/server.key" \
        -out "$tls/server.crt" > /dev/null 2>&1 && cp "$tls/server.crt" "$tls/ca.crt"
    fi
    if [ -f "$tls/ca.crt" ]; then
      export GPUQ_FUZZ_TLS_DIR=$tls
    else
      echo "note: openssl missing, the TLS files are absent (TLS configs fail their file checks)"
    fi
    ;;
esac
# The harnesses that write their input to a file do it in memory when they can.
export TMPDIR=$TMP
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  TMPDIR=$(mktemp -d /dev/shm/gpuq-fuzz.XXXXXX)
  on_exit "rm -rf '$TMPDIR'"
fi
run_group "$FUZZER" "${flags[@]}" "$@" "${dirs[@]}" > "$TMP/log" 2>&1
rc=$RUN_RC
grep -E '^(INFO: (seed corpus|  [0-9]+ files found)|#[0-9]+ *(INITED|DONE))|stat::number_of_executed_units|stat::new_units_added' "$TMP/log"
if [ "$rc" = 0 ]; then
  pass "$NAME: $SECONDS_ s of fuzzing from ${#dirs[@]} corpus directories, nothing found"
else
  tail -n 60 "$TMP/log"
  crash=$(ls -t "$ARTIFACTS" 2> /dev/null | head -n 1)
  fail "$NAME fuzzer exited $rc" "reproduce: ASAN_OPTIONS=detect_leaks=1 $FUZZER $ARTIFACTS$crash (docs/fuzzing.md)"
fi
summary

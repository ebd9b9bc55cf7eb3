#!/usr/bin/env bash
# sanitize_build.sh SRC DIR: configures and builds the sanitizer build
# directory DIR (clang, -fsanitize=address,undefined, LeakSanitizer on,
# libFuzzer harnesses): only what the unit and replay tiers and the fuzzing
# harnesses need. Skips (77) when clang++ or its libFuzzer runtime is
# missing, and leaves the reason in DIR/SKIPPED for the tests that need it.
set -u
SRC=$1
DIR=$2
mkdir -p "$DIR"
rm -f "$DIR/SKIPPED" "$DIR/BUILT"
skip() {
  echo "SKIP: $1"
  echo "$1" > "$DIR/SKIPPED"
  exit 77
}
command -v clang++ > /dev/null || skip "clang++ missing: install Debian's clang package"
fuzzer_lib=$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a)
[ -f "$fuzzer_lib" ] || skip "libFuzzer (libclang_rt.fuzzer-x86_64.a) missing: install Debian's libclang-rt-14-dev"
asan_lib=$(clang++ -print-file-name=libclang_rt.asan-x86_64.a)
[ -f "$asan_lib" ] || skip "the ASan runtime (libclang_rt.asan-x86_64.a) missing: install Debian's libclang-rt-14-dev"
start=$(date +%s)
# -O1 with line tables: stacks with file:line, a fraction of -O2 -g's build
# time; Debug keeps assert() on. A fixed commit string: a new commit does
# not recompile and relink everything here (the goldens mask it anyway).
flags="-O1 -gline-tables-only"
# CMAKE_GENERATOR: the main build's, from the test's environment (Ninja
# from scripts/build.sh: 267 s instead of 313 s alone with Makefiles).
cmake -S "$SRC" -B "$DIR" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_C_FLAGS_DEBUG=$flags" "-DCMAKE_CXX_FLAGS_DEBUG=$flags" \
  -DGPUQ_GIT_COMMIT=sanitizer -DGPUQ_FUZZ=ON > "$DIR/configure.log" 2>&1 || {
  cat "$DIR/configure.log"
  echo "FAIL - configuring $DIR"
  exit 1
}
# Twice as many jobs as cores: in the suite this build is the host tiers'
# long pole (the sanitized tiers wait for it) while ctest runs another test
# beside it, and its share of the cores follows its share of the runnable
# processes.
cmake --build "$DIR" -j "$(($(nproc) * 2))" --target gpuq-agent gpuq-gen-capture \
  unit_tests sampler_tests queue_writer gpuq_fuzzers || {
  echo "FAIL - building $DIR"
  exit 1
}
touch "$DIR/BUILT"
echo "sanitizer build $DIR ready in $(($(date +%s) - start)) s"

#!/usr/bin/env bash
# The kernel compatibility table of docs/kernels.md, from the kernel tiers' own output:
# merges the rows the QEMU tier and the simulator tier wrote in their last
# run (sim_check compat-rows) into docs/compat-kernels.tsv and rewrites the
# docs/kernels.md's table between its markers. Run after the kernel tiers:
#   bash scripts/compat-table.sh [BUILD_DIR]
# Per tier and cell (series, probe tier, aspect): a cell the last run checked
# gets that run's result, any other keeps its row (and its date) from the TSV
# while the series' package is the same. So a default run, which checks some
# series' attach and verifier cells only, keeps the fired-real cells of the
# last run that checked them (GPUQ_KTEST_KERNELS=all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-${GPUQ_BUILD_DIR:-build}}
QEMU=$BUILD/tests/kernel/work/compat.tsv
SIM=$BUILD/tests/kernel/work-sim/compat.tsv
TSV=docs/compat-kernels.tsv
[ -s "$QEMU" ] || [ -s "$SIM" ] || {
  echo "compat-table: no rows in $QEMU or $SIM: run the kernel tiers first (ctest -L kernel)" >&2
  exit 1
}
new=$(mktemp)
trap 'rm -f "$new"' EXIT
# merge SIM-ROWS(1|0) RUN: RUN's rows of its aspects (fired-sim or the
# others), then the TSV's rows of those aspects for cells RUN lacks, unless
# RUN booted that series from another package.
merge() {
  awk -F'\t' -v sim="$1" 'FNR == 1 { file++ }
    (($4 == "fired-sim") == (sim == 1)) {
      cell = $1 FS $3 FS $4
      if (file == 1) { ran[cell] = 1; pkg[$1] = $2; print }
      else if (!(cell in ran) && (!($1 in pkg) || pkg[$1] == $2)) print
    }' "$2" "$TSV" 2> /dev/null || true
}
[ -f "$TSV" ] || : > "$TSV"
run_qemu=$QEMU run_sim=$SIM
[ -s "$QEMU" ] || run_qemu=/dev/null
[ -s "$SIM" ] || run_sim=/dev/null
{
  merge 0 "$run_qemu"
  merge 1 "$run_sim"
} | sort -t$'\t' -k1,1V -k3,3 -k4,4 -u > "$new"
cp "$new" "$TSV"
"$BUILD/tests/kernel/sim_check" compat-table "$TSV" > "$new"
awk -v table="$new" '
  /<!-- compat-table:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /<!-- compat-table:end -->/ { skip = 0 }
  !skip' docs/kernels.md > docs/kernels.md.new
mv docs/kernels.md.new docs/kernels.md
echo "compat-table: $(wc -l < "$TSV") rows in $TSV; docs/kernels.md table rewritten"

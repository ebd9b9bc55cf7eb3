#!/usr/bin/env bash
# The README's kernel compatibility table, from the kernel tiers' own output:
# merges the rows the QEMU tier and the simulator tier wrote in their last
# run (tests/kernel/compat.sh) into docs/compat-kernels.tsv and rewrites the
# README's table between its markers. Run after the kernel tiers:
#   bash scripts/compat-table.sh [BUILD_DIR]
# A tier without rows in BUILD_DIR keeps its aspects' rows from the TSV.
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
{
  if [ -s "$QEMU" ]; then cat "$QEMU"; else awk -F'\t' '$4 != "fired-sim"' "$TSV" 2> /dev/null || true; fi
  if [ -s "$SIM" ]; then awk -F'\t' '$4 == "fired-sim"' "$SIM"; else awk -F'\t' '$4 == "fired-sim"' "$TSV" 2> /dev/null || true; fi
} | sort -t$'\t' -k1,1V -k3,3 -k4,4 -u > "$new"
cp "$new" "$TSV"
tests/kernel/compat.sh table "$TSV" > "$new"
awk -v table="$new" '
  /<!-- compat-table:begin -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /<!-- compat-table:end -->/ { skip = 0 }
  !skip' README.md > README.md.new
mv README.md.new README.md
echo "compat-table: $(wc -l < "$TSV") rows in $TSV; README.md table rewritten"

#!/usr/bin/env bash
# The kernel compatibility table of docs/kernels.md is exactly what
# `sim_check compat-table` (CHECKER, tests/kernel/sim/check/compat.cc)
# renders from docs/compat-kernels.tsv, the kernel tiers' own rows
# (scripts/compat-table.sh writes both): a hand edit of the table fails here.
#   compat_table_check.sh SRC CHECKER
set -u
SRC=$1
CHECKER=$2
. "$SRC/tests/lib/assert.sh"
cd "$SRC"
want=$("$CHECKER" compat-table docs/compat-kernels.tsv)
got=$(awk '/<!-- compat-table:end -->/ { on = 0 } on { print } /<!-- compat-table:begin -->/ { on = 1 }' docs/kernels.md)
if [ -z "$got" ]; then
  fail "docs/kernels.md has no compat-table markers"
elif [ "$want" = "$got" ]; then
  pass "docs/kernels.md's compatibility table = sim_check compat-table docs/compat-kernels.tsv ($(wc -l < docs/compat-kernels.tsv) rows)"
else
  fail "docs/kernels.md's compatibility table differs from docs/compat-kernels.tsv (run scripts/compat-table.sh after the kernel tiers)" "$(diff <(echo "$want") <(echo "$got") | head -n 20)"
fi
summary

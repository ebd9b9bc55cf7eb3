#!/usr/bin/env bash
# The kernel-by-probe-tier compatibility table, made from the kernel tiers'
# own results (the GPUQ-KTEST markers of each guest), never by hand.
#
#   compat.sh rows qemu|sim LABEL PACKAGE LOG   TSV rows of one guest's log
#   compat.sh table TSV...                      the README's markdown table
#
# A row is: kernel, package (name version suite), tier, aspect, result,
# date. Aspects: attached (`check` in that tier: every hook attached or
# reported missing as the kernel lacks it), verifier (`check --verify`: all
# of the tier's programs accepted), fired-sim (the simulator tier's checks of
# that tier, every family equal to the simulator's truth), fired-real (a real
# KFD process's failed create and exit seen through the real amdgpu.ko).
# Result: yes (all passed), no (one failed), skip (skipped, with the guest's
# reason, e.g. a kernel whose KFD creates no process without a GPU).
set -u

# Which checks make each cell: "tier aspect regex..." per line, each an
# awk regex a check's name must match from its start.
qemu_cells() {
  cat << 'EOF'
btf-fentry attached ^check-fentry:
btf-fentry verifier ^check-verify:fentry
btf-fentry fired-real ^daemon-fentry:(create-failure|process-exit)
btf-kprobe attached ^check-kprobe: ^check-btf:
btf-kprobe verifier ^check-verify:kprobe
btf-kprobe fired-real ^daemon-(kprobe|btf):(create-failure|process-exit)
args-kprobe attached ^check-args: ^check-nobtf:
args-kprobe verifier ^check-verify:args-kprobe
args-kprobe fired-real ^daemon-(args|nobtf):(create-failure|process-exit)
tracepoint attached ^check-tp:
tracepoint verifier ^check-verify:tracepoint
tracepoint fired-real ^daemon-tp:(create-failure|process-exit)
EOF
}
# The simulator tier: each tier's lifecycle group, its programs group and
# its runtime clients' groups (rocr, hip-7.2-kprobe, rocblas-6.4-tp...).
sim_cells() {
  cat << 'EOF'
btf-fentry fired-sim ^fentry: ^programs-btf-fentry: ^(rocr|hip|rocblas)(-[0-9.]+)?:
btf-kprobe fired-sim ^kprobe: ^programs-btf-kprobe: ^(rocr|hip|rocblas)(-[0-9.]+)?-kprobe:
args-kprobe fired-sim ^args: ^programs-args-kprobe: ^(rocr|hip|rocblas)(-[0-9.]+)?-args:
tracepoint fired-sim ^tracepoint: ^programs-tracepoint: ^(rocr|hip|rocblas)(-[0-9.]+)?-tp:
EOF
}

rows() {
  local kind=$1 label=$2 package=$3 log=$4
  "${kind}_cells" | awk -v label="$label" -v pkg="$package" -v date="$(date -u +%F)" -v logfile="$log" '
    BEGIN {
      while ((getline line < logfile) > 0) {
        n = split(line, f, " ")
        if (f[1] == "GPUQ-KTEST" && f[2] == label) status[f[3]] = f[4]
      }
    }
    {
      tier = $1; aspect = $2; pass = fail = skip = 0
      for (check in status)
        for (i = 3; i <= NF; i++)
          if (check ~ $i) {
            if (status[check] == "PASS") pass++
            else if (status[check] == "SKIP") skip++
            else fail++
          }
      result = fail ? "no" : pass ? "yes" : skip ? "skip" : ""
      if (result != "") printf "%s\t%s\t%s\t%s\t%s\t%s\n", label, pkg, tier, aspect, result, date
    }'
}

# table TSV...: one row per kernel (newest package row wins), one column per
# tier; a cell lists the aspects verified.
table() {
  cat "$@" | sort -t$'\t' -k1,1V -k3,3 -k4,4 | awk -F'\t' '
    function sym(r) { return r == "yes" ? "yes" : r == "no" ? "**no**" : r == "skip" ? "skip" : "-" }
    {
      k = $1; if (!(k in seen)) { order[++n] = k; seen[k] = 1 }
      pkg[k] = $2; cell[k, $3, $4] = $5
      if ($6 > date[k]) date[k] = $6
    }
    END {
      split("btf-fentry btf-kprobe args-kprobe tracepoint", tiers, " ")
      split("attached verifier fired-sim fired-real", aspects, " ")
      printf "| kernel | package | btf-fentry | btf-kprobe | args-kprobe | tracepoint | date |\n"
      printf "|---|---|---|---|---|---|---|\n"
      for (i = 1; i <= n; i++) {
        k = order[i]
        line = "| " k " | " pkg[k]
        for (t = 1; t <= 4; t++) {
          c = ""
          for (a = 1; a <= 4; a++) c = c (a > 1 ? " / " : "") sym(cell[k, tiers[t], aspects[a]])
          line = line " | " c
        }
        printf "%s | %s |\n", line, date[k]
      }
    }'
}

case ${1:-} in
  rows) [ $# = 5 ] && rows "$2" "$3" "$4" "$5" ;;
  table)
    shift
    [ $# -ge 1 ] && table "$@"
    ;;
  *)
    echo "usage: $0 rows qemu|sim LABEL PACKAGE LOG | table TSV..." >&2
    exit 2
    ;;
esac

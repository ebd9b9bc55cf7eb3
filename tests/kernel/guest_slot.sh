#!/usr/bin/env bash
# guest_slot.sh CMD...: runs CMD (one TCG guest) once one of the machine's
# guest slots is free, and holds the slot until CMD ends. The kernel tiers
# (run_qemu_tier.sh, run_sim_tier.sh) run side by side and share the slots:
# each guest is one busy vCPU, so more guests than cores only slow every one
# down, and each tier alone leaves a core idle while its last guest runs.
#
# Environment: GPUQ_KTEST_JOBS (slots; default nproc), GPUQ_GUEST_SLOTS
# (their lock directory; default /run/lock/gpuq-guest-slots),
# GPUQ_GUEST_SLOT_RANK=N (default 0): how long this guest is expected to run
# (the tiers give each guest its seconds of a measured run). While a live
# waiter of a higher rank waits, this one does: of the guests waiting, the
# longest takes the next free slot, across both tiers, so that no long guest
# is left to run alone at the end.
#
# CMD runs at nice 0 whatever this script was started at: the tiers run their
# host-side work (downloads, unpacking, initramfs and module builds, judging)
# at nice 10 (run_qemu_tier.sh, run_sim_tier.sh), so with both tiers side by
# side that work takes what the guests leave, not a guest's core. A TCG
# guest's clock runs on while its vCPU thread waits for a core: a preemption
# window once grew 31 ms when the other tier's host work ran beside the
# guests at the same priority.
#
# Exits with CMD's status. A slot is an flock on slot.N, held by this shell's
# descriptor and the ones CMD inherits, so it is freed however they end.
# A waiter of rank N > 0 marks itself with rank.PID holding N.
#
# guest_slot.sh --mark PID: prints the path of PID's mark, for a tier that
# holds the slots for its next guest from its start (qemu_lib.sh
# slots_hold: the mark of a live PID, honoured as a waiter's).
# GPUQ_GUEST_SLOT_HANDOFF=MARK: the tier's mark, handed on once this guest's
# own is in place, so that no other guest can take a slot between the two:
# set to GPUQ_GUEST_SLOT_NEXT (the rank of the tier's next guest), or
# removed where that is empty (the tier's last guest; qemu_lib.sh
# run_guests).
set -u
dir=${GPUQ_GUEST_SLOTS:-/run/lock/gpuq-guest-slots}
jobs=${GPUQ_KTEST_JOBS:-$(nproc)}
rank=${GPUQ_GUEST_SLOT_RANK:-0}
if [ $# -eq 0 ] || { [ "$1" = --mark ] && [ $# != 2 ]; } || ! [[ $rank =~ ^[0-9]+$ ]]; then
  echo "usage: [GPUQ_GUEST_SLOT_RANK=N] $0 CMD... | $0 --mark PID" >&2
  exit 2
fi
mkdir -p "$dir" || exit 2
mark_of() { echo "$dir/rank.$1"; }
if [ "$1" = --mark ]; then
  mark_of "$2"
  exit 0
fi
wants=""
if [ "$rank" -gt 0 ]; then
  wants=$(mark_of $$)
  echo "$rank" > "$wants" || exit 2
  trap 'rm -f "$wants"' EXIT
fi
if [ -n "${GPUQ_GUEST_SLOT_HANDOFF:-}" ]; then
  if [ -n "${GPUQ_GUEST_SLOT_NEXT:-}" ]; then
    echo "$GPUQ_GUEST_SLOT_NEXT" > "$GPUQ_GUEST_SLOT_HANDOFF"
  else
    rm -f "$GPUQ_GUEST_SLOT_HANDOFF"
  fi
fi

# A live waiter of a higher rank than this one's (the stale mark of a
# killed waiter is removed).
higher_waiting() {
  local f pid r
  for f in "$dir"/rank.*; do
    [ -e "$f" ] || continue
    [ "$f" = "$wants" ] && continue
    pid=${f##*.}
    if ! kill -0 "$pid" 2> /dev/null; then
      rm -f "$f"
      continue
    fi
    r=$(cat "$f" 2> /dev/null)
    [[ $r =~ ^[0-9]+$ ]] && [ "$r" -gt "$rank" ] && return 0
  done
  return 1
}

while :; do
  if ! higher_waiting; then
    for ((i = 0; i < jobs; i++)); do
      exec {fd}> "$dir/slot.$i" || exit 2
      if flock -n "$fd"; then
        [ -n "$wants" ] && rm -f "$wants"
        # Lowering niceness needs root; without it nice says so and runs
        # CMD at this script's niceness.
        nice -n "$((-$(nice)))" "$@"
        exit $?
      fi
      exec {fd}>&-
    done
  fi
  sleep 0.5
done

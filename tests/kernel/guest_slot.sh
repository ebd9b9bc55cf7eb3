#!/usr/bin/env bash
# guest_slot.sh CMD...: runs CMD (one TCG guest) once one of the machine's
# guest slots is free, and holds the slot until CMD ends. The kernel tiers
# (run_qemu_tier.sh, run_sim_tier.sh) run side by side and share the slots:
# each guest is one busy vCPU, so more guests than cores only slow every one
# down, and each tier alone leaves a core idle while its last guest runs.
#
# Environment: GPUQ_KTEST_JOBS (slots; default nproc), GPUQ_GUEST_SLOTS
# (their lock directory; default /run/lock/gpuq-guest-slots),
# GPUQ_GUEST_SLOT_FIRST=1: this guest is long (the simulator tier's), so
# guests without it wait while one with it waits, and the longest work
# starts first.
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
#
# guest_slot.sh --mark PID: prints the path of PID's waiting mark (the
# directory made), for a tier that holds the slots first from its start
# (qemu_lib.sh slots_first_hold): while a file there names a live PID,
# guests without GPUQ_GUEST_SLOT_FIRST wait. GPUQ_GUEST_SLOT_HANDOFF=MARK
# (with GPUQ_GUEST_SLOT_FIRST=1): the tier's mark, removed once this
# guest's own is in place, so that no other guest can take a slot between
# the two (qemu_lib.sh run_guests hands it to the tier's last guest).
set -u
dir=${GPUQ_GUEST_SLOTS:-/run/lock/gpuq-guest-slots}
jobs=${GPUQ_KTEST_JOBS:-$(nproc)}
first=${GPUQ_GUEST_SLOT_FIRST:-0}
if [ $# -eq 0 ] || { [ "$1" = --mark ] && [ $# != 2 ]; }; then
  echo "usage: $0 CMD... | $0 --mark PID" >&2
  exit 2
fi
mkdir -p "$dir" || exit 2
mark_of() { echo "$dir/first.$1"; }
if [ "$1" = --mark ]; then
  mark_of "$2"
  exit 0
fi
wants=""
if [ "$first" = 1 ]; then
  wants=$(mark_of $$)
  : > "$wants" || exit 2
  trap 'rm -f "$wants"' EXIT
  [ -z "${GPUQ_GUEST_SLOT_HANDOFF:-}" ] || rm -f "$GPUQ_GUEST_SLOT_HANDOFF"
fi

# Another live guest marked first is waiting (a stale mark of a killed
# waiter is removed).
first_waiting() {
  local f pid
  for f in "$dir"/first.*; do
    [ -e "$f" ] || continue
    pid=${f##*.}
    [ "$f" = "$wants" ] && continue
    if kill -0 "$pid" 2> /dev/null; then return 0; fi
    rm -f "$f"
  done
  return 1
}

while :; do
  if [ "$first" = 1 ] || ! first_waiting; then
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

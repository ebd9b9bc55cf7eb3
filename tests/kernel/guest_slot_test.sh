#!/usr/bin/env bash
# guest_slot.sh: never more commands at once than slots, every command runs
# and gets its exit status back, of the waiters the one of the highest rank
# (GPUQ_GUEST_SLOT_RANK, a guest's expected seconds) takes the next free
# slot whenever it started waiting, a tier's mark (qemu_lib.sh slots_hold)
# stands for its next guest and its last guest takes it over (run_guests),
# and every command runs at nice 0 (the tiers' host work runs at nice 10). Commands here are sleeps standing
# in for TCG guests; the kernel tiers run the real ones through it.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/lib/procs.sh"
SLOT=$SRC/tests/kernel/guest_slot.sh
procs_init # every command started below is stopped at exit; TMP removed
T=$TMP
export GPUQ_GUEST_SLOTS=$T/slots GPUQ_KTEST_JOBS=2

# job NAME SECONDS RC: appends "start NAME", sleeps, appends "end NAME".
job() { echo "sh -c 'echo start $1 >> $T/log; sleep $2; echo end $1 >> $T/log; exit $3'"; }

# order_with_plain_waiter DELAY [VAR=VALUE...]: the tier just started
# (BG_PID); DELAY s later a plain waiter (job "plain", with the VARs); once
# both ended, ORDER is the log.
order_with_plain_waiter() {
  local tier=$BG_PID plain
  sleep "$1"
  shift
  start_bg env "$@" bash -c "$SLOT $(job plain 0 0)"
  plain=$BG_PID
  wait "$plain"
  wait "$tier"
  order=$(tr '\n' ' ' < "$T/log")
}

# Three commands on two slots: at most two at once, each one's status kept.
pids=()
for n in a b c; do
  rc=0
  [ $n = b ] && rc=7
  start_bg bash -c "$SLOT $(job $n 1 $rc)"
  pids+=("$BG_PID")
done
rcs=""
for p in "${pids[@]}"; do
  wait "$p"
  rcs="$rcs $?"
done
most=$(awk '$1 == "start" { n++ } $1 == "end" { n-- } n > m { m = n } END { print m }' "$T/log")
ran=$(grep -c '^end' "$T/log")
if [ "$most" = 2 ] && [ "$ran" = 3 ] && [ "$rcs" = " 0 7 0" ]; then
  pass "3 commands on 2 slots: at most $most at once, all $ran ran, statuses$rcs"
else
  fail "3 commands on 2 slots" "at most $most at once, $ran ran, statuses$rcs; log: $(tr '\n' ';' < "$T/log")"
fi

# Both slots busy; a plain waiter, then one of rank 50, then one of rank
# 100: they start in the order of their ranks, not of their waits.
: > "$T/log"
start_bg bash -c "$SLOT $(job x 2 0)"
start_bg bash -c "$SLOT $(job y 2 0)"
sleep 0.5
start_bg bash -c "$SLOT $(job plain 0 0)"
plain=$BG_PID
sleep 0.4
start_bg env GPUQ_GUEST_SLOT_RANK=50 bash -c "$SLOT $(job fifty 0 0)"
fifty=$BG_PID
sleep 0.4
start_bg env GPUQ_GUEST_SLOT_RANK=100 bash -c "$SLOT $(job hundred 0 0)"
hundred=$BG_PID
wait "$plain"
wait "$fifty"
wait "$hundred"
order=$(sed -n 's/^start \(plain\|fifty\|hundred\)$/\1/p' "$T/log" | tr '\n' ' ')
if [ "$order" = "hundred fifty plain " ]; then
  pass "waiters take the free slots by rank, the highest first, whenever they began to wait"
else
  fail "waiters take the free slots by rank" "started in the order: $order; log: $(tr '\n' ';' < "$T/log")"
fi
leftover=$(find "$T/slots" -name 'rank.*' | wc -l)
if [ "$leftover" = 0 ]; then
  pass "no waiting mark is left behind"
else
  fail "no waiting mark is left behind" "$(ls "$T/slots")"
fi

# A tier whose guests are the longest (the simulator's) holds the cores from
# its start (qemu_lib.sh slots_hold): a waiter of a lower rank finds both
# slots free yet waits until the tier releases its mark, as its last guest
# does once it holds a slot.
: > "$T/log"
start_bg bash -c "SRC=$SRC WORK=$T CACHE=$T; . $SRC/tests/lib/assert.sh; \
  . $SRC/tests/kernel/qemu_lib.sh; slots_hold 100; echo held >> $T/log; sleep 1.5; \
  echo released >> $T/log; slots_release; sleep 0.5"
order_with_plain_waiter 0.5 GPUQ_GUEST_SLOT_RANK=99
if [ "$order" = "held released start plain end plain " ]; then
  pass "a plain waiter leaves free slots to a tier holding them first until it releases them"
else
  fail "a plain waiter leaves free slots to a tier holding them first" "log: $order"
fi
leftover=$(find "$T/slots" -name 'rank.*' | wc -l)
if [ "$leftover" = 0 ]; then
  pass "the tier's mark is gone once released"
else
  fail "the tier's mark is gone once released" "$(ls "$T/slots")"
fi

# The tier's last guest takes its mark over (qemu_lib.sh run_guests,
# GPUQ_GUEST_SLOT_HANDOFF). One slot, the tier's two guests and a plain
# waiter waiting from the start: the last guest's guest_slot.sh starts 0.7 s
# after run_guests started it (at nice 10 beside two busy guests it can),
# yet the plain waiter does not take the slot meant for it, and the tier's
# mark is gone once that guest holds the slot, while the tier still runs.
: > "$T/log"
cat > "$T/tier.sh" << 'EOF'
WORK=$T CACHE=$T
. "$SRC/tests/lib/assert.sh"
. "$SRC/tests/kernel/qemu_lib.sh"
declare -A QEMU_PID QEMU_LOG QEMU_T0 QEMU_INITRD
late_start() {
  local label=$1
  QEMU_LOG[$label]=$T/$label.log QEMU_T0[$label]=$(now) QEMU_INITRD[$label]=$T/$label.none
  : > "$T/$label.log.raw"
  start_bg sh -c "sleep 0.7; exec $SLOT sh -c 'echo start $label >> $T/log; sleep 0.5; echo end $label >> $T/log'"
  QEMU_PID[$label]=$BG_PID
}
marks_after() { find "$T/slots" -name 'rank.*' | wc -l > "$T/marks-after-$1"; }
GUEST_RANK[g1]=100 GUEST_RANK[g2]=${G2_RANK:-100}
slots_hold 100
run_guests late_start marks_after g1 g2
EOF
start_bg env SRC="$SRC" T="$T" SLOT="$SLOT" GPUQ_KTEST_JOBS=1 \
  bash "$T/tier.sh" > "$T/tier.out" 2>&1
order_with_plain_waiter 0.3 GPUQ_KTEST_JOBS=1
if [ "$order" = "start g1 end g1 start g2 end g2 start plain end plain " ]; then
  pass "the tier's last guest takes the slot meant for it though its guest_slot.sh starts late"
else
  fail "the tier's last guest takes the slot meant for it" "log: $order; tier: $(tr '\n' ' ' < "$T/tier.out")"
fi
if [ "$(cat "$T/marks-after-g2" 2> /dev/null)" = 0 ]; then
  pass "the tier's mark is gone once its last guest holds a slot"
else
  fail "the tier's mark is gone once its last guest holds a slot" "marks while the tier judged g2: $(cat "$T/marks-after-g2" 2> /dev/null)"
fi

# The tier's mark stands for its next guest: the tier's second guest (rank
# 10) is shorter than a waiter of the other tier (rank 50), which takes the
# slot the first guest frees.
: > "$T/log"
start_bg env SRC="$SRC" T="$T" SLOT="$SLOT" GPUQ_KTEST_JOBS=1 G2_RANK=10 \
  bash "$T/tier.sh" > "$T/tier.out" 2>&1
order_with_plain_waiter 0.3 GPUQ_KTEST_JOBS=1 GPUQ_GUEST_SLOT_RANK=50
if [ "$order" = "start g1 end g1 start plain end plain start g2 end g2 " ]; then
  pass "a longer waiter of the other tier goes before the tier's next, shorter guest"
else
  fail "a longer waiter of the other tier goes before the tier's next, shorter guest" "log: $order; tier: $(tr '\n' ' ' < "$T/tier.out")"
fi

# A guest runs at nice 0 though its tier's host work runs at nice 10.
nice -n 10 "$SLOT" sh -c "nice > $T/niceness" 2> "$T/nice.err"
if [ "$(id -u)" != 0 ]; then
  skip "a command runs at nice 0 from a nice-10 tier: lowering niceness needs root (ran at $(cat "$T/niceness"))"
elif [ "$(cat "$T/niceness")" = 0 ]; then
  pass "a command runs at nice 0 from a nice-10 tier"
else
  fail "a command runs at nice 0 from a nice-10 tier" "niceness $(cat "$T/niceness"): $(cat "$T/nice.err")"
fi
summary

#!/bin/busybox sh
# /init of the QEMU kernel tier's guest (tests/kernel/run_qemu_tier.sh builds
# the initramfs and boots it). Loads the real amdgpu.ko (no GPU: /dev/kfd and a
# CPU-only topology), then runs the real gpuq-agent:
#   1. `gpuq-agent check` and `gpuq-agent check --no-fentry`: every hook must
#      be ATTACHED yes in fentry resp. kprobe mode;
#   2. `gpuq-agent record` around one /bin/kfdtest run (opens /dev/kfd, fails
#      one CREATE_QUEUE with a bad gpu_id: EINVAL, fails one DESTROY_QUEUE,
#      exits): the records must carry kfdtest's pid, comm and kfd_process;
#      and bpftool shows which kfd_node/kfd_dev flavor CO-RE kept;
#   3. the daemon in each mode around one kfdtest run: /metrics must show the
#      hooks attached as `check` said, one EINVAL failure, one process exit,
#      no queue, no drop.
# Every result is one console line the host parses:
#   GPUQ-KTEST <kernel> <check> PASS|FAIL <detail>
# Agent output goes to the log as "GPUQ-LOG <kernel> <group>| <line>", dmesg as
# "GPUQ-DMESG <kernel>| <line>", timings as "GPUQ-KTIME <kernel> <step> <uptime>".
# <kernel> comes from GPUQ_KERNEL on the kernel command line (init's env).
# shellcheck shell=dash
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
K=${GPUQ_KERNEL:-$(uname -r)}
# GPUQ_SCOPE=attach (run_qemu_tier.sh, the series a default run does not check
# in full): the attach and verifier checks of every probe tier only, no
# record and no daemon runs (the compatibility table's fired-real cells).
SCOPE=${GPUQ_SCOPE:-full}
PORT=9464
URL=http://127.0.0.1:$PORT/metrics
# The hooks to judge `check` and gpuq_probe_attached by, generated from the
# agent's hook table (tests/kernel/guest_hooks.cc; run_qemu_tier.sh puts it
# here): PROBES the lifecycle hooks, SCHED_PROBES the scheduler's (runlist,
# MES, eviction, attribution; entry + exit programs each), TP_PROBES the
# tracepoint tier's. "probe:function"; "probe:a|b": the function is a, or b
# on kernels that renamed it (the agent reports the one it attached to).
. /etc/gpuq-hooks.sh
PROBES="$PROBES $SCHED_PROBES"
# Hooks whose function this Debian build lacks (nm and BTF of amdgpu.ko,
# docs/kfd-probe-points.md 1a): `check` must report them missing. Hooks of
# secondary KFD contexts, which amdkfd has from 7.2 on: `check` must report
# them not needed before.
case $K in
  6.1) MISSING="mes_remove_v12 mes_remove_v12_1" ;;
  6.12 | 6.16 | 6.17 | 6.18) MISSING="mes_remove_v12_1" ;;
  *) MISSING="" ;;
esac
case $K in
  6.* | 7.0 | 7.1) NOT_NEEDED="context_exit" ;;
  *) NOT_NEEDED="" ;;
esac
is_missing() { case " $MISSING " in *" $1 "*) return 0 ;; esac; return 1; }
is_not_needed() { case " $NOT_NEEDED " in *" $1 "*) return 0 ;; esac; return 1; }

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null
mount -t debugfs nodev /sys/kernel/debug 2> /dev/null
mount -t cgroup2 none /sys/fs/cgroup
ip link set lo up
# On a kernel that preempts BPF programs (sched/preempt "full" or "lazy":
# Debian's from 6.16) every process of this guest runs SCHED_FIFO at one
# priority, inherited from init: a FIFO task is never preempted by an equal
# one, so none sits preempted inside a program while another enters it and
# the kernel skips no program (tests/kernel/sim/README.md, "Exact on a
# kernel that preempts programs"). no-drops then holds every drop reason,
# prog_skipped too, to 0. PREEMPT_MODEL: debugfs sched/preempt, "mode" the
# one in parentheses ("voluntary" on Debian's 6.1 and 6.12, "lazy" from 6.16).
PREEMPT_MODEL=$(cat /sys/kernel/debug/sched/preempt 2> /dev/null)
mode=$(echo "$PREEMPT_MODEL" | sed -n 's/.*(\([a-z]*\)).*/\1/p')
case $mode in
  full | lazy | rt) chrt -f -p 1 $$ || echo "GPUQ-LOG $K init| chrt -f -p 1 failed: programs may be skipped" ;;
esac

up() { cut -d' ' -f1 /proc/uptime; }
ktime() { echo "GPUQ-KTIME $K $1 $(up)"; }
result() { echo "GPUQ-KTEST $K $1 $2 $3"; }
pass() { result "$1" PASS "${2:-}"; }
fail() { result "$1" FAIL "${2:-}"; }
# dump GROUP FILE...: the files into the log, prefixed.
dump() {
  local group="$1" f
  shift
  for f in "$@"; do
    [ -s "$f" ] && sed "s/^/GPUQ-LOG $K $group| /" "$f"
  done
}
finish() {
  ktime finished
  dmesg > /tmp/dmesg.txt
  if grep -qE 'WARNING:|BUG:|Oops|Call Trace|general protection' /tmp/dmesg.txt; then
    fail kernel-clean "dmesg has a kernel warning or oops (see GPUQ-DMESG lines)"
  else
    pass kernel-clean "no WARNING/BUG/Oops in dmesg"
  fi
  sed "s/^/GPUQ-DMESG $K| /" /tmp/dmesg.txt
  echo "GPUQ-KTEST-DONE $K"
  sync
  poweroff -f
}

echo # the firmware's last line has no newline
ktime userspace-up
echo "GPUQ-INFO $K uname $(uname -r)"

# ---- amdgpu without a GPU ---------------------------------------------------
modprobe amdgpu > /tmp/modprobe.txt 2>&1
rc=$?
ktime modprobe-done
nodes=$(ls /sys/class/kfd/kfd/topology/nodes 2> /dev/null | tr '\n' ' ')
if [ $rc = 0 ] && [ -c /dev/kfd ] && [ -n "$nodes" ] && [ -e /sys/kernel/btf/amdgpu ]; then
  pass modprobe-amdgpu "rc=0 /dev/kfd present, topology nodes: $nodes, /sys/kernel/btf/amdgpu present"
else
  fail modprobe-amdgpu "rc=$rc kfd=$(ls -l /dev/kfd 2>&1) nodes='$nodes' btf=$(ls /sys/kernel/btf/amdgpu 2>&1)"
  dump modprobe /tmp/modprobe.txt
  finish
fi

# ---- can a process open /dev/kfd here? -------------------------------------
# From 7.2, amdkfd refuses to create a KFD process on a machine without a GPU
# node: open("/dev/kfd") fails with EINVAL and dmesg says "no gpu node!
# Cannot create KFD process". The checks that need a KFD process (kfdtest's
# failing create and its exit) are then skipped with that reason, counted as
# skips; everything else (attach, verifier, /metrics, stop) still runs.
KFD_REFUSES=""
gpu_nodes=$(cat /sys/class/kfd/kfd/topology/nodes/*/gpu_id 2> /dev/null | grep -vcx 0)
if ! (exec 3<> /dev/kfd) 2> /tmp/kfd-open.txt && grep -q 'Invalid argument' /tmp/kfd-open.txt &&
  [ "$gpu_nodes" = 0 ]; then
  # amdkfd's warning has no newline: a later record makes it readable
  echo "gpuq: /dev/kfd open tried" > /dev/kmsg
  nogpu=$(dmesg | grep -m 1 'no gpu node' | sed 's/^\[[^]]*\] //')
  KFD_REFUSES="amdkfd of $K creates no KFD process on a machine without a GPU node (open /dev/kfd: EINVAL with $gpu_nodes GPU nodes; dmesg: ${nogpu:-nothing})"
  echo "GPUQ-INFO $K $KFD_REFUSES"
fi
# with_process CHECK: false (and CHECK skipped, naming why) where KFD_REFUSES.
with_process() {
  [ -z "$KFD_REFUSES" ] && return 0
  result "$1" SKIP "$KFD_REFUSES"
  return 1
}

# ---- the agent binary runs at all (its ldd closure is complete) -------------
if v=$(/bin/gpuq-agent --version 2>&1); then pass agent-version "$v"; else fail agent-version "$v"; fi

# ---- the expected-missing set is what this kernel really lacks -------------
# hooks_check COMMAND ARGS...: a check of sim_check (tests/kernel/sim/check,
# each check's rules beside its code) against the hooks of this kernel.
hooks_check() { sim_check "$@" --probes "$PROBES" --missing "$MISSING" --not-needed "$NOT_NEEDED"; }
hooks_check hook-presence /proc/kallsyms

# ---- 1. gpuq-agent check, per mode -----------------------------------------
# check_mode LABEL MODE TIER FLAGS...: runs check; every present hook must be
# attached in MODE and TIER (checks check-LABEL:<probe>, :exit-code).
check_mode() {
  g=check-$1 want_mode=$2 want_tier=$3
  shift 3
  t0=$(up)
  timeout 240 /bin/gpuq-agent check "$@" > "/tmp/$g.out" 2> "/tmp/$g.err"
  rc=$?
  echo "GPUQ-INFO $K $g took $(awk -v a="$t0" -v b="$(up)" 'BEGIN{printf "%.1f", b-a}')s rc=$rc"
  dump "$g" "/tmp/$g.out" "/tmp/$g.err"
  hooks_check check-hooks "$g" "$want_mode" "$want_tier" $rc "/tmp/$g.out" "/tmp/$g.err"
}

ktime check-start
check_mode fentry fentry btf-fentry
check_mode kprobe kprobe btf-kprobe --no-fentry
check_mode args kprobe args-kprobe --probe-tier=args
sim_check check-preemption /tmp/check-fentry.out "$PREEMPT_MODEL"
ktime check-done

# check --verify: every fentry program of a function this kernel has, every
# kprobe and args-kprobe program and the tracepoint tier's, through this
# kernel's verifier against the real amdgpu BTF (a function the kernel lacks
# is named, not refused). One result per tier (the compatibility table's
# "verifier" column).
timeout 240 /bin/gpuq-agent check --verify > /tmp/check-verify.out 2> /tmp/check-verify.err
dump check-verify /tmp/check-verify.out /tmp/check-verify.err
hooks_check check-verify /tmp/check-verify.out /tmp/check-verify.err "$(uname -r)"

# ---- 3. the daemon + kfdtest, per mode --------------------------------------
# Not `wget -T`: Debian's busybox-static 1.35 wget segfaults with it.
scrape() { timeout 10 wget -q -O "$1" "$URL" 2> /dev/null; }

# stop_daemon PID: SIGTERM, then STOP_RESULT = "exit N" or "hung" (killed).
stop_daemon() {
  kill -TERM "$1" 2> /dev/null
  i=0
  while kill -0 "$1" 2> /dev/null && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if kill -0 "$1" 2> /dev/null; then
    STOP_RESULT=hung
    kill -KILL "$1"
    wait "$1"
  else
    wait "$1"
    STOP_RESULT="exit $?"
  fi
}

# exits FILE: the process exits in the metrics FILE (0 while unreadable).
exits() { sim_check sum "$1" gpuq_process_exits_total 2> /dev/null || echo 0; }
failures() { sim_check sum "$1" gpuq_queue_create_failures_total 2> /dev/null || echo 0; }

# daemon_mode LABEL MODE FLAGS...
daemon_mode() {
  [ "$SCOPE" = attach ] && return 0
  m=$1
  dmode=$2
  shift 2
  g=daemon-$m
  M="/tmp/$g.metrics"
  rm -f "$M"
  /bin/gpuq-agent --web.listen-address 127.0.0.1:$PORT "$@" > "/tmp/$g.out" 2> "/tmp/$g.err" &
  pid=$!
  t0=$(up)
  served=0
  while awk -v a="$t0" -v b="$(up)" 'BEGIN { exit !(b - a < 180) }'; do
    if scrape "$M"; then served=1; break; fi
    kill -0 $pid 2> /dev/null || break
    sleep 0.2
  done
  if [ $served = 1 ]; then
    pass "$g:serves" "/metrics answered after $(awk -v a="$t0" -v b="$(up)" 'BEGIN{printf "%.1f", b-a}')s"
  else
    fail "$g:serves" "no /metrics (agent alive: $(kill -0 $pid 2> /dev/null && echo yes || echo no)); stderr: $(tr '\n' ' ' < "/tmp/$g.err")"
    stop_daemon $pid
    dump "$g" "/tmp/$g.out" "/tmp/$g.err"
    return
  fi

  /bin/kfdtest > "/tmp/$g.kfdtest" 2>&1
  rc=$?
  dump "$g" "/tmp/$g.kfdtest"
  if ! with_process "$g:kfdtest"; then
    :
  elif [ $rc = 0 ]; then
    pass "$g:kfdtest" "$(grep -E 'create_queue|destroy_queue|get_version' "/tmp/$g.kfdtest" | tr '\n' ';')"
  else
    fail "$g:kfdtest" "kfdtest exit $rc: $(tr '\n' ';' < "/tmp/$g.kfdtest")"
  fi

  # Events go through the ring buffer: wait until both the failure and the
  # exit are in, then once more so a late duplicate would show.
  i=0
  [ -n "$KFD_REFUSES" ] && i=95 # nothing to wait for
  while [ $i -lt 100 ]; do
    scrape "$M"
    if [ "$(exits "$M")" != 0 ] && [ "$(failures "$M")" != 0 ]; then
      break
    fi
    sleep 0.2
    i=$((i + 1))
  done
  sleep 1
  scrape "$M"
  dump "$g-metrics" "$M"

  hooks_check daemon-metrics "$g" "$dmode" "/tmp/check-$m.out" "$M" "$(uname -r)" --no-process "$KFD_REFUSES"
  stop_daemon $pid
  case $STOP_RESULT in
    "exit 0") pass "$g:stops" "exit 0 after SIGTERM" ;;
    hung) fail "$g:stops" "still running 10s after SIGTERM (killed)" ;;
    *) fail "$g:stops" "$STOP_RESULT after SIGTERM" ;;
  esac
  dump "$g" "/tmp/$g.out" "/tmp/$g.err"
}

# ---- 2. what the kernel side reads: a capture of the same scenario ---------
# record_run: `gpuq-agent record` (fentry mode) around one kfdtest; checks the
# records field by field, and which kfd_node/kfd_dev flavor CO-RE chose.
record_run() {
  [ "$SCOPE" = attach ] && return 0
  g=record
  C=/tmp/run.gpuqcap
  # Raw, not zstd: sim_check capture-records reads the abi.h layouts.
  /bin/gpuq-agent record --compress none -o "$C" > "/tmp/$g.out" 2> "/tmp/$g.err" &
  pid=$!
  t0=$(up)
  # Attached = 5 BPF links for the lifecycle hooks (create_ioctl has entry
  # and exit programs), the exit read's one, context_exit's where amdkfd
  # has secondary contexts, plus entry and exit of every
  # scheduler hook present, plus the cgroup watcher's two raw tracepoints
  # (cgroup_mkdir and cgroup_rmdir, attached after the kfd hooks in every
  # live mode).
  want_links=8
  for pf in $SCHED_PROBES; do is_missing "${pf%%:*}" || want_links=$((want_links + 2)); done
  is_not_needed context_exit || want_links=$((want_links + 1)) # 7.2+: kfd_release
  links=0
  while awk -v a="$t0" -v b="$(up)" 'BEGIN { exit !(b - a < 180) }'; do
    links=$(grep -l '^link_type' /proc/$pid/fdinfo/* 2> /dev/null | wc -l)
    [ "$links" -ge $want_links ] && break
    kill -0 $pid 2> /dev/null || break
    sleep 0.5
  done
  /bin/kfdtest > "/tmp/$g.kfdtest" 2>&1
  kpid=$(awk '/^KFDTEST pid/ { print $3 }' "/tmp/$g.kfdtest")
  sleep 2

  # what CO-RE relocated in the loaded programs (core-flavor, core-sched)
  bpftool btf dump file /sys/kernel/btf/amdgpu format raw > /tmp/amdgpu.btf 2> /dev/null
  bpftool prog dump xlated name fentry_kfd_procfs_add_queue > "/tmp/$g.xlated" 2>&1
  bpftool prog dump xlated name fentry_unmap_queues_cpsch > "/tmp/$g.xlated-unmap" 2>&1
  sim_check core-relocations /tmp/amdgpu.btf "/tmp/$g.xlated" "/tmp/$g.xlated-unmap"

  stop_daemon $pid
  dump "$g" "/tmp/$g.out" "/tmp/$g.err" "/tmp/$g.kfdtest"
  if [ "$links" = $want_links ] && [ "$STOP_RESULT" = "exit 0" ] && [ -s "$C" ]; then
    pass "$g:runs" "attached ($links BPF links), $STOP_RESULT after SIGTERM, $(tr '\n' ' ' < "/tmp/$g.err")"
  else
    fail "$g:runs" "links=$links (want $want_links), $STOP_RESULT after SIGTERM, capture $(wc -c < "$C" 2> /dev/null) bytes; stderr: $(tr '\n' ' ' < "/tmp/$g.err")"
  fi
  sim_check capture-records "$C" "$kpid" "/tmp/$g.decoded" --no-process "$KFD_REFUSES"
  dump record-decoded "/tmp/$g.decoded"
}

ktime record-start
record_run
ktime daemon-start
daemon_mode fentry fentry
daemon_mode kprobe kprobe --no-fentry
# The BTF-free tier, forced on this kernel (its amdgpu has BTF): every hook
# attaches with its args-only body; the failing create and the exit are seen.
daemon_mode args kprobe --probe-tier=args

# ---- amdgpu without BTF (what amdgpu-dkms hosts run) -------------------------
# The host put a copy of amdgpu.ko with its .BTF section removed at
# /nobtf/amdgpu.ko: reload it, so /sys/kernel/btf/amdgpu is absent, and the
# planner must choose args-kprobe for every hook on its own.
ktime nobtf-start
rmmod amdgpu > /tmp/nobtf.txt 2>&1 && insmod /nobtf/amdgpu.ko >> /tmp/nobtf.txt 2>&1
rc=$?
if [ $rc = 0 ] && [ -c /dev/kfd ] && [ ! -e /sys/kernel/btf/amdgpu ] && [ -d /sys/class/kfd/kfd/topology/nodes ]; then
  pass nobtf-reload "amdgpu reloaded without BTF: /sys/kernel/btf/amdgpu absent, /dev/kfd present"
  check_mode nobtf kprobe args-kprobe
  daemon_mode nobtf kprobe
  # --btf: the types the module lacks, from a file (the section the host
  # removed, as split BTF over vmlinux): every hook back on its BTF body,
  # on kprobes (libbpf's btf_custom_path serves CO-RE, not trampolines).
  check_mode btf kprobe btf-kprobe --btf /nobtf/amdgpu.btf
  daemon_mode btf kprobe --btf /nobtf/amdgpu.btf
else
  fail nobtf-reload "rc=$rc btf=$(ls /sys/kernel/btf/amdgpu 2>&1) kfd=$(ls -l /dev/kfd 2>&1): $(tr '\n' ' ' < /tmp/nobtf.txt)"
fi
ktime nobtf-done

# ---- kprobes disabled: the tracepoint tier ------------------------------------
# A kernel that refuses kprobes: disarm them all. The feature probe sees a
# kprobe that attaches but never fires, so nothing carries creates but the
# raw syscall tracepoints; they must attach, and the failing create and the
# exit must be seen through them.
ktime tp-start
if echo 0 > /sys/kernel/debug/kprobes/enabled 2> /tmp/tp.txt; then
  pass kprobes-off "kprobes disarmed (/sys/kernel/debug/kprobes/enabled = 0)"
  SAVED_PROBES=$PROBES SAVED_MISSING=$MISSING
  PROBES=$TP_PROBES MISSING=""
  check_mode tp tracepoint tracepoint
  daemon_mode tp tracepoint
  PROBES=$SAVED_PROBES MISSING=$SAVED_MISSING
  echo 1 > /sys/kernel/debug/kprobes/enabled
else
  fail kprobes-off "cannot disarm kprobes: $(cat /tmp/tp.txt)"
fi
ktime tp-done
finish

"""Checks `gpuq-agent report --output perfetto` of examples/default.gpuqcap.

Against the capture's figures (examples/README.md, worked out by hand):
6 runlist unmaps summing 9.003142345 s, 6 maps, 3 evictions of 0.15, 2.3 and
0.04 s (2.49 s), 43 live queues at the end (per GPU: 7 on 23710, 1 on
47101, 5 on each of the other seven), 55 queues (54 created + 1 seeded),
10 processes that held queues, 9 GPUs; vllm's queues 4 times off the GPU,
12.789274012 s in all. And the trace-event format: every
event has name, ph, ts, pid, tid; X has dur; C and M have args; X events on
one thread never overlap. Usage: check_perfetto.py TRACE.json
Prints one line per check and "N passed, N failed".
"""
import json
import sys
from collections import defaultdict

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   - {what}")
    else:
        failed += 1
        print(f"FAIL - {what}" + (f": {detail}" if detail else ""))


doc = json.load(open(sys.argv[1], encoding="utf-8"))
events = doc.get("traceEvents")
check(isinstance(events, list) and events, "traceEvents is a non-empty list")
check(doc.get("displayTimeUnit") == "ms", "displayTimeUnit is ms")

missing = [e for e in events if any(k not in e for k in ("name", "ph", "ts", "pid", "tid"))]
check(not missing, "every event has name, ph, ts, pid, tid", str(missing[:2]))
bad_x = [e for e in events if e["ph"] == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0)]
check(not bad_x, "every X event has a duration >= 0", str(bad_x[:2]))
bad_c = [e for e in events if e["ph"] in ("C", "M") and not (isinstance(e.get("args"), dict) and e["args"])]
check(not bad_c, "every C and M event has args", str(bad_c[:2]))
phases = sorted({e["ph"] for e in events})
check(phases == ["C", "M", "X"], "phases are C, M, X", str(phases))

names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
x = [e for e in events if e["ph"] == "X"]
by_cat = defaultdict(list)
for e in x:
    by_cat[e.get("cat")].append(e)

# An MES queue removal counts as an unmap, an MES add as a map (README).
unmaps = [e for e in by_cat["runlist"] if e["name"].startswith(("unmap", "mes remove"))]
maps = [e for e in by_cat["runlist"] if not e["name"].startswith(("unmap", "mes remove"))]
check(len(unmaps) == 6, "6 runlist unmaps", str(len(unmaps)))
check(len(maps) == 6, "6 runlist maps", str(len(maps)))
unmap_sum = sum(e["dur"] for e in unmaps)
check(abs(unmap_sum - 9003142.345) < 0.01, "unmaps sum to 9.003142345 s", f"{unmap_sum} us")
unmap_durs = sorted(round(e["dur"], 3) for e in unmaps)
check(unmap_durs == [60.0, 120.0, 140.0, 310.0, 2100.0, 9000412.345],
      "unmap durations 60, 120, 140, 310 us, 2.1 ms, 9.000412345 s", str(unmap_durs))
map_durs = sorted(round(e["dur"], 3) for e in maps)
check(map_durs == [85.0, 90.0, 95.0, 150.0, 180.0, 400.0],
      "map durations 85, 90, 95, 150, 180, 400 us", str(map_durs))
hang = [e for e in unmaps if e["dur"] > 9e6]
check(len(hang) == 1 and names.get(hang[0]["pid"], "").endswith("64512"),
      "the 9 s hang is on GPU 64512's process",
      str([(names.get(e["pid"]), e["name"]) for e in hang]))

ev = by_cat["eviction"]
ev_durs = sorted(round(e["dur"] / 1e6, 6) for e in ev)
check(ev_durs == [0.04, 0.15, 2.3], "3 evictions of 0.04, 0.15 and 2.3 s", str(ev_durs))
check(abs(sum(ev_durs) - 2.49) < 1e-6, "evictions total 2.49 s", str(sum(ev_durs)))
ev_gpus = sorted(names.get(e["pid"], "?").rsplit(" ", 1)[-1] for e in ev)
check(ev_gpus == ["11437", "47101", "64512"], "evictions on GPUs 11437, 47101, 64512", str(ev_gpus))

queues = by_cat["queue"]
check(len(queues) == 55, "55 queue lifetimes (54 created + 1 seeded)", str(len(queues)))
queue_pids = {e["pid"] for e in queues}
check(len(queue_pids) == 10, "10 OS processes held queues", str(len(queue_pids)))

# Off-GPU windows of the victims (the report's model: as /metrics'
# gpuq_queue_preempted_seconds_total, tests/replay/golden/default.prometheus):
# vllm's queues, 3 times on GPU 11437 by other containers' eviction,
# restore and exit, once on 64512 by its own destroy, whose unmap hung.
off = by_cat["preemption"]
check(len(off) == 4 and {e["name"] for e in off} == {"off GPU: vllm"},
      "4 off-GPU windows, all vllm's", str([e["name"] for e in off]))
off_gpus = sorted(names.get(e["pid"], "?").rsplit(" ", 1)[-1] for e in off)
check(off_gpus == ["11437", "11437", "11437", "64512"],
      "off GPU 3 times on 11437, once on 64512", str(off_gpus))
check(abs(sum(e["dur"] for e in off) / 1e6 - 12.789274012) < 1e-6,
      "off GPU 12.789274012 s in all", str(sum(e["dur"] for e in off) / 1e6))
check(sorted(e["args"]["caused_by"] for e in off) == ["other", "other", "other", "self"],
      "3 by others' operations, 1 by its own", str([e["args"] for e in off]))
# The oversubscribed runlist (examples/README.md, gpuq_runlist_oversubscribed*):
# GPU 11437's restore map built 5 compute queues for 4 CP slots, from its
# return (10.175158646 s) to the start of the terminate unmap.
over = by_cat.get("oversubscription", [])
check(len(over) == 1 and over[0]["name"] == "oversubscribed: compute_queues 5/4",
      "one oversubscribed window, compute_queues 5/4", str(over))
if over:
    check(names.get(over[0]["pid"], "?").endswith("gpu 11437"),
          "the window is on GPU 11437's track", names.get(over[0]["pid"], "?"))
    check(abs(over[0]["ts"] / 1e6 - 10.175158646) < 1e-6 and
          abs(over[0]["dur"] / 1e6 - 0.827847943) < 1e-6,
          "from 10.175158646 s for 0.827847943 s", str(over[0]))
    check(over[0]["args"] == {"processes": "2/8", "compute_queues": "5/4",
                              "gws_queues": "0/1"},
          "its args are each count against its limit", str(over[0]["args"]))
check(set(by_cat) == {"runlist", "eviction", "queue", "preemption", "oversubscription"},
      "X categories are runlist, eviction, queue, preemption, oversubscription",
      str(set(by_cat)))

# Live queues at the end: the last "live queues" counter of every GPU.
last = {}
for e in sorted((e for e in events if e["ph"] == "C" and e["name"] == "live queues"), key=lambda e: e["ts"]):
    last[e["pid"]] = e["args"]["queues"]
end = {names.get(pid, "?").rsplit(" ", 1)[-1]: v for pid, v in last.items()}
check(sum(end.values()) == 43, "43 live queues at the end (last counter per GPU)", str(end))
want_end = {g: 5 for g in ("11437", "30584", "39261", "48090", "52417", "60833", "64512")}
want_end.update({"23710": 7, "47101": 1})
check(end == want_end, "live queues per GPU at the end: 7 on 23710, 1 on 47101, 5 on the others", str(end))
gpu_procs = [n for n in names.values() if ": gpu " in n]
check(len(gpu_procs) == 9, "9 GPU processes", str(gpu_procs))

# X events on one thread never overlap (viewers only nest them).
threads = defaultdict(list)
for e in x:
    threads[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
overlaps = 0
for spans in threads.values():
    spans.sort()
    overlaps += sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1])
check(overlaps == 0, "no two X events overlap on one thread", str(overlaps))
thread_names = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
check(set(threads) <= thread_names, "every thread with slices has a name")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

# Compares the agent's metrics with the simulator's ground truth (busybox awk).
#
#   awk -v fams="gpuq_queues gpuq_queue_creates_total" [-v only=CONTAINER] -f compare.awk INPUT
#
# With only set, the series of that container label alone are compared (a
# client run's thunk truth knows its own container, the agent every one).
# Every series must equal the truth exactly: there is no allowance for
# dropped events (a destroy reconciliation got ahead of is still counted as
# a destroy, docs/reconciliation.md).
# INPUT holds tagged lines:
#   QTYPE <kfd_queue_type> <label>    the label of a queue type (the real
#                                     module's enumerator name, from
#                                     /sys/kernel/debug/kfd_sim/queue_types);
#                                     before any truth line
#   GPU <gpu_id>                      a gpu_id of the topology
#   CG <cgroup id> <container label>  (label "-" = host, container="")
#   BASE <truth line>                 truth when the agent started (counters)
#   NOW <truth line>                  truth now
#   MET <exposition line>             the agent's /metrics (or --once -o prometheus)
# Truth lines are "<what> <gpu_id> <a> <b> <cgroup> <value>" (kfd_sim_truth.c,
# plus submit/pending lines the guest derives from the drivers' indexes).
# Gauges are compared with NOW, counters with NOW - BASE; each family is
# projected on the labels the truth knows, and zero series may be absent on
# either side. Prints one "DIFF <series> want <n> got <n>" per mismatch and
# a last line "RESULT <ok|diff> <series compared> <diffs>".
function container(id) {
	if (!(id in cg))
		return "cgroup-" id
	return cg[id] == "-" ? "" : cg[id]
}
function qtype(t) {
	return (t in qlabel) ? qlabel[t] : "type_" t
}
function errname(e) {
	if (e == 22) return "EINVAL"
	if (e == 12) return "ENOMEM"
	if (e == 14) return "EFAULT"
	if (e == 62) return "ETIME"
	if (e == 16) return "EBUSY"
	if (e == 524) return "ENOTSUPP"
	return "E" e
}
function gpu(g) { return (g in gpus) ? g : "unknown" }
function filter(f) {
	if (f == 1) return "all_queues"
	if (f == 2) return "dynamic_queues"
	if (f == 3) return "by_pasid"
	return "filter_" f
}
function trig(t) {
	if (t == 0) return "svm"
	if (t == 1) return "userptr"
	if (t == 2) return "ttm"
	if (t == 3) return "suspend"
	if (t == 4) return "criu_checkpoint"
	if (t == 5) return "criu_restore"
	return "unknown"
}
function cause(c) {
	split("create destroy evict restore terminate update", names, " ")
	return (c >= 1 && c <= 6) ? names[c] : "unknown"
}
# One runlist operation series: sched hws|mes, op unmap|map, its errno.
function runlist(sign, g, sched, op, filt, err, v,   gs) {
	gs = "gpu_id=\"" g "\",scheduler=\"" sched "\""
	if (op == "unmap")
		add("gpuq_runlist_unmaps_total{" gs ",filter=\"" filt "\"}", sign * v)
	add("gpuq_runlist_" op "_duration_seconds_count{" gs "}", sign * v)
	if (err)
		add("gpuq_runlist_failures_total{" gs ",op=\"" op "\",error=\"" errname(err) "\"}", sign * v)
}
function add(key, v) { want[key] += v }
function oreason(r) {
	split("processes compute_queues gws_queues xnack_conflict other", names, " ")
	return (r >= 0 && r <= 4) ? names[r + 1] : "reason_" r
}
function rlkind(k) {
	split("processes compute_queues gws_queues", names, " ")
	return (k >= 0 && k <= 2) ? names[k + 1] : "kind_" k
}
function victim_labels(g, a, b, c) {
	return "{container=\"" container(c) "\",gpu_id=\"" g "\",scheduler=\"" (b >= 2 ? "mes" : "hws") "\",cause=\"" cause(a) "\",caused_by=\"" (b % 2 ? "self" : "other") "\"}"
}
# One truth series, sign +1 (NOW) or -1 (BASE).
function truth(sign, what, g, a, b, c, v) {
	if (what == "queues" && sign > 0)
		add("gpuq_queues{container=\"" container(c) "\",gpu_id=\"" g "\",queue_type=\"" qtype(a) "\"}", v)
	else if (what == "prio" && sign > 0)
		add("gpuq_queues_by_priority{container=\"" container(c) "\",gpu_id=\"" g "\",priority=\"" (a == 0 ? "low" : a == 1 ? "medium" : "high") "\"}", v)
	else if (what == "rprio" && sign > 0)
		add("gpuq_queues_by_requested_priority{container=\"" container(c) "\",gpu_id=\"" g "\",requested_priority=\"" a "\"}", v)
	else if (what == "cumask" && sign > 0)
		add("gpuq_queues_cu_masked{container=\"" container(c) "\",gpu_id=\"" g "\",cu_mask=\"" (a == 1 ? "restricted" : "all_cus") "\"}", v)
	else if (what == "processes" && sign > 0)
		add("gpuq_processes{container=\"" container(c) "\",gpu_id=\"" g "\"}", v)
	else if (what == "create")
		add("gpuq_queue_creates_total{container=\"" container(c) "\",gpu_id=\"" g "\",queue_type=\"" qtype(a) "\"}", sign * v)
	else if (what == "destroy")
		add("gpuq_queue_destroys_total{container=\"" container(c) "\",gpu_id=\"" g "\",queue_type=\"" qtype(a) "\",reason=\"" (b == 1 ? "ioctl" : "process_exit") "\"}", sign * v)
	else if (what == "exit")
		add("gpuq_process_exits_total{container=\"" container(c) "\"}", sign * v)
	else if (what == "unmap")
		runlist(sign, g, "hws", "unmap", filter(a), b, v)
	else if (what == "map")
		runlist(sign, g, "hws", "map", "", b, v)
	else if (what == "mes_remove")
		runlist(sign, g, "mes", "unmap", "queue", b, v)
	else if (what == "mes_add")
		runlist(sign, g, "mes", "map", "", b, v)
	else if (what == "rl_cause")
		add("gpuq_runlist_operations_total{container=\"" container(c) "\",gpu_id=\"" g "\",scheduler=\"" (a >= 2 ? "mes" : "hws") "\",op=\"" (a % 2 ? "map" : "unmap") "\",cause=\"" cause(b) "\"}", sign * v)
	else if (what == "victim") {
		vl = victim_labels(g, a, b, c)
		add("gpuq_queue_preemptions_total" vl, sign * v)
		windows["gpuq_queue_preempted_seconds_total" vl] += sign * v
	} else if (what == "victim_ns")
		lo["gpuq_queue_preempted_seconds_total" victim_labels(g, a, b, c)] += sign * v
	else if (what == "victim_ns_out")
		hi["gpuq_queue_preempted_seconds_total" victim_labels(g, a, b, c)] += sign * v
	else if (what == "evict")
		add("gpuq_evictions_total{container=\"" container(c) "\",gpu_id=\"" g "\",trigger=\"" trig(a) "\"}", sign * v)
	else if (what == "restore")
		add("gpuq_eviction_restores_total{container=\"" container(c) "\",gpu_id=\"" g "\"}", sign * v)
	else if (what == "evicted" && sign > 0)
		add("gpuq_evicted_processes{container=\"" container(c) "\",gpu_id=\"" g "\"}", v)
	else if (what == "evicted_queues" && sign > 0)
		add("gpuq_queues_evicted{container=\"" container(c) "\",gpu_id=\"" g "\"}", v)
	else if (what == "submit")
		add("gpuq_submissions_total{container=\"" container(c) "\",gpu_id=\"" g "\",queue_type=\"" qtype(a) "\"}", sign * v)
	else if (what == "pending" && sign > 0)
		add("gpuq_queue_pending_packets{container=\"" container(c) "\",gpu_id=\"" g "\"}", v)
	else if (what == "oversub") {
		add("gpuq_runlist_oversubscribed_maps_total{gpu_id=\"" g "\",reason=\"" oreason(a) "\"}", sign * v)
	} else if (what == "oversub_maps")
		windows["gpuq_runlist_oversubscribed_seconds_total{gpu_id=\"" g "\"}"] += sign * v
	else if (what == "oversub_ns_in")
		lo["gpuq_runlist_oversubscribed_seconds_total{gpu_id=\"" g "\"}"] += sign * v
	else if (what == "oversub_ns")
		hi["gpuq_runlist_oversubscribed_seconds_total{gpu_id=\"" g "\"}"] += sign * v
	else if (what == "oversubscribed" && sign > 0)
		add("gpuq_runlist_oversubscribed{gpu_id=\"" g "\"}", v)
	else if (what == "rl_entries" && sign > 0)
		add("gpuq_runlist_entries{gpu_id=\"" g "\",kind=\"" rlkind(a) "\"}", v)
	else if (what == "rl_limit" && sign > 0)
		add("gpuq_runlist_entry_limit{gpu_id=\"" g "\",kind=\"" rlkind(a) "\"}", v)
	else if (what == "create_fail")
		add("gpuq_queue_create_failures_total{container=\"" container(c) "\",gpu_id=\"" gpu(g) "\",error=\"" errname(b) "\"}", sign * v)
}
# Labels each family is compared on, in this order.
BEGIN {
	keep["gpuq_queues"] = "container gpu_id queue_type"
	keep["gpuq_processes"] = "container gpu_id"
	keep["gpuq_queues_by_priority"] = "container gpu_id priority"
	keep["gpuq_queues_by_requested_priority"] = "container gpu_id requested_priority"
	keep["gpuq_queues_cu_masked"] = "container gpu_id cu_mask"
	keep["gpuq_queue_creates_total"] = "container gpu_id queue_type"
	keep["gpuq_queue_destroys_total"] = "container gpu_id queue_type reason"
	keep["gpuq_process_exits_total"] = "container"
	keep["gpuq_queue_create_failures_total"] = "container gpu_id error"
	keep["gpuq_runlist_unmaps_total"] = "gpu_id scheduler filter"
	keep["gpuq_runlist_unmap_duration_seconds_count"] = "gpu_id scheduler"
	keep["gpuq_runlist_map_duration_seconds_count"] = "gpu_id scheduler"
	keep["gpuq_runlist_failures_total"] = "gpu_id scheduler op error"
	keep["gpuq_runlist_operations_total"] = "container gpu_id scheduler op cause"
	keep["gpuq_queue_preemptions_total"] = "container gpu_id scheduler cause caused_by"
	keep["gpuq_queue_preempted_seconds_total"] = "container gpu_id scheduler cause caused_by"
	# Seconds: the agent's windows are timed by its programs at the unmap's
	# and map's entry and return, the simulator's twice, inside the two
	# functions and by their callers, and the agent's lie between the two
	# (kfd_sim_victims.c, sim_oversub_end): each series must be within
	# [lo, hi], the two sums of the simulator's, compared in nanoseconds
	# (the agent's seconds are its integer nanoseconds / 1e9).
	within["gpuq_queue_preempted_seconds_total"] = "seconds off the GPU"
	within["gpuq_runlist_oversubscribed_seconds_total"] = "seconds oversubscribed"
	keep["gpuq_runlist_oversubscribed"] = "gpu_id"
	keep["gpuq_runlist_oversubscribed_maps_total"] = "gpu_id reason"
	keep["gpuq_runlist_oversubscribed_seconds_total"] = "gpu_id"
	keep["gpuq_runlist_entries"] = "gpu_id kind"
	keep["gpuq_runlist_entry_limit"] = "gpu_id kind"
	keep["gpuq_evictions_total"] = "container gpu_id trigger"
	keep["gpuq_eviction_restores_total"] = "container gpu_id"
	keep["gpuq_evicted_processes"] = "container gpu_id"
	keep["gpuq_queues_evicted"] = "container gpu_id"
	keep["gpuq_submissions_total"] = "container gpu_id queue_type"
	keep["gpuq_queue_pending_packets"] = "container gpu_id"
	n = split(fams, f, " ")
	for (i = 1; i <= n; i++)
		check[f[i]] = 1
}
$1 == "QTYPE" { qlabel[$2] = $3; next }
$1 == "GPU" { gpus[$2] = 1; next }
$1 == "CG" { cg[$2] = $3; next }
$1 == "BASE" || $1 == "NOW" {
	truth($1 == "NOW" ? 1 : -1, $2, $3, $4, $5, $6, $7)
	next
}
$1 == "MET" {
	line = substr($0, 5)
	if (line ~ /^#/)
		next
	name = line
	sub(/[{ ].*/, "", name)
	if (!(name in check) || !(name in keep))
		next
	value = line
	sub(/.* /, "", value)
	labels = ""
	if (index(line, "{")) {
		labels = line
		sub(/^[^{]*\{/, "", labels)
		sub(/\}[^}]*$/, "", labels)
	}
	delete lv
	m = split(labels, parts, ",")
	for (i = 1; i <= m; i++) {
		eq = index(parts[i], "=")
		v = substr(parts[i], eq + 1)
		gsub(/"/, "", v)
		lv[substr(parts[i], 1, eq - 1)] = v
	}
	if (only != "" && lv["container"] != only)
		next
	key = name "{"
	k = split(keep[name], ln, " ")
	for (i = 1; i <= k; i++)
		key = key (i > 1 ? "," : "") ln[i] "=\"" lv[ln[i]] "\""
	key = key "}"
	got[key] += value
	next
}
# A truth series to compare: of a family asked for, and of `only` if set.
function candidate(key,   name) {
	name = key
	sub(/\{.*/, "", name)
	if ((name in check) && (only == "" || index(key, "container=\"" only "\"")))
		all[key] = 1
}
END {
	for (key in want)
		candidate(key)
	for (key in hi)
		candidate(key)
	for (key in got)
		all[key] = 1
	compared = diffs = 0
	for (key in all) {
		name = key
		sub(/\{.*/, "", name)
		g = got[key] + 0
		if (name in within) {
			l = lo[key] + 0
			h = hi[key] + 0
			gns = int(g * 1e9 + 0.5)
			if (h == 0 && gns == 0)
				continue
			compared++
			range = sprintf("want [%.9f, %.9f] got %.9f", l / 1e9, h / 1e9, g)
			print "WITHIN " key " " range " windows " windows[key]
			wl[name] += l / 1e9
			wh[name] += h / 1e9
			wg[name] += g
			wn[name] += windows[key]
			if (gns < l || gns > h) {
				diffs++
				print "DIFF " key " " range
			}
			continue
		}
		w = want[key] + 0
		if (w == 0 && g == 0)
			continue
		compared++
		if (w != g) {
			diffs++
			print "DIFF " key " want " w " got " g
		}
	}
	printf "RESULT %s %d %d", (diffs ? "diff" : "ok"), compared, diffs
	n = split("gpuq_queue_preempted_seconds_total gpuq_runlist_oversubscribed_seconds_total", wf, " ")
	for (i = 1; i <= n; i++)
		if (wf[i] in wn)
			printf " (%s: the agent's %.6f, the simulator's between %.6f and %.6f, over %d windows)", within[wf[i]], wg[wf[i]], wl[wf[i]], wh[wf[i]], wn[wf[i]]
	printf "\n"
}

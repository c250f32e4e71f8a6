#!/bin/bash
# BPF time per sample of the user stack walk by unwind tables against the
# frame-pointer walk (bpf_get_stack), on the same workload, from the
# kernel's own BPF statistics (kernel.bpf_stats_enabled): the perf_event
# program's run time divided by the samples it kept, while the profiler
# samples the workload at 999 Hz for 10 s, once with each --unwind method,
# ROUNDS times (default 3) alternately; medians printed.
#
# Two workloads: cpu_split (built with frame pointers, so both walks reach
# the same outermost frame and the comparison is of equal stacks) and
# nofp_qsort_printf (plain -O2, no frame pointers: the frame-pointer walk
# stops after a frame or two, the tables walk to main).
#
#   bench/unwind_cost.sh     (root; needs bpftool and python3)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
prof=build/jbpfprof
[ -x "$prof" ] && [ -x build/workloads/cpu_split ] && [ -x build/workloads/nofp_qsort_printf ] ||
	{ echo "bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
wp=
trap '[ -n "$wp" ] && kill $wp 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# One recording of pid $1 with --unwind $2: prints "ns_per_sample frames_per_sample".
measure() {
	local pid=$1 method=$2 pp
	rm -f "$tmp/err"
	mkfifo "$tmp/err"
	"$prof" -v -p "$pid" -F 999 -d 10 --unwind "$method" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
	pp=$!
	exec 4<"$tmp/err"
	wait_for_sampling 4 || true
	sleep 8
	bpftool prog show name sample_cpu -j >"$tmp/prog.json"
	bpftool map dump name counters -j >"$tmp/counters.json"
	cat <&4 >/dev/null
	exec 4<&-
	wait "$pp"
	PYTHONPATH=bench python3 - "$tmp/prog.json" "$tmp/counters.json" "$tmp/p.collapsed" <<'PY'
import json, sys
from bpf_counters import counter_total, load
prog = json.load(open(sys.argv[1]))
counters = load(sys.argv[2])
def total(index):
    return counter_total(counters, index)
kept = total(1)  # enum jbpf_counter: SAMPLES
frames = samples = 0
for line in open(sys.argv[3]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    user = [f for f in stack.split(";") if not f.endswith("_[k]")]
    frames += len(user) * int(n)
    samples += int(n)
print(f"{prog['run_time_ns'] / kept:.0f} {frames / max(samples, 1):.1f}")
PY
}

echo "unwind_cost.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), 999 Hz, ${ROUNDS:-3} rounds"
for work in "cpu_split -t 1" nofp_qsort_printf; do
	: >"$tmp/fp" ; : >"$tmp/tables"; : >"$tmp/fp.depth"; : >"$tmp/tables.depth"
	build/workloads/$work >/dev/null &
	wp=$!
	for _ in $(seq "${ROUNDS:-3}"); do
		for method in fp tables; do
			read -r ns depth < <(measure "$wp" "$method")
			echo "$ns" >>"$tmp/$method"
			echo "$depth" >>"$tmp/$method.depth"
		done
	done
	kill "$wp"; wait "$wp" 2>/dev/null || true; wp=
	echo "  ${work%% *}: fp $(median <"$tmp/fp") ns/sample ($(median <"$tmp/fp.depth") user frames), " \
	     "tables $(median <"$tmp/tables") ns/sample ($(median <"$tmp/tables.depth") user frames), " \
	     "ratio $(ratio_median "$tmp/tables" "$tmp/fp")"
done

#!/bin/bash
# What wall-clock profiling costs when the target has many threads that do
# nothing: build/workloads/offcpu idle 1000 (THREADS) blocks them all in
# pthread_cond_wait for good, and jbpfprof -e wall records it for SECONDS.
#
#   bench/wall_idle.sh [SECONDS] [RUNS]   (root; default 10 s, 3 runs; needs bpftool and python3)
#
# For each run it reports, as a percentage of one CPU:
#   - the profiler's own CPU time over the whole recording, start-up (reading
#     a thousand threads) and write-out included: its -v line "own CPU time";
#   - the profiler's CPU time in the steady state, from /proc/PID/stat
#     (utime + stime, whole process) between 1 s after its "sampling" line
#     and 1 s before the end;
#   - its BPF programs' run time over the same interval, from the kernel's
#     BPF statistics (kernel.bpf_stats_enabled, run_time_ns as bpftool
#     shows it). The programs are those loaded after the run began: bpftool
#     here cannot name the process holding a program, so BPF programs
#     another tool loads meanwhile would be counted too.
# Then the median of each over the runs. The host's context switches run the
# profiler's scheduler programs whatever the target does, so the BPF figure
# depends on what else the machine runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# Keeps the profiler's stderr of run $i.
log_line() { echo "$1" >>"$tmp/log$i"; }
duration=${1:-10}
runs=${2:-3}
threads=${THREADS:-1000}
prof=build/jbpfprof
work=build/workloads/offcpu
[ -x "$work" ] && [ -x "$prof" ] || { echo "bench: run make first" >&2; exit 1; }
((duration >= 4)) || { echo "bench: SECONDS must be at least 4" >&2; exit 1; }
tmp=$(mktemp -d)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
mkfifo "$tmp/out"
"$work" idle "$threads" >"$tmp/out" &
wp=$!
trap 'kill $wp 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
exec 3<"$tmp/out"
read -r line <&3   # "ready": every thread waits
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# The instant, the profiler's CPU ticks and every BPF program's statistics, into $1.*
snapshot() {
	date +%s%N >"$1.time"
	awk '{ print $14 + $15 }' "/proc/$pp/stat" >"$1.ticks"
	bpftool prog show -j >"$1.json"
}

for i in $(seq "$runs"); do
	bpftool prog show -j >"$tmp/before$i.json"
	mkfifo "$tmp/err$i"
	"$prof" -v -e wall -p "$wp" -d "$duration" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err$i" &
	pp=$!
	exec 4<"$tmp/err$i"
	wait_for_sampling 4 log_line || { echo "bench: the profiler failed to start" >&2; cat "$tmp/log$i" >&2; exit 1; }
	sleep 1
	snapshot "$tmp/a$i"
	sleep $((duration - 2))
	snapshot "$tmp/b$i"
	cat <&4 >>"$tmp/log$i"
	exec 4<&-
	wait "$pp" || { echo "bench: the profiler failed:" >&2; cat "$tmp/log$i" >&2; exit 1; }
done
python3 - "$tmp" "$runs" "$duration" "$threads" "$(getconf CLK_TCK)" <<'PY'
import json, re, statistics, sys, time
tmp, runs, duration, threads, hz = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
def progs(path):
    return {p["id"]: p for p in json.load(open(path))}
def read(path):
    return open(path).read().strip()
rows = []
for i in range(1, runs + 1):
    before = progs(f"{tmp}/before{i}.json")
    a, b = progs(f"{tmp}/a{i}.json"), progs(f"{tmp}/b{i}.json")
    ours = [pid for pid in b if pid not in before and pid in a]
    wall_ns = int(read(f"{tmp}/b{i}.time")) - int(read(f"{tmp}/a{i}.time"))
    bpf_ns = sum(b[p].get("run_time_ns", 0) - a[p].get("run_time_ns", 0) for p in ours)
    bpf_runs = sum(b[p].get("run_cnt", 0) - a[p].get("run_cnt", 0) for p in ours)
    ticks = int(read(f"{tmp}/b{i}.ticks")) - int(read(f"{tmp}/a{i}.ticks"))
    log = read(f"{tmp}/log{i}")
    own = re.search(r"own CPU time ([0-9.]+) s \(([0-9.]+)% of one CPU over ([0-9.]+) s\)", log)
    window = re.search(r"window: (\d+) us", log)
    row = {
        "own": float(own.group(2)) if own else float("nan"),
        "steady": 100.0 * ticks / hz / (wall_ns / 1e9),
        "bpf": 100.0 * bpf_ns / wall_ns,
        "bpf_runs_per_s": bpf_runs / (wall_ns / 1e9),
        "bpf_ns_per_run": bpf_ns / bpf_runs if bpf_runs else 0.0,
    }
    rows.append(row)
    names = ", ".join(sorted(b[p].get("name", "?") for p in ours))
    print(f"run {i}: profiler {row['own']:.2f}% of one CPU over the recording "
          f"({own.group(1) if own else '?'} s CPU in {own.group(3) if own else '?'} s), "
          f"{row['steady']:.2f}% in the steady state; BPF {row['bpf']:.3f}% "
          f"({row['bpf_runs_per_s']:.0f} runs/s, {row['bpf_ns_per_run']:.0f} ns each; programs: {names}); "
          f"window {window.group(1) + ' us' if window else 'not printed'}")
med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
print(f"wall_idle.sh: {time.strftime('%Y-%m-%d')}, {threads} idle threads, -e wall for {duration} s, {runs} runs, "
      f"medians in % of one CPU: profiler {med['own']:.2f} (whole recording), {med['steady']:.2f} (steady state), "
      f"BPF {med['bpf']:.3f} ({med['bpf_runs_per_s']:.0f} runs/s, {med['bpf_ns_per_run']:.0f} ns each)")
PY

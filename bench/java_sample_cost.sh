#!/bin/bash
# What one joined Java sample costs, and how long a recording takes to give
# its first one, on a busy JVM (tests/workloads/java CpuSplit, 2 threads).
#
#   bench/java_sample_cost.sh [RUNS]   (root; needs bpftool, python3, a JDK)
#
# For each run, one 8 s recording at 999 Hz with the kernel's BPF
# statistics on (kernel.bpf_stats_enabled) prints:
#   - BPF time per sample kept (the perf_event program, signal included),
#     and the system call exit program's time per run (it runs on every
#     system call on the host while a JVM is profiled);
#   - the agent's signal handler time per call (AsyncGetCallTrace and its
#     bookkeeping; from the agent's own counters, -v);
#   - the profiler's own CPU time per sample (its -v report);
#   - the time from starting jbpfprof to its first sample with Java frames.
# Then the median of each over RUNS (default 5). JAVA picks the JVM.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# Keeps the profiler's stderr of run $i.
log_line() { echo "$1" >>"$tmp/log$i"; }
runs=${1:-5}
prof=build/jbpfprof
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -x "$prof" ] && [ -f build/java/CpuSplit.class ] || { echo "bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
mkfifo "$tmp/out"
"$java" -cp build/java CpuSplit -t 2 >"$tmp/out" &
jp=$!
trap 'kill $jp 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
exec 3<"$tmp/out"
while read -r line <&3; do [ "$line" = ready ] && break; done
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for i in $(seq "$runs"); do
	mkfifo "$tmp/err$i"
	"$prof" -v -p "$jp" -F 999 -d 8 -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err$i" &
	pp=$!
	exec 4<"$tmp/err$i"
	wait_for_sampling 4 log_line || true
	# Read the programs' statistics while they are loaded, near the end.
	sleep 7
	bpftool prog show name sample_cpu -j >"$tmp/sample$i.json"
	bpftool prog show name syscall_exit -j >"$tmp/exit$i.json"
	cat <&4 >>"$tmp/log$i"
	exec 4<&-
	wait "$pp"
done
python3 - "$tmp" "$runs" <<'PY'
import json, re, statistics, sys, time
tmp, runs = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(1, runs + 1):
    s = json.load(open(f"{tmp}/sample{i}.json"))
    e = json.load(open(f"{tmp}/exit{i}.json"))
    log = open(f"{tmp}/log{i}").read()
    kept = int(re.search(r"samples kept (\d+)", log).group(1))
    cpu = float(re.search(r"own CPU time ([0-9.]+) s", log).group(1))
    taken = int(re.search(r"(\d+) samples taken", log).group(1))
    handler = float(re.search(r"handler: \d+ calls, ([0-9.]+) us each", log).group(1))
    first = float(re.search(r"first sample with Java frames (\d+) ms", log).group(1))
    joined = re.search(r"Java stacks: (\d+) of (\d+) joined", log)
    row = {
        "bpf_us": s["run_time_ns"] / kept / 1e3,
        "exit_ns": e["run_time_ns"] / max(e["run_cnt"], 1),
        "handler_us": handler,
        "prof_us": cpu / taken * 1e6,
        "first_ms": first,
        "joined": 100.0 * int(joined.group(1)) / max(int(joined.group(2)), 1),
    }
    rows.append(row)
    print(f"run {i}: BPF {row['bpf_us']:.1f} us/sample, sys_exit {row['exit_ns']:.0f} ns/run, "
          f"handler {row['handler_us']:.1f} us, profiler {row['prof_us']:.1f} us/sample (start-up included), "
          f"first joined sample {row['first_ms']:.0f} ms, joined {row['joined']:.1f}%")
med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
print(f"java_sample_cost.sh: {time.strftime('%Y-%m-%d')}, 999 Hz, {runs} runs, medians: "
      f"BPF {med['bpf_us']:.1f} us/sample, sys_exit {med['exit_ns']:.0f} ns/run, "
      f"handler {med['handler_us']:.1f} us, profiler {med['prof_us']:.1f} us/sample, "
      f"first joined sample {med['first_ms']:.0f} ms, joined {med['joined']:.1f}%")
PY

#!/bin/bash
# What one joined Java sample costs, and how long a recording takes to give
# its first one, on a busy JVM (tests/workloads/java CpuSplit, 2 threads).
#
#   [ARGS="--java-stacks agent"] bench/java_sample_cost.sh [RUNS]
#                                      (root; needs bpftool, python3, a JDK)
#
# Java stacks come from the profiler's default (walked by BPF); ARGS adds
# options, e.g. --java-stacks agent for the agent's path. For each run, one
# 8 s recording at 999 Hz with the kernel's BPF statistics on
# (kernel.bpf_stats_enabled) prints:
#   - BPF time per sample kept (the perf_event program over the whole
#     recording, from -v: with the BPF walk
#     the Java frames' walk included, with the agent the signal), and the
#     system call exit program's time per run, where it is loaded;
#   - with the agent, its signal handler time per call (AsyncGetCallTrace
#     and its bookkeeping; from the agent's own counters, -v);
#   - the profiler's own CPU time per sample (its -v report);
#   - the time from starting jbpfprof to its first sample with Java frames
#     (reported for the agent only: nan with the BPF walk);
#   - the share of samples with Java frames (BPF walk: of all the JVM's
#     samples; agent: of its Java threads' samples, joined).
# bench/java_walk_cost.sh compares the two paths by stack depth.
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
	# shellcheck disable=SC2086 # ARGS is a list of options
	"$prof" -v ${ARGS:-} -p "$jp" -F 999 -d 8 -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err$i" &
	pp=$!
	exec 4<"$tmp/err$i"
	wait_for_sampling 4 log_line || true
	# Read the programs' statistics while they are loaded, near the end.
	sleep 7
	bpftool prog show name syscall_exit -j >"$tmp/exit$i.json" 2>/dev/null || echo '{}' >"$tmp/exit$i.json"
	cat <&4 >>"$tmp/log$i"
	exec 4<&-
	wait "$pp"
done
python3 - "$tmp" "$runs" <<'PY'
import json, re, statistics, sys, time
tmp, runs = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(1, runs + 1):
    e = json.load(open(f"{tmp}/exit{i}.json")) or {}
    if isinstance(e, list):  # several programs of that name: the busiest
        e = max(e, key=lambda p: p.get("run_cnt", 0), default={})
    log = open(f"{tmp}/log{i}").read()
    kept = int(re.search(r"samples kept (\d+)", log).group(1))
    cpu = float(re.search(r"own CPU time ([0-9.]+) s", log).group(1))
    taken = int(re.search(r"(\d+) samples taken", log).group(1))
    h = re.search(r"handler: \d+ calls, ([0-9.]+) us each", log)
    handler = float(h.group(1)) if h else float("nan")
    f = re.search(r"first sample with Java frames (\d+) ms", log)
    first = float(f.group(1)) if f else float("nan")
    bpf = re.search(r"sample_cpu ([0-9.]+) ms \(\d+ runs", log)
    joined = re.search(r"Java stacks: (\d+) of (\d+) joined", log) or \
        re.search(r"(\d+) of (\d+) JVM thread samples with Java frames", log)
    row = {
        "bpf_us": float(bpf.group(1)) * 1e3 / kept if bpf else float("nan"),
        "exit_ns": e.get("run_time_ns", 0) / max(e.get("run_cnt", 0), 1),
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

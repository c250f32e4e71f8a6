#!/bin/bash
# Kernel-side cost of the BPF sampler, from the kernel's own BPF statistics
# (kernel.bpf_stats_enabled): run time and run count of the perf_event
# program, read at the same instant as the program's own counters of timer
# ticks and samples kept, while it samples a busy workload at 999 Hz.
#
#   bench/sample_cost.sh     (root; needs bpftool and python3)
#
# Prints the mean time per program run (every timer tick; a thinned one ends
# after a random number) and the program's whole run time divided by the
# samples it kept (the cost of a sample, thinned ticks included), then the
# profiler's own CPU time (its -v report) split into a fixed start-up cost
# and a cost per sample, from a 2 s and a 12 s recording. The timer
# interrupt itself is in neither; bench/overhead.sh measures everything.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
prof=build/jbpfprof
work=build/workloads/cpu_split
[ -x "$work" ] && [ -x "$prof" ] || { echo "bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
"$work" -t 2 >/dev/null &
wp=$!
trap 'kill $wp 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
"$prof" -v -p "$wp" -F 999 -d 2 -o collapsed -f "$tmp/short.collapsed" 2>"$tmp/short"
mkfifo "$tmp/err"
"$prof" -v -p "$wp" -F 999 -d 12 -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
pp=$!
exec 4<"$tmp/err"
wait_for_sampling 4 || true
# Let it run, then read both while the program is still loaded.
sleep 10
bpftool prog show name sample_cpu -j >"$tmp/prog.json"
bpftool map dump name counters -j >"$tmp/counters.json"
cat <&4 >"$tmp/summary"
wait "$pp"
PYTHONPATH=bench python3 - "$tmp/prog.json" "$tmp/counters.json" "$tmp/summary" "$tmp/short" <<'PY'
import json, sys, time
from bpf_counters import counter_total, load
prog = json.load(open(sys.argv[1]))
counters = load(sys.argv[2])
def total(index):
    return counter_total(counters, index)
ticks, kept = total(0), total(1)  # enum jbpf_counter: TICKS, SAMPLES
runs, ns = prog["run_cnt"], prog["run_time_ns"]
print(f"sample_cost.sh: {time.strftime('%Y-%m-%d')}, 999 Hz, {runs} program runs ({ticks} ticks), "
      f"{kept} samples kept")
print(f"  {ns / runs:.0f} ns per program run, {ns / kept:.0f} ns of BPF time per sample kept")
def own_cost(path):
    cpu = written = None
    for line in open(path):
        words = line.split()
        if "own CPU time" in line:
            cpu = float(words[4])
        if "samples taken" in line:
            written = int(words[4])
    return cpu, written
long_cpu, long_n = own_cost(sys.argv[3])
short_cpu, short_n = own_cost(sys.argv[4])
if None not in (long_cpu, long_n, short_cpu, short_n) and long_n > short_n:
    per_sample = (long_cpu - short_cpu) / (long_n - short_n)
    print(f"  profiler process: {short_cpu:.3f} s CPU for 2 s ({short_n} samples), {long_cpu:.3f} s for 12 s "
          f"({long_n} samples): {per_sample * 1e9:.0f} ns per sample, "
          f"{(short_cpu - per_sample * short_n) * 1e3:.0f} ms fixed (start-up, output)")
PY

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
# profiler's own CPU time (its -v report) per sample. The timer interrupt
# itself is in neither; bench/overhead.sh measures everything together.
set -euo pipefail
cd "$(dirname "$0")/.."
prof=build/jbpfprof
work=build/workloads/cpu_split
[ -x "$work" ] && [ -x "$prof" ] || { echo "bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
"$work" -t 2 >/dev/null &
wp=$!
trap 'kill $wp 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
mkfifo "$tmp/err"
"$prof" -v -p "$wp" -F 999 -d 12 -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
pp=$!
exec 4<"$tmp/err"
while read -r line <&4; do case $line in *"jbpfprof: sampling"*) break ;; esac; done
# Let it run, then read both while the program is still loaded.
sleep 10
bpftool prog show name sample_cpu -j >"$tmp/prog.json"
bpftool map dump name counters -j >"$tmp/counters.json"
cat <&4 >"$tmp/summary"
wait "$pp"
python3 - "$tmp/prog.json" "$tmp/counters.json" "$tmp/summary" <<'PY'
import json, sys, time
prog = json.load(open(sys.argv[1]))
counters = json.load(open(sys.argv[2]))
def total(index):
    for entry in counters:
        key = entry.get("key")
        k = int(key[0], 16) if isinstance(key, list) else int(key)
        if k == index:
            return sum(v["value"] if isinstance(v["value"], int) else int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
                       for v in entry["values"])
    return 0
ticks, kept = total(0), total(1)  # enum jbpf_counter: TICKS, SAMPLES
runs, ns = prog["run_cnt"], prog["run_time_ns"]
print(f"sample_cost.sh: {time.strftime('%Y-%m-%d')}, 999 Hz, {runs} program runs ({ticks} ticks), "
      f"{kept} samples kept")
print(f"  {ns / runs:.0f} ns per program run, {ns / kept:.0f} ns of BPF time per sample kept")
own_cpu = written = None
for line in open(sys.argv[3]):
    words = line.split()
    if "own CPU time" in line:
        own_cpu = float(words[4])
    if "samples taken" in line:
        written = int(words[4])
if own_cpu is not None and written:
    print(f"  profiler process: {own_cpu:.3f} s CPU for {written} samples written over 12 s, "
          f"{own_cpu / written * 1e9:.0f} ns per sample (start-up and output included)")
PY

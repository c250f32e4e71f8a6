#!/bin/bash
# What one sample costs the CPU it lands on, everything included: the timer
# interrupt, the BPF program, and for Java the signal, its delivery and the
# agent's handler. bench/sample_cost.sh and bench/java_sample_cost.sh count
# the parts the kernel and the agent can time; the interrupts and the signal
# delivery are in none of them, and on a virtual machine they are the most.
#
#   [BEFORE=path] [MODES="m ..."] bench/sample_floor.sh [ROUNDS]
#                               (root; python3, a JDK; default 5 rounds of every mode)
#
# SpinRate (tests/workloads/java) runs pinned to CPU 1 and reports its work
# rate every 100 ms; the profiler runs pinned to CPU 0, so only what happens
# on CPU 1 because of a sample slows the spinner. Each mode runs 4 s between
# two unprofiled 3 s windows, and its ratio is the spinner's rate during the
# mode to the mean of the two around it. Modes, rotated in every round:
#   ticks    build/bench/tick_only: a cpu-clock timer every 1 ms, no program
#   native   jbpfprof -F 999 --no-java (stacks walked in BPF only)
#   fixed    jbpfprof -F 999 --fixed-interval (one tick per sample)
#   java     jbpfprof -F 999 (the default: Java stacks by signal)
#   before   $BEFORE -F 999, when BEFORE names another jbpfprof build
# Printed per mode: the median ratio, and the time lost per tick or per
# sample, (1 - ratio) / 999 or / 1000 per second: the spinner is the only
# thread on CPU 1, so it takes every sample.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -x build/jbpfprof ] && [ -x build/bench/tick_only ] && [ -f build/java/SpinRate.class ] ||
	{ echo "bench: run make bench first (or make all build/bench/tick_only)" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench: needs 2 CPUs" >&2; exit 1; }
python3 - "$java" "$rounds" "${BEFORE:-}" "${MODES:-}" <<'PY'
import os, statistics, subprocess, sys, threading, time

java, rounds, before, chosen = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
modes = {
    "ticks": (["build/bench/tick_only", "1", "1000000", "6"], 1000),
    "native": (["build/jbpfprof", "-F", "999", "--no-java"], 999),
    "fixed": (["build/jbpfprof", "-F", "999", "--fixed-interval"], 999),
    "java": (["build/jbpfprof", "-F", "999"], 999),
}
if before:
    modes["before"] = ([before, "-F", "999"], 999)
if chosen:
    unknown = [m for m in chosen if m not in modes]
    if unknown:
        sys.exit(f"bench: no mode {' '.join(unknown)} (modes: {' '.join(modes)})")
    modes = {m: modes[m] for m in chosen}

spin = subprocess.Popen(["taskset", "-c", "1", java, "-cp", "build/java", "SpinRate"],
                        stdout=subprocess.PIPE, text=True)
rates = []  # (ms, units)

def read_rates():
    for line in spin.stdout:
        t, n = line.split()
        rates.append((int(t), int(n)))

try:
    if spin.stdout.readline().strip() != "ready":
        sys.exit("bench: SpinRate did not start")
    threading.Thread(target=read_rates, daemon=True).start()
    now_ms = lambda: int(time.monotonic() * 1000)

    def window(seconds):
        start = now_ms()
        time.sleep(seconds)
        end = now_ms()
        # Whole 100 ms reports inside the window only.
        units = [n for t, n in rates if start + 100 <= t <= end]
        return sum(units) / len(units)

    def run(argv):
        if argv[0].endswith("tick_only"):
            cmd = argv
        else:
            cmd = argv + ["-p", str(spin.pid), "-d", "6", "-o", "collapsed", "-f", "/dev/null"]
        p = subprocess.Popen(["taskset", "-c", "0"] + cmd, stderr=subprocess.PIPE, text=True)
        for line in p.stderr:
            if "jbpfprof: sampling" in line:
                break
        else:
            sys.exit(f"bench: {' '.join(cmd)} did not start")
        rate = window(4)
        p.stderr.read()
        if p.wait():
            sys.exit(f"bench: {' '.join(cmd)} failed")
        return rate

    window(8)  # the JIT compiles the spinner
    ratios = {m: [] for m in modes}
    for r in range(rounds):
        after = window(3)
        for m, (argv, _) in modes.items():
            prev = after
            during = run(argv)
            after = window(3)
            ratios[m].append(during * 2 / (prev + after))
    stamp = time.strftime("%Y-%m-%d")
    print(f"sample_floor.sh: {stamp}, {os.cpu_count()} CPUs, {os.uname().release}, SpinRate (60 frames deep) on CPU 1, {rounds} rounds")
    for m, (argv, per_s) in modes.items():
        med = statistics.median(ratios[m])
        what = "tick" if m == "ticks" else "sample"
        print(f"  {m:7s} ratio {med:.4f} ({min(ratios[m]):.4f}-{max(ratios[m]):.4f}): "
              f"{(1 - med) * 1e6 / per_s:5.1f} us of CPU 1 per {what}")
finally:
    spin.kill()
PY

#!/bin/bash
# What a Java sample costs by the depth of its Java stack: HotSpot's frames
# walked by BPF (--java-stacks bpf, the default) against the agent's path
# (--java-stacks agent: a signal from BPF, AsyncGetCallTrace in the JVM's
# handler), and native stacks only (--no-java) as the floor; mode
# bpf-nocache is the BPF walk with its blobs looked up afresh at every
# frame (JBPFPROF_BLOB_CACHE=0, bpf/hotspot.bpf.h's hotspot_blobs off).
#
#   [DEPTHS="10 50 150 250"] [MODES="native bpf agent"] bench/java_walk_cost.sh [ROUNDS]
#                               (root; python3, a JDK; default 5 rounds)
#
# For each DEPTH, SpinRate DEPTH (tests/workloads/java: a unit of work under
# DEPTH frames of Java recursion, its rate reported every 100 ms) runs pinned
# to CPU 1 and the profiler (-F 999 -v, 6 s) pinned to CPU 0, as in
# bench/sample_floor.sh. Each mode's 4 s window sits between two unprofiled
# 3 s ones; modes rotate from round to round. Per depth and mode, medians
# over rounds of:
#   - frames: SpinRate's frames in a sample, as the profile names them
#     (logical, inlined ones included) and, for the BPF walk (--annotate), as the
#     stack holds them (physical: the frames the walk steps through; C2
#     inlines one level of a recursion, so about half);
#   - BPF: the perf_event program's run time (sample_cpu, the kernel's
#     kernel.bpf_stats_enabled, from -v) per sample kept: for bpf the native
#     walk and the Java walk, for agent the native walk and the signal;
#   - handler: the agent's signal handler per call (its own clock, -v);
#   - CPU 1: what a sample costs the CPU it lands on, everything included
#     (the tick, the program, for agent the signal's delivery and the
#     handler): 1 - the spinner's rate profiled over unprofiled, divided by
#     the samples per second kept;
#   - walked: the share of samples with Java frames walked to the root (bpf;
#     a walk stops at 256 physical frames).
# JAVA picks the JVM (default Debian's 17).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -x build/jbpfprof ] && [ -f build/java/SpinRate.class ] || { echo "bench: run make first" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench: needs 2 CPUs" >&2; exit 1; }
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$old" >/proc/sys/kernel/bpf_stats_enabled' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
python3 - "$java" "$rounds" "${DEPTHS:-10 50 150 250}" "${MODES:-native bpf agent}" <<'PY'
import os, re, statistics, subprocess, sys, threading, time

java, rounds, depths, chosen = sys.argv[1], int(sys.argv[2]), [int(d) for d in sys.argv[3].split()], sys.argv[4].split()
all_modes = {
    "native": ["--no-java"],
    "bpf": ["--java-stacks", "bpf"],
    "bpf-nocache": ["--java-stacks", "bpf"],  # JBPFPROF_BLOB_CACHE=0: every blob looked up afresh
    "agent": ["--java-stacks", "agent"],
}
mode_env = {"bpf-nocache": {"JBPFPROF_BLOB_CACHE": "0"}}
unknown = [m for m in chosen if m not in all_modes]
if unknown:
    sys.exit(f"bench: no mode {' '.join(unknown)} (modes: {' '.join(all_modes)})")
modes = {m: all_modes[m] for m in chosen}
collapsed = "/tmp/java_walk_cost.%d.collapsed" % os.getpid()
now_ms = lambda: int(time.monotonic() * 1000)


def frames(path, annotated):
    """Mean SpinRate frames per sample: logical, and physical (inlined ones left out) where annotated."""
    n = logical = physical = 0
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            c = int(count)
            n += c
            for fr in stack.split(";"):
                if fr.startswith("SpinRate."):
                    logical += c
                    physical += c if not fr.endswith("_[i]") else 0
    return (logical / n if n else 0.0, physical / n if n and annotated else None)


def measure(depth):
    spin = subprocess.Popen(["taskset", "-c", "1", java, "-cp", "build/java", "SpinRate", str(depth)],
                            stdout=subprocess.PIPE, text=True)
    rates = []

    def read_rates():
        for line in spin.stdout:
            t, n = line.split()
            rates.append((int(t), int(n)))

    def window(seconds):
        start = now_ms()
        time.sleep(seconds)
        end = now_ms()
        units = [n for t, n in rates if start + 100 <= t <= end]
        return sum(units) / len(units)

    def run(mode):
        # --annotate makes the agent ask for every compiled method's maps (CompiledMethodLoad): bpf only.
        annotate = ["--annotate"] if mode.startswith("bpf") else []
        cmd = ["build/jbpfprof", "-v", "-F", "999"] + annotate + modes[mode] + \
              ["-p", str(spin.pid), "-d", "6", "-o", "collapsed", "-f", collapsed]
        p = subprocess.Popen(["taskset", "-c", "0"] + cmd, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, **mode_env.get(mode, {})))
        for line in p.stderr:
            if "jbpfprof: sampling" in line:
                break
        else:
            sys.exit(f"bench: {' '.join(cmd)} did not start")
        rate = window(4)
        log = p.stderr.read()
        if p.wait():
            sys.exit(f"bench: {' '.join(cmd)} failed:\n{log}")
        kept = int(re.search(r"samples kept (\d+)", log).group(1))
        over = float(re.search(r"of one CPU over ([0-9.]+) s", log).group(1))
        m = re.search(r"sample_cpu ([0-9.]+) ms \((\d+) runs", log)
        bpf_ns = float(m.group(1)) * 1e6 / kept if m and kept else float("nan")
        h = re.search(r"agent signal handler: \d+ calls, ([0-9.]+) us each", log)
        w = re.search(r"(\d+) of (\d+) JVM thread samples with Java frames, ([0-9.]+)% of them walked", log)
        logical, physical = frames(collapsed, bool(annotate))
        return {"rate": rate, "per_s": kept / over, "bpf_ns": bpf_ns,
                "handler_us": float(h.group(1)) if h else None,
                "walked": float(w.group(3)) if w else None,
                "with_java": 100.0 * int(w.group(1)) / max(int(w.group(2)), 1) if w else None,
                "logical": logical, "physical": physical,
                "summary": next((l for l in log.splitlines() if "samples taken" in l), "")}

    try:
        if spin.stdout.readline().strip() != "ready":
            sys.exit("bench: SpinRate did not start")
        threading.Thread(target=read_rates, daemon=True).start()
        window(8)  # the JIT compiles the spinner
        for mode in modes:  # the agent's attach, and every mode's first BPF load, outside the rounds
            run(mode)
        rows = {m: [] for m in modes}
        names = list(modes)
        for r in range(rounds):
            after = window(3)
            for k in range(len(names)):
                mode = names[(k + r) % len(names)]
                prev = after
                row = run(mode)
                after = window(3)
                row["ratio"] = row["rate"] * 2 / (prev + after)
                row["cpu_us"] = (1 - row["ratio"]) * 1e6 / row["per_s"]
                rows[mode].append(row)
        return rows
    finally:
        spin.kill()
        spin.wait()


def med(rows, key):
    vals = [r[key] for r in rows if r[key] is not None]
    return statistics.median(vals) if vals else None


fmt = lambda v, f: "-" if v is None else f % v
results = {}
for d in depths:
    results[d] = measure(d)
    for m, rows in results[d].items():
        print(f"  depth {d} {m}: " + ", ".join(
            f"ratio {r['ratio']:.4f} cpu {r['cpu_us']:.1f} us bpf {r['bpf_ns'] / 1e3:.1f} us" for r in rows), flush=True)
        print(f"    last summary: {rows[-1]['summary']}", flush=True)
try:
    os.unlink(collapsed)
except OSError:
    pass
print(f"java_walk_cost.sh: {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, {os.uname().release}, "
      f"SpinRate DEPTH on CPU 1, jbpfprof -F 999 on CPU 0, {rounds} rounds, medians")
print(f"{'depth':>5} {'mode':11} {'frames log/phys':>15} {'BPF us/sample':>13} {'handler us':>10} "
      f"{'CPU 1 us/sample':>15} {'ratio (range)':>22} {'walked %':>8}")
for d in depths:
    for m, rows in results[d].items():
        ratios = [r["ratio"] for r in rows]
        print(f"{d:5d} {m:11} {med(rows, 'logical'):7.1f}/{fmt(med(rows, 'physical'), '%.1f'):<7} "
              f"{med(rows, 'bpf_ns') / 1e3:13.2f} {fmt(med(rows, 'handler_us'), '%10.2f'):>10} "
              f"{med(rows, 'cpu_us'):15.1f} {statistics.median(ratios):8.4f} ({min(ratios):.4f}-{max(ratios):.4f}) "
              f"{fmt(med(rows, 'walked'), '%8.1f'):>8}")
PY

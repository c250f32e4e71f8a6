#!/bin/bash
# What the probes on virtual threads' unmounts and mounts cost a JVM that
# unmounts and mounts them as fast as it can: the yield rate of
# tests/workloads/java/VThreads.java yields N (each yield one unmount and
# one mount) with no profiler, with -e cpu (no probes: the baseline of a
# recording) and with -e wall (the probes on the freezes and thaws,
# bpf/vthreads.bpf.c), side by side on one JVM.
#
#   [N=8] [JAVA=...] bench/vthread_park_cost.sh [ROUNDS]   (root; a JDK 24+; default 5 rounds)
#
# Each round measures each mode for 4 s, in an order that rotates from
# round to round, from the JVM's own count of yields (printed every
# 500 ms). Prints per mode the median rate over rounds, the ratios wall/none
# and wall/cpu of each round's runs (their medians), and the CPU time a
# yield costs more under -e wall (the JVM keeps every CPU busy: CPUs / rate),
# from the medians; and from the last wall
# run the summary's mounts and the BPF programs' own run time per run
# (kernel.bpf_stats_enabled), which leaves out the uprobes' traps.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-5}
java=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
n=${N:-8}
[ -x build/jbpfprof ] && [ -f build/java/VThreads.class ] || { echo "bench: run make first" >&2; exit 1; }
[ -x "$java" ] || { echo "bench: no JDK 24 or later at $java (JAVA=...)" >&2; exit 1; }
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
out=$(mktemp -d)
"$java" -cp build/java VThreads yields "$n" >"$out/jvm.out" 2>&1 &
jvm=$!
trap 'kill $jvm 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$out"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for _ in $(seq 100); do grep -q '^ready' "$out/jvm.out" && break; sleep 0.1; done
grep -q '^ready' "$out/jvm.out" || { echo "bench: VThreads did not start" >&2; exit 1; }
sleep 3 # the JIT settles

# Yields a second over the counts the JVM printed since line $1 of its output.
rate_since() {
	tail -n +"$1" "$out/jvm.out" | awk '/^yields / { n[k++] = $2 } END {
		if (k < 3) exit 1; printf "%.0f\n", (n[k - 1] - n[1]) / ((k - 2) * 0.5) }'
}

# One 4 s run in mode $1: its yields a second.
run() {
	local from
	from=$(($(wc -l <"$out/jvm.out") + 1))
	case $1 in
	none) sleep 4 ;;
	cpu) build/jbpfprof -p $jvm -e cpu -d 4 -o collapsed -f "$out/p.collapsed" 2>"$out/cpu.err" >/dev/null ;;
	wall) build/jbpfprof -p $jvm -e wall -d 4 -v -o collapsed -f "$out/p.collapsed" 2>"$out/wall.err" >/dev/null ;;
	esac
	rate_since "$from"
}

for r in $(seq "$rounds"); do
	case $((r % 3)) in
	1) order="none cpu wall" ;;
	2) order="cpu wall none" ;;
	0) order="wall none cpu" ;;
	esac
	for m in $order; do
		run "$m" >>"$out/$m"
	done
	echo "round $r: none $(tail -1 "$out/none")/s, cpu $(tail -1 "$out/cpu")/s, wall $(tail -1 "$out/wall")/s"
done
none=$(median <"$out/none")
cpu=$(median <"$out/cpu")
wall=$(median <"$out/wall")
echo "yields a second (median of $rounds): none $none, -e cpu $cpu, -e wall $wall"
echo "wall/none per round: median $(ratio_median "$out/wall" "$out/none"); wall/cpu: median $(ratio_median "$out/wall" "$out/cpu")"
awk -v a="$wall" -v b="$cpu" -v cpus="$(nproc)" 'BEGIN { printf "a yield (an unmount and a mount) under -e wall costs %.0f ns of CPU more than under -e cpu\n", cpus * (1e9 / a - 1e9 / b) }'
grep -o "virtual threads: [^;]*" "$out/wall.err" || true
grep -E "vthread_(un)?mount" "$out/wall.err" || true

#!/bin/bash
# What walking a virtual thread's frozen frames costs a CPU sample: the
# BPF sampler's run time per sample on virtual threads whose outer frames
# are frozen in the heap at every sample (HotSpot thaws lazily), walked
# there (mode chunks, the default) or left frozen (mode frozen:
# JBPFPROF_VTHREAD_CHUNKS=0, the walk stops at the return barrier and goes
# on into the carrier), side by side on one JVM.
#
#   [N=10000] [JAVA=...] bench/vthread_walk_cost.sh [ROUNDS]   (root; a JDK 21+; default 5 rounds)
#
# tests/workloads/java/VThreads.java cpu N runs N virtual threads that work
# and yield; each round records it 4 s at -F 999 -v in each mode, in an
# order that rotates from round to round, and reads the sampler's run time
# per run (kernel.bpf_stats_enabled) and the Java frames per sample. Prints
# per mode the median over rounds, and the ratio chunks/frozen of each
# round's pair.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
java=${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
n=${N:-10000}
[ -x build/jbpfprof ] && [ -f build/java/VThreads.class ] || { echo "bench: run make first" >&2; exit 1; }
[ -x "$java" ] || { echo "bench: no JDK 21 or later at $java (JAVA=...)" >&2; exit 1; }
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
out=$(mktemp -d)
"$java" -cp build/java VThreads cpu "$n" >"$out/jvm.out" 2>&1 &
jvm=$!
trap 'kill $jvm 2>/dev/null; echo "$old" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$out"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for _ in $(seq 100); do grep -q '^ready' "$out/jvm.out" && break; sleep 0.1; done
grep -q '^ready' "$out/jvm.out" || { echo "bench: VThreads did not start" >&2; exit 1; }
sleep 3 # the JIT settles

# One recording: "ns_per_run frames_per_sample frozen_share" from its -v summary.
record() {
	local env=$1
	env $env build/jbpfprof -p $jvm -d 4 -F 999 -v -o collapsed -f "$out/p.collapsed" 2>"$out/err" >/dev/null
	python3 - "$out/err" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
ns = re.search(r"sample_cpu [0-9.]+ ms \(\d+ runs, (\d+) ns each\)", t)
frames = re.search(r"(\d+) physical Java frames", t)
samples = re.search(r"(\d+) samples taken", t)
virt = re.search(r"(\d+) on virtual threads, (\d+) of them with outer frames frozen", t)
if not (ns and frames and samples and virt):
    sys.exit("bench: no figures in the summary:\n" + t)
print(ns.group(1), int(frames.group(1)) / max(1, int(samples.group(1))), int(virt.group(2)) / max(1, int(virt.group(1))))
PY
}

declare -A ns frames frozen
ratios=()
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then order="chunks frozen"; else order="frozen chunks"; fi
	for m in $order; do
		if [ "$m" = chunks ]; then env=""; else env="JBPFPROF_VTHREAD_CHUNKS=0"; fi
		read -r a b c < <(record "$env")
		ns[$m]+="$a "
		frames[$m]+="$b "
		frozen[$m]+="$c "
		eval "last_$m=$a"
	done
	ratios+=("$(python3 -c "print($last_chunks / $last_frozen)")")
	echo "round $r: chunks $last_chunks ns, frozen $last_frozen ns"
done
python3 - "${ns[chunks]}" "${ns[frozen]}" "${frames[chunks]}" "${frames[frozen]}" "${frozen[chunks]}" "${frozen[frozen]}" "${ratios[*]}" <<'PY'
import statistics, sys
med = lambda s: statistics.median(float(x) for x in s.split())
for i, m in enumerate(("chunks", "frozen")):
    print(f"{m:7s} BPF {med(sys.argv[1 + i]):7.0f} ns a sample, {med(sys.argv[3 + i]):5.1f} Java frames a sample, "
          f"{100 * med(sys.argv[5 + i]):5.1f}% of virtual-thread samples left frozen")
print(f"chunks/frozen, per round: median {med(sys.argv[7]):.3f}")
PY

#!/bin/bash
# What the timeline (profile/timeline.c) costs in memory on a busy JVM: a
# JVM running CpuSplit (build/java) with THREADS busy threads (default 1,
# so one busy CPU, as docs/architecture.md states the cost) is recorded at
# 999 Hz with --threads for SECONDS into a pprof file, which keeps the
# times.
#
#   [THREADS=N] [FREQ=HZ] [JAVA=path] bench/timeline_memory.sh [SECONDS]
#                      (root; default 600 s)
#
# Measured: the profiler's own count of spans and stacks, and the bytes its
# timeline holds at the end (jbpfprof -v, "timeline:"; the spans' array as
# allocated, which doubles, so up to twice the spans' own 16 bytes each),
# the samples kept, and the profiler's peak RSS (/usr/bin/time). Printed
# with the spans per second and the cost per hour extrapolated from them,
# linearly: a span's 16 bytes times the spans of an hour at this rate.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
threads=${THREADS:-1}
freq=${FREQ:-999}
java=${JAVA:-java}
out=$(mktemp -d)
trap 'kill "$jvm" 2>/dev/null || true; rm -rf "$out"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "timeline_memory: needs root (BPF)" >&2; exit 1; }
"$java" -cp build/java CpuSplit -t "$threads" >"$out/jvm.log" 2>&1 &
jvm=$!
for _ in $(seq 100); do grep -q ready "$out/jvm.log" && break; sleep 0.1; done
grep -q ready "$out/jvm.log" || { echo "timeline_memory: CpuSplit did not start" >&2; exit 1; }
/usr/bin/time -f "peak_rss_kib %M" -o "$out/time" build/jbpfprof -p "$jvm" -F "$freq" -d "$seconds" --threads -v \
	-f "$out/rec.pb.gz" 2>"$out/prof.log"
line=$(grep "jbpfprof: timeline:" "$out/prof.log")
samples=$(sed -n 's/.*samples kept \([0-9]*\).*/\1/p' "$out/prof.log")
spans=$(echo "$line" | awk '{ print $3 }')
stacks=$(echo "$line" | awk '{ print $6 }')
bytes=$(echo "$line" | awk '{ print $8 }')
rss=$(awk '{ print $2 }' "$out/time")
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1);" \
	"kernel $(uname -r)"
echo "recording: CpuSplit -t $threads, $freq Hz, --threads, $seconds s"
echo "samples kept: $samples; spans: $spans of $stacks stacks; timeline holds $bytes bytes; profiler peak RSS $rss KiB"
awk -v s="$spans" -v st="$stacks" -v t="$seconds" -v n="$samples" 'BEGIN {
	printf "spans per s: %.1f (%.2f samples a span)\n", s / t, n / s
	printf "per hour at this rate: %.1f MB of spans (16 B each), plus 4 B a stack\n", s / t * 3600 * 16 / 1e6
}'

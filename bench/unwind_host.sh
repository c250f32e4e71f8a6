#!/bin/bash
# Unwind tables on a whole host: a JVM (JniDeflate, JDK 17), Debian's
# python3 running a loop, and whatever daemons the host runs.
#
#  1. Table memory if every process were profiled: every distinct
#     executable file mapped by any process now (from /proc/*/maps), each
#     table built once (build/bench/unwind_tables), summed: rows, bytes in
#     the BPF row array (16 per row: the kernel rounds each 12-byte row up
#     to 8), build time.
#  2. jbpfprof -a for DURATION s (default 20) at 19 Hz and at 99 Hz, with
#     each --unwind method: the profiler's own CPU time, BPF time per
#     sample (kernel.bpf_stats_enabled), user frames per sample, and with
#     tables the processes and files given tables, the rows and bytes
#     placed, the build time, and how the user stacks were walked.
#
#   bench/unwind_host.sh     (root; needs bpftool, python3 and the Java workloads: make all)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
prof=build/jbpfprof
java=${JAVA17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -x "$prof" ] && [ -r build/java/JniDeflate.class ] || { echo "bench: run make all first" >&2; exit 1; }
make -s build/bench/unwind_tables
tmp=$(mktemp -d)
old=$(cat /proc/sys/kernel/bpf_stats_enabled)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	echo "$old" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT
"$java" -cp build/java JniDeflate 1 >/dev/null 2>&1 &
pids+=($!)
/usr/bin/python3 -c 'while True: sum(i * i for i in range(10000))' &
pids+=($!)
sleep 3

echo "unwind_host.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), $(ls /proc | grep -c '^[0-9]') processes"
# 1. every executable file mapped now, once each (by device and inode).
# (A process may exit between the glob and the read: cat's failure is no error.)
{ cat /proc/[0-9]*/maps 2>/dev/null || true; } | awk '$2 ~ /x/ && $6 ~ /^\// { print $4 ":" $5, $6 }' |
	sort -u -k1,1 | awk '{ print $2 }' | sort -u >"$tmp/files"
mapfile -t files <"$tmp/files"
build/bench/unwind_tables -n 1 "${files[@]}" >"$tmp/tables" 2>/dev/null || true
awk 'NR > 1 && NF >= 8 { n++; ms += $2; rows += $5 } END {
	printf "  every process: %d executable files, %d rows, %.1f MiB in the BPF row array, %.0f ms to build\n",
	       n, rows, rows * 16 / 1048576, ms }' "$tmp/tables"
sort -k5 -n -r "$tmp/tables" | awk 'NF >= 8 && $1 != "file" { printf "    %-60s %9d rows\n", $1, $5 }' | head -5

# 2. -a at 19 and 99 Hz.
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for run in "19 tables" "19 fp" "99 tables" "99 fp"; do
	read -r hz method <<<"$run"
	rm -f "$tmp/err"
	mkfifo "$tmp/err"
	"$prof" -a -v -F "$hz" --unwind "$method" -d "${DURATION:-20}" -o collapsed -f "$tmp/a.collapsed" 2>"$tmp/err" &
	pp=$!
	exec 4<"$tmp/err"
	wait_for_sampling 4 || true
	sleep $((${DURATION:-20} - 2))
	bpftool prog show name sample_cpu -j >"$tmp/prog.json"
	cat <&4 >"$tmp/stderr"
	exec 4<&-
	wait "$pp"
	python3 - "$hz" "$method" "$tmp/prog.json" "$tmp/stderr" "$tmp/a.collapsed" <<'PY'
import json, re, sys
hz, method, prog, text = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), open(sys.argv[4]).read()
frames = samples = 0
for line in open(sys.argv[5]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames += len([f for f in stack.split(";")[1:] if not f.endswith("_[k]")]) * int(n)
    samples += int(n)
kept = re.search(r"samples kept (\d+)", text)
cpu = re.search(r"own CPU time ([\d.]+) s \(([\d.]+)%", text)
print(f"  -a at {hz} Hz, --unwind {method}: profiler {cpu.group(1)} s CPU ({cpu.group(2)}% of one CPU), "
      f"{prog['run_time_ns'] / max(int(kept.group(1)), 1):.0f} ns of BPF time per sample kept, "
      f"{frames / max(samples, 1):.1f} user frames per sample")
for line in text.splitlines():
    if line.startswith("jbpfprof: unwind table"):
        print("    " + line.split("jbpfprof: ", 1)[1])
    m = re.search(r"(user stacks: [^;]*?)( in [\d.]+ s)?$", line) or re.search(r"(user stacks: [^;]*)", line)
    if "samples taken" in line and m:
        print("    " + m.group(1))
PY
done

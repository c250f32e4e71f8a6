#!/bin/bash
# What profiling costs two threads that do nothing but wake each other:
# build/workloads/offcpu pingpong passes one byte back and forth through
# two pipes, so every round trip is two sleeps and two wake-ups, the worst
# case for a profiler that hooks the scheduler (-e wall).
#
#   [JBPFPROF=path] [BASELINE=path] [PINS="free pinned"] bench/pingpong.sh [ROUNDS]
#       (root; default 5 rounds; JBPFPROF: another build of the profiler,
#       default build/jbpfprof; BASELINE: a second build, say an earlier
#       commit's, whose -e wall runs in the same rounds as "wall-base", for
#       a before/after measured side by side; PINS: "pinned" alone skips the
#       unpinned rounds)
#
# Each round runs the workload four times, in turn (order rotated each
# round, so a drift in machine speed hits every mode alike): unprofiled,
# under -e wall, under -e wall --wakers (a program on every wakeup too) and
# under the default CPU sampling (99 Hz), each for
# RUN_S seconds. The profiler attaches with -p once the workload runs and
# records PROFILE_S seconds. The workload counts round trips in each second
# since its start ("bucket <i> <round trips>"); a profiled run's rate is the
# mean of the buckets wholly inside the recording (from its "sampling" line
# to PROFILE_S later, less 0.1 s as the recording started a moment before
# the line was read), so profiler start-up and write-out are not counted.
# An unprofiled run's rate is the mean of buckets 1 to PROFILE_S-1, about
# where a recording's buckets fall.
#
# Then the same again with the workload pinned to CPU 0 (taskset -c 0: both
# threads on one CPU, so a round trip is two context switches on one CPU,
# no cross-CPU wake-up; the profiler is not pinned). Unpinned, the rate
# depends on where the scheduler puts the two threads and varies a lot
# from run to run; pinned, it is steadier.
#
# Prints each mode's median rate (min, max) and the median of its per-round
# ratios to the unprofiled run of the same round.
#
# Unless FLOOR=0, two more modes with no profiler: "floor", an empty BPF
# program on the sched_switch tracepoint (bench/switch_floor.bpf.c, built
# by make bench), what any tracepoint program on every context switch
# costs before it does anything (the kernel fills the trace record and
# calls the program), the part of -e wall's cost no change in our programs
# can remove; and "floor-raw", the same on the raw tracepoint. (bpftrace's
# program on the same tracepoint is no floor: it cost a fifth of the round
# trips where an empty program costs a few percent.)
#
# Last, unless BPF_STATS=0, one more pinned run (-e wall, or STATS_ARGS:
# "-e wall --wakers" to see the wakeup program's part) with the kernel's
# BPF statistics on (kernel.bpf_stats_enabled, which slows every program a
# little, hence a run apart from the ratios): for each program the profiler
# loaded, its runs per round trip and its run time per run (run_time_ns /
# run_cnt, as bpftool shows them), and the BPF time per round trip and per
# context switch (two per round trip), over
# PROFILE_S - 2 seconds in the middle of the recording. Needs bpftool and
# python3; programs another tool loads meanwhile would be counted too.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# The profiler's messages before it samples go on to our stderr.
to_stderr() { case $1 in *"jbpfprof: sampling"*) ;; *) echo "$1" >&2 ;; esac; }
rounds=${1:-5}
run_s=${RUN_S:-8}
profile_s=${PROFILE_S:-5}
modes=(off wall wakers cpu)
floor=build/bench/switch_floor
if [ "${FLOOR:-1}" != 0 ]; then
	[ -x "$floor" ] && [ -f "$floor.bpf.o" ] || { echo "bench: run make bench first (or FLOOR=0)" >&2; exit 1; }
	modes+=(floor floor-raw)
fi
work=build/workloads/offcpu
prof=${JBPFPROF:-build/jbpfprof}
baseline=${BASELINE:-}
[ -n "$baseline" ] && modes+=(wall-base)
[ -x "$work" ] && [ -x "$prof" ] || { echo "bench: run make first" >&2; exit 1; }
((profile_s >= 2 && run_s >= profile_s + 2)) || { echo "bench: need PROFILE_S >= 2 and RUN_S >= PROFILE_S + 2" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run; prints its round trips per second. $1: a mode; $2: free or pinned.
run_once() {
	local mode=$1 line wp pp="" seen="" pin=() events=()
	[ "$2" = pinned ] && pin=(taskset -c 0)
	local run_prof=$prof
	[ "$mode" = wall ] && events=(-e wall)
	[ "$mode" = wakers ] && events=(-e wall --wakers)
	[ "$mode" = wall-base ] && events=(-e wall) && run_prof=$baseline
	mkfifo "$tmp/out"
	"${pin[@]}" "$work" pingpong "$run_s" >"$tmp/out" &
	wp=$!
	exec 3<"$tmp/out"
	read -r line <&3   # "ready": the round trips have started
	if [ "$mode" = floor ] || [ "$mode" = floor-raw ]; then
		mkfifo "$tmp/err"
		"$floor" "$floor.bpf.o" "$([ "$mode" = floor ] && echo tp || echo raw)" "$profile_s" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		wait_for_sampling 4 to_stderr || { echo "bench: switch_floor failed to start" >&2; kill "$wp"; exit 1; }
		seen=$(date +%s%N)
	elif [ "$mode" != off ]; then
		mkfifo "$tmp/err"
		"$run_prof" "${events[@]}" -p "$wp" -d "$profile_s" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		wait_for_sampling 4 to_stderr || { echo "bench: the profiler failed to start" >&2; kill "$wp"; exit 1; }
		seen=$(date +%s%N)
	fi
	cat <&3 >"$tmp/buckets"
	wait "$wp"
	exec 3<&-
	if [ -n "$pp" ]; then
		cat <&4 >/dev/null
		wait "$pp" || { echo "bench: the profiler failed" >&2; exit 1; }
		exec 4<&-
		rm -f "$tmp/err"
	fi
	rm -f "$tmp/out"
	awk -v seen="$seen" -v profile_s="$profile_s" '
		/^start_realtime_ns / { start = $2 }
		/^bucket / {
			if (seen == "") {
				keep = $2 >= 1 && $2 <= profile_s - 1
			} else {
				b = start + $2 * 1e9
				keep = b >= seen && b + 1e9 <= seen + (profile_s - 0.1) * 1e9
			}
			if (keep) { sum += $3; n++ }
		}
		END {
			if (!n) { print "bench: no whole second inside the recording" > "/dev/stderr"; exit 1 }
			printf "%.0f\n", sum / n
		}' "$tmp/buckets"
}


echo "pingpong.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $rounds rounds, runs of $run_s s, recordings of $profile_s s"
for pin in ${PINS:-free pinned}; do
	for ((r = 0; r < rounds; r++)); do
		for ((k = 0; k < ${#modes[@]}; k++)); do
			m=${modes[$(((k + r) % ${#modes[@]}))]}
			run_once "$m" "$pin" >>"$tmp/$pin-$m"
		done
	done
	[ "$pin" = free ] && echo "  unpinned (the scheduler places the two threads):" || echo "  pinned (taskset -c 0: both threads on CPU 0):"
	for m in "${modes[@]}"; do
		read -r med lo hi <<<"$(spread "$tmp/$pin-$m")"
		ratio=$(ratio_median "$tmp/$pin-$m" "$tmp/$pin-off")
		awk -v m="$m" -v med="$med" -v lo="$lo" -v hi="$hi" -v ratio="$ratio" 'BEGIN {
			printf "    %-10s median %8.0f round trips/s (min %.0f, max %.0f)  per-round ratio to off: median %.3f (%+.1f%%)\n",
				(m == "off" ? "off" : m == "wall" ? "-e wall" : m == "wakers" ? "--wakers" : m == "wall-base" ? "-e wall, BASELINE" : m == "cpu" ? "-e cpu" : m), med, lo, hi, ratio, (ratio - 1) * 100 }'
	done
done

[ "${BPF_STATS:-1}" = 0 ] && exit 0
# The BPF statistics of one pinned -e wall recording.
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
bpftool prog show -j >"$tmp/before.json"
mkfifo "$tmp/out" "$tmp/err"
taskset -c 0 "$work" pingpong "$run_s" >"$tmp/out" &
wp=$!
exec 3<"$tmp/out"
read -r line <&3
read -r -a stats_args <<<"${STATS_ARGS:--e wall}"
"$prof" "${stats_args[@]}" -p "$wp" -d "$profile_s" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
pp=$!
exec 4<"$tmp/err"
wait_for_sampling 4 to_stderr || { echo "bench: the profiler failed to start" >&2; kill "$wp"; exit 1; }
sleep 1
bpftool prog show -j >"$tmp/a.json"
a=$(date +%s%N)
sleep $((profile_s - 2))
bpftool prog show -j >"$tmp/b.json"
b=$(date +%s%N)
cat <&3 >"$tmp/buckets"
wait "$wp"
cat <&4 >/dev/null
wait "$pp" || { echo "bench: the profiler failed" >&2; exit 1; }
python3 - "$tmp" "$a" "$b" <<'PY'
import json, sys
tmp, a_ns, b_ns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def progs(path):
    return {p["id"]: p for p in json.load(open(path))}
before, a, b = progs(f"{tmp}/before.json"), progs(f"{tmp}/a.json"), progs(f"{tmp}/b.json")
start = None
trips = seconds = 0
for line in open(f"{tmp}/buckets"):
    f = line.split()
    if f[0] == "start_realtime_ns":
        start = int(f[1])
    elif f[0] == "bucket" and start is not None:
        t = start + int(f[1]) * 1e9
        if t >= a_ns and t + 1e9 <= b_ns:
            trips += int(f[2])
            seconds += 1
if not seconds:
    sys.exit("bench: no whole second between the two BPF snapshots")
rate = trips / seconds
print(f"  BPF statistics, pinned -e wall (bpf_stats on, {rate:.0f} round trips/s over {seconds} s):")
total = 0.0
for pid in sorted(b, key=lambda p: b[p].get("name", "")):
    if pid in before or pid not in a:
        continue
    runs = b[pid].get("run_cnt", 0) - a[pid].get("run_cnt", 0)
    ns = b[pid].get("run_time_ns", 0) - a[pid].get("run_time_ns", 0)
    if not runs:
        continue
    wall_s = (b_ns - a_ns) / 1e9
    per_trip = ns / wall_s / rate
    total += per_trip
    print(f"    {b[pid].get('name', '?'):20s} {runs / wall_s / rate:6.2f} runs per round trip, {ns / runs:5.0f} ns per run, "
          f"{per_trip:6.0f} ns per round trip")
print(f"    total {total:.0f} ns of BPF time per round trip of {1e9 / rate:.0f} ns ({100 * total * rate / 1e9:.1f}%), "
      f"{total / 2:.0f} ns per context switch (two per round trip)")
PY

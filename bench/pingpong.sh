#!/bin/bash
# What profiling costs two threads that do nothing but wake each other:
# build/workloads/offcpu pingpong passes one byte back and forth through
# two pipes, so every round trip is two sleeps and two wake-ups, the worst
# case for a profiler that hooks the scheduler (-e wall).
#
#   bench/pingpong.sh [ROUNDS]   (root; default 5 rounds)
#
# Each round runs the workload three times, in turn (order rotated each
# round, so a drift in machine speed hits every mode alike): unprofiled,
# under -e wall, and under the default CPU sampling (99 Hz), each for
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
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# The profiler's messages before it samples go on to our stderr.
to_stderr() { case $1 in *"jbpfprof: sampling"*) ;; *) echo "$1" >&2 ;; esac; }
rounds=${1:-5}
run_s=${RUN_S:-8}
profile_s=${PROFILE_S:-5}
modes=(off wall cpu)
work=build/workloads/offcpu
prof=build/jbpfprof
[ -x "$work" ] && [ -x "$prof" ] || { echo "bench: run make first" >&2; exit 1; }
((profile_s >= 2 && run_s >= profile_s + 2)) || { echo "bench: need PROFILE_S >= 2 and RUN_S >= PROFILE_S + 2" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run; prints its round trips per second. $1: a mode; $2: free or pinned.
run_once() {
	local mode=$1 line wp pp="" seen="" pin=() events=()
	[ "$2" = pinned ] && pin=(taskset -c 0)
	[ "$mode" = wall ] && events=(-e wall)
	mkfifo "$tmp/out"
	"${pin[@]}" "$work" pingpong "$run_s" >"$tmp/out" &
	wp=$!
	exec 3<"$tmp/out"
	read -r line <&3   # "ready": the round trips have started
	if [ "$mode" != off ]; then
		mkfifo "$tmp/err"
		"$prof" "${events[@]}" -p "$wp" -d "$profile_s" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
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
for pin in free pinned; do
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
				(m == "off" ? "off" : m == "wall" ? "-e wall" : "-e cpu"), med, lo, hi, ratio, (ratio - 1) * 100 }'
	done
done

#!/bin/bash
# Overhead of CPU profiling on a fixed amount of CPU-bound work.
#
#   [THREADS=N] bench/overhead.sh [RUNS] [MODE...]   (root; default 7 runs of: off 99 999)
#
# A MODE is "off", a frequency in Hz, or a frequency with "f" appended for
# --fixed-interval (no randomisation: fewer timer ticks, for comparison).
#
# Each run starts build/workloads/fixed_work (THREADS threads, default 2:
# every CPU of a 2-CPU machine, so the profiler's own work competes with the
# target; with 1, the profiler runs beside it and what remains is the cost
# inside the target's context), with fixed iterations,
# attaches the profiler when asked, then releases the work and reads the
# wall time the workload itself measured from start to end of its work, so
# profiler start-up and output writing are not counted. The modes run in
# turn within each round (unprofiled, 99 Hz, 999 Hz, order rotated each
# round) so a drift in machine speed hits them alike. Prints each mode's
# median, min and max, and the median of its per-round ratios to the
# unprofiled run of the same round.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
threads=${THREADS:-2}
runs=${1:-7}
shift || true
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(off 99 999)
work=build/workloads/fixed_work
prof=build/jbpfprof
[ -x "$work" ] && [ -x "$prof" ] || { echo "bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run; prints the work's elapsed ns. $1: a MODE.
run_once() {
	local hz=$1 line wp pp="" fixed=()
	case $1 in *[0-9]f) hz=${1%f} fixed=(--fixed-interval) ;; esac
	mkfifo "$tmp/out"
	"$work" -t "$threads" -n 1500000000 >"$tmp/out" &
	wp=$!
	exec 3<"$tmp/out"
	read -r line <&3   # "ready"
	if [ "$hz" != off ]; then
		mkfifo "$tmp/err"
		"$prof" -p "$wp" -F "$hz" "${fixed[@]}" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		# Release the work only once the profiler samples.
		wait_for_sampling 4 || { echo "bench: the profiler failed to start" >&2; kill "$wp"; exit 1; }
	fi
	kill -USR1 "$wp"
	read -r line <&3
	wait "$wp"
	exec 3<&-
	if [ -n "$pp" ]; then
		wait "$pp" || { echo "bench: the profiler failed" >&2; exit 1; }   # it stops when the workload exits
		exec 4<&-
		rm -f "$tmp/err"
	fi
	rm -f "$tmp/out"
	echo "${line#elapsed_ns }"
}


for ((r = 0; r < runs; r++)); do
	for ((k = 0; k < ${#modes[@]}; k++)); do
		m=${modes[$(((k + r) % ${#modes[@]}))]}
		run_once "$m" >>"$tmp/$m"
	done
done
echo "overhead.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $runs runs per mode, fixed_work -t $threads"
for m in "${modes[@]}"; do
	read -r med lo hi <<<"$(spread "$tmp/$m")"
	ratio=$(ratio_median "$tmp/$m" "$tmp/off")
	awk -v m="$m" -v med="$med" -v lo="$lo" -v hi="$hi" -v ratio="$ratio" 'BEGIN {
		printf "  %-12s median %.3f s (min %.3f, max %.3f)  per-round ratio to off: median %.4f (%+.2f%%)\n",
			(m == "off" ? "off" : m ~ /f$/ ? substr(m, 1, length(m) - 1) " Hz fixed" : m " Hz"),
			med / 1e9, lo / 1e9, hi / 1e9, ratio, (ratio - 1) * 100 }'
done

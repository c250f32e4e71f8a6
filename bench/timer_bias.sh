#!/bin/bash
# Timer bias: how far each sampler's share of a round strays from the CPU
# time the round really took. The unwind tests' workload
# (tests/workloads/nofp/qsort_printf.c, built with -DTIME_ROUNDS) measures
# each round's thread CPU time itself; it is profiled for 4 s at 499 Hz,
# alternately by jbpfprof alone (per-CPU cpu-clock timers) and by
# `perf record -e cpu-clock -F 499 --call-graph dwarf -p` alone (a per-task
# timer). Prints, per round, the median over RUNS of (sampled share -
# measured share) in percentage points for each, and the range.
#
#   bench/timer_bias.sh [RUNS]     (root; default 5; needs `make bench` and perf)
#
# WORKLOAD=PATH profiles another build of the workload (one printing the
# same "ROUND SHARE" lines when it stops).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
runs=${1:-5}
workload=${WORKLOAD:-build/bench/qsort_printf_timed}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$workload" ] || { echo "timer_bias.sh: $workload missing: run make bench first" >&2; exit 1; }
command -v perf >/dev/null || { echo "timer_bias.sh: perf missing (apt-get install linux-perf)" >&2; exit 1; }
echo "timer_bias.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $workload, 499 Hz, 4 s, $runs runs per tool"

# Appends "ROUND DIFF" lines to $tmp/<tool>: the tool's share minus the
# measured one, from the round counts in $1 and the workload's own in $2.
differences() {
	awk -v out="$tmp/$3" '
		FNR == NR { truth[$1] = $2; next }
		{ counts[$1] += $2; all += $2 }
		END { for (r in truth) printf "%s %.2f\n", r, 100 * counts[r] / all - truth[r] >> out }' "$2" "$1"
}

# Round counts ("ROUND N") of a collapsed file: each stack under its first round frame.
rounds_of_collapsed() { awk '{ n = $NF; if (match($0, /;[a-z]+_round(;| )/)) print substr($0, RSTART + 1, RLENGTH - 2), n }' "$1"; }

# The same of perf script's output (leaf first, a blank line after each sample): the outermost round.
rounds_of_perf() {
	awk '/^$/ { if (r != "") print r, 1; r = ""; next }
	     { sym = $2; sub(/\+.*/, "", sym); if (sym ~ /^[a-z]+_round$/) r = sym }' "$1"
}

for ((i = 0; i < runs; i++)); do
	for tool in jbpfprof perf; do
		"$workload" >/dev/null 2>"$tmp/truth" &
		wp=$!
		if [ "$tool" = jbpfprof ]; then
			build/jbpfprof -p "$wp" -F 499 -d 4 -o collapsed -f "$tmp/out.collapsed" 2>/dev/null
			rounds_of_collapsed "$tmp/out.collapsed" >"$tmp/counts"
		else
			perf record -q -e cpu-clock -F 499 --call-graph dwarf -p "$wp" -o "$tmp/perf.data" -- sleep 4 \
				2>/dev/null
			perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null >"$tmp/perf.script"
			rounds_of_perf "$tmp/perf.script" >"$tmp/counts"
		fi
		kill -TERM "$wp"
		wait "$wp" || true
		differences "$tmp/counts" "$tmp/truth" "$tool"
	done
done
printf '  %-13s %-26s %s\n' round "jbpfprof - truth (points)" "perf - truth (points)"
for round in sort_round format_round parse_round hash_round words_round copy_round; do
	line="  $(printf '%-13s' "$round")"
	for tool in jbpfprof perf; do
		awk -v r="$round" '$1 == r { print $2 }' "$tmp/$tool" >"$tmp/one"
		read -r med lo hi <<<"$(spread "$tmp/one")"
		line+="$(printf ' %+6.2f (%+.1f to %+.1f)      ' "$med" "$lo" "$hi")"
	done
	echo "$line"
done

#!/bin/bash
# Aliasing: a workload whose 50/30/20 phases repeat every 10 ms on the
# sampling timer's own clock (tests/workloads/cpu_split -w, one thread pinned
# per CPU), profiled at exactly 100 Hz on average, once with randomised
# intervals (the default) and once with --fixed-interval. Prints each
# function's measured share beside the truth the workload measured itself.
#
#   bench/aliasing.sh [SECONDS]     (root; default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "aliasing.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, cpu_split -t 2 -c 10 -p -w, 100 Hz, $seconds s"
for mode in randomised fixed; do
	extra=()
	[ "$mode" = fixed ] && extra=(--fixed-interval)
	build/workloads/cpu_split -t 2 -c 10 -p -w >"$tmp/truth" &
	wp=$!
	build/jbpfprof -p "$wp" -F 100 -d "$seconds" "${extra[@]}" -f "$tmp/out.collapsed" 2>/dev/null
	kill -TERM "$wp"
	wait "$wp" || true
	awk -v mode="$mode" '
		FNR == NR { if ($1 ~ /^share_/) { truth[$1] = $2; tsum += $2 } next }
		{ n = $NF; for (f in truth) if (index($0, ";" f ";") || index($0, ";" f " ")) { got[f] += n; sum += n } }
		END {
			printf "  %-10s", mode
			for (f in truth) printf "  %s %5.1f%% (truth %4.1f%%)", f, 100 * got[f] / sum, 100 * truth[f] / tsum
			printf "  [%d samples]\n", sum
		}' "$tmp/truth" "$tmp/out.collapsed"
done

#!/bin/bash
# What sampling Java heap allocations costs an allocation-heavy JVM:
# AllocSplit (tests/workloads/java) with two threads allocating a fixed
# amount, unprofiled, under jbpfprof -e alloc and under async-profiler's
# -e alloc at the same interval, side by side.
#
#   [JAVA=path] [PROF=path] [ASPROF=path] [ROUNDS_OF_WORK=N] bench/alloc_overhead.sh [RUNS] [MODE...]
#                            (root; default 7 runs of: off alloc, and aalloc with ASPROF)
#
# Modes: off (no profiler), alloc (jbpfprof -e alloc, the default interval,
# 512 KiB), aalloc (asprof start -e alloc --alloc 524288). Each run starts
# the JVM, waits for its "ready", starts the profiler and waits until it
# samples, then releases the work (the file AllocSplit waits for): each
# thread runs ROUNDS_OF_WORK rounds of 100 KiB (default 200000: 40 GB in
# all), on a fixed heap (-Xms1g -Xmx1g, so the collector's sizing does not
# vary from run to run), and AllocSplit itself measures the time from the first thread's
# start to the last one's end (elapsed_ns). The attach and the writing of
# the profile are not counted. A round runs every mode once, in an order
# rotated from round to round; the ratio of each mode to the unprofiled run
# of the same round is taken, and its median over the rounds printed, with
# the medians of the times and, for jbpfprof, the allocations its summary
# says were sampled.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh

[ "$(id -u)" = 0 ] || { echo "alloc_overhead.sh: run as root" >&2; exit 1; }
runs=${1:-7}
shift || true
modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then
	modes=(off alloc)
	[ -z "${ASPROF:-}" ] || modes+=(aalloc)
fi
java=${JAVA:-java}
prof=${PROF:-build/jbpfprof}
asprof=${ASPROF:-}
work=${ROUNDS_OF_WORK:-200000}
for m in "${modes[@]}"; do
	case $m in
	off | alloc) ;;
	aalloc) [ -x "$asprof" ] || { echo "alloc_overhead.sh: mode aalloc needs ASPROF=path of asprof" >&2; exit 1; } ;;
	*) echo "alloc_overhead.sh: unknown mode $m (off, alloc, aalloc)" >&2; exit 1 ;;
	esac
done
[ -f build/java/AllocSplit.class ] || { echo "alloc_overhead.sh: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run of mode $1: appends AllocSplit's elapsed ns to $tmp/$1, and for
# alloc the allocations sampled to $tmp/alloc.sampled.
run_once() {
	local mode=$1 line wp pp="" elapsed=""

	rm -f "$tmp/go" "$tmp/out"
	mkfifo "$tmp/out"
	"$java" -Xms1g -Xmx1g -cp build/java AllocSplit -t 2 -g "$tmp/go" -r "$work" >"$tmp/out" 2>/dev/null &
	wp=$!
	exec 3<"$tmp/out"
	read -r line <&3 || { echo "alloc_overhead.sh: the JVM failed to start" >&2; exit 1; }   # "ready"
	case $mode in
	alloc)
		rm -f "$tmp/err"
		mkfifo "$tmp/err"
		"$prof" -p "$wp" -e alloc -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		wait_for_sampling 4 || { echo "alloc_overhead.sh: the profiler failed to start" >&2; kill "$wp"; exit 1; }
		;;
	aalloc)
		"$asprof" start -e alloc --alloc 524288 -o collapsed -f "$tmp/a.collapsed" "$wp" >/dev/null 2>&1 ||
			{ echo "alloc_overhead.sh: asprof failed to start" >&2; kill "$wp"; exit 1; }
		;;
	esac
	touch "$tmp/go"
	while read -r line <&3; do
		case $line in
		elapsed_ns*) elapsed=${line#elapsed_ns } ;;
		done) break ;;
		esac
	done
	if [ -n "$pp" ]; then
		kill -INT "$pp"
		wait "$pp" || { echo "alloc_overhead.sh: the profiler failed" >&2; exit 1; }
		sed -n 's/^jbpfprof: \([0-9]*\) allocations sampled.*/\1/p' <&4 >>"$tmp/alloc.sampled"
		exec 4<&-
	fi
	[ "$mode" != aalloc ] || "$asprof" stop "$wp" >/dev/null 2>&1 || true
	kill "$wp"
	wait "$wp" 2>/dev/null || true
	exec 3<&-
	[ -n "$elapsed" ] || { echo "alloc_overhead.sh: AllocSplit gave no elapsed_ns" >&2; exit 1; }
	echo "$elapsed" >>"$tmp/$mode"
}

echo "alloc_overhead.sh: $(date +%F), $(nproc) CPUs, $(uname -r), $runs runs per mode," \
	"$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/ *java.runtime.version = //p'), AllocSplit -t 2 -r $work"
rotated_rounds "$runs" 2 "${modes[@]}"
for m in "${modes[@]}"; do
	print_times "$m" 7 2
	[ ! -f "$tmp/off" ] || printf '  per-round ratio to off: median %.4f' "$(ratio_median "$tmp/$m" "$tmp/off")"
	[ "$m" != alloc ] || printf '  allocations sampled: median %s' "$(median <"$tmp/alloc.sampled")"
	echo
done

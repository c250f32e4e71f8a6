#!/bin/bash
# What sampling native allocations costs a malloc-heavy C program:
# malloc_split (tests/workloads) with two threads asking the C library
# for a fixed amount of memory in calls of 16 bytes to 8 KiB, unprofiled
# and under jbpfprof -e nativemem, with and without --leaks, side by side.
#
#   [PROF=path] [ROUNDS_OF_WORK=N] [INTERVAL=SIZE] bench/nativemem_overhead.sh [RUNS] [MODE...]
#                            (root; default 7 runs of: off nativemem leaks)
#
# Modes: off (no profiler), nativemem (jbpfprof -e nativemem at the
# default interval, 512 KiB, or INTERVAL), leaks (the same with --leaks:
# the allocation functions probed by a uprobe session, which returns
# through a probe for the sampled calls only, and every free probed),
# perfprobe (no BPF at all: the kernel's own uprobe event on malloc alone,
# `perf probe` and `perf stat`, which count its hits: what a trap costs
# any uprobe-based sampler on this machine, the floor). Each run starts
# malloc_split, starts the profiler and waits
# until it samples, then releases the work (the file malloc_split waits
# for): each thread runs ROUNDS_OF_WORK rounds of 1 MiB (default 1000),
# and malloc_split measures the time from the first thread's start to the
# last one's end (elapsed_ns), and counts its calls. A round runs every
# mode once, in an order rotated from round to round; the ratio of each
# mode to the unprofiled run of the same round is taken, and its median
# over the rounds printed, with the medians of the times, the extra time
# per allocation call, and the profiler's own CPU (its -v line).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh

[ "$(id -u)" = 0 ] || { echo "nativemem_overhead.sh: run as root" >&2; exit 1; }
runs=${1:-7}
shift || true
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(off nativemem leaks)
prof=${PROF:-build/jbpfprof}
work=${ROUNDS_OF_WORK:-1000}
interval=${INTERVAL:-512k}
for m in "${modes[@]}"; do
	case $m in
	off | nativemem | leaks) ;;
	perfprobe) command -v perf >/dev/null || { echo "nativemem_overhead.sh: perfprobe needs perf (linux-perf)" >&2; exit 1; } ;;
	*) echo "nativemem_overhead.sh: unknown mode $m (off, nativemem, leaks, perfprobe)" >&2; exit 1 ;;
	esac
done
[ -x build/workloads/malloc_split ] || { echo "nativemem_overhead.sh: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
libc=$(ldd build/workloads/malloc_split | awk '/libc.so/ { print $3 }')
probe=
cleanup() {
	[ -z "$probe" ] || perf probe -q -d "$probe" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
if [[ " ${modes[*]} " == *" perfprobe "* ]]; then
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	perf probe -q -x "$libc" -a jbpfbench_malloc=malloc
	probe=probe_libc:jbpfbench_malloc
fi

# One run of mode $1: appends malloc_split's elapsed ns to $tmp/$1 and its calls to $tmp/calls.
run_once() {
	local mode=$1 line wp pp="" elapsed="" calls=""

	rm -f "$tmp/go" "$tmp/out"
	mkfifo "$tmp/out"
	build/workloads/malloc_split -t 2 -g "$tmp/go" -r "$work" -s 0 >"$tmp/out" &
	wp=$!
	exec 3<"$tmp/out"
	read -r line <&3 || { echo "nativemem_overhead.sh: malloc_split failed to start" >&2; exit 1; }   # "ready"
	if [ "$mode" = perfprobe ]; then
		perf stat -x, -e "$probe" -p "$wp" -o "$tmp/stat" &
		pp=$!
		sleep 1   # perf has no line that says it counts
	elif [ "$mode" != off ]; then
		rm -f "$tmp/err"
		mkfifo "$tmp/err"
		"$prof" -v -p "$wp" -e nativemem --alloc-interval "$interval" $([ "$mode" != leaks ] || echo --leaks) \
			-o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		wait_for_sampling 4 || { echo "nativemem_overhead.sh: the profiler failed to start" >&2; kill "$wp"; exit 1; }
	fi
	touch "$tmp/go"
	while read -r line <&3; do
		case $line in
		elapsed_ns*) elapsed=${line#elapsed_ns } ;;
		calls*) calls=${line#calls } ;;
		done) break ;;
		esac
	done
	if [ "$mode" = perfprobe ]; then
		kill -INT "$pp"
		wait "$pp" || true
		awk -F, '{ print $1 }' "$tmp/stat" | grep -E '^[0-9]+$' >>"$tmp/perfprobe.hits"
	elif [ -n "$pp" ]; then
		kill -INT "$pp"
		wait "$pp" || { echo "nativemem_overhead.sh: the profiler failed" >&2; exit 1; }
		sed -n 's/.*own CPU time [0-9.]* s (\([0-9.]*\)% of one CPU.*/\1/p' <&4 >>"$tmp/$mode.own"
		exec 4<&-
	fi
	wait "$wp" 2>/dev/null || true
	exec 3<&-
	[ -n "$elapsed" ] || { echo "nativemem_overhead.sh: malloc_split gave no elapsed_ns" >&2; exit 1; }
	echo "$elapsed" >>"$tmp/$mode"
	echo "$calls" >"$tmp/calls"
}

echo "nativemem_overhead.sh: $(date +%F), $(nproc) CPUs, $(uname -r), $runs runs per mode," \
	"malloc_split -t 2 -r $work, interval $interval"
rotated_rounds "$runs" 2 "${modes[@]}"
calls=$(cat "$tmp/calls")
echo "  malloc_split: $calls allocation calls (and as many frees) a run"
for m in "${modes[@]}"; do
	print_times "$m" 9 2
	med=$(median <"$tmp/$m")
	if [ -f "$tmp/off" ] && [ "$m" != off ]; then
		printf '  per-round ratio to off: median %.3f' "$(ratio_median "$tmp/$m" "$tmp/off")"
		# Two threads on two CPUs: the wall time added, per call of one thread, is the cost a call.
		printf ', %.0f ns more per call' "$(awk -v a="$med" -v b="$(median <"$tmp/off")" -v c="$calls" \
			'BEGIN { print (a - b) * 2 / c }')"
	fi
	[ ! -s "$tmp/$m.own" ] || printf ', profiler CPU median %s%% of one CPU' "$(median <"$tmp/$m.own")"
	[ ! -s "$tmp/$m.hits" ] || printf '; %s malloc hits counted, %.0f ns more per hit' "$(median <"$tmp/$m.hits")" \
		"$(awk -v a="$med" -v b="$(median <"$tmp/off")" -v c="$(median <"$tmp/$m.hits")" 'BEGIN { print (a - b) * 2 / c }')"
	echo
done

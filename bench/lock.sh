#!/bin/bash
# -e lock beside async-profiler's -e lock on a contended JVM: what each
# costs and what each shows.
#
#   [JAVA=path] [PROF=path] [ASPROF=path] [ROUNDS_OF_WORK=N] bench/lock.sh [RUNS] [MODE...]
#                            (root; default 5 runs of: off lock, and alock with ASPROF)
#
# Contention (tests/workloads/java) has a thread enter a monitor
# (Contention$Gate) that another holds 5 ms at a time, spinning (-s), and one
# take a ReentrantLock another holds 5 ms at a time, sleeping; each taker
# acquires ROUNDS_OF_WORK times (default 400) and measures its own waits
# (System.nanoTime around each acquire), and Contention the time from the
# first taker's start to the last one's end (elapsed_ns).
#
# Modes: off (no profiler), lock (jbpfprof -e lock), alock (asprof start
# -e lock --lock 0: every contended acquire, JVMTI's MonitorContendedEnter
# and the park blocker). Each run starts the JVM, starts the profiler and
# releases the work once it records. For each profiled run: the lock time
# it shows for each lock, against what the takers measured (jbpfprof's
# from its collapsed stacks, which end in the lock's class then the state;
# async-profiler's from its collapsed stacks with --total, nanoseconds,
# ending in the lock's class as it names it, "Contention$Gate_[i]" and
# "java.util.concurrent.locks.ReentrantLock$NonfairSync_[i]"), and
# elapsed_ns against the unprofiled run of the same round. Medians over
# the runs.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh

[ "$(id -u)" = 0 ] || { echo "lock.sh: run as root" >&2; exit 1; }
runs=${1:-5}
shift || true
modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then
	modes=(off lock)
	[ -z "${ASPROF:-}" ] || modes+=(alock)
fi
java=${JAVA:-java}
prof=${PROF:-build/jbpfprof}
asprof=${ASPROF:-}
work=${ROUNDS_OF_WORK:-400}
for m in "${modes[@]}"; do
	case $m in
	off | lock) ;;
	alock) [ -x "$asprof" ] || { echo "lock.sh: mode alock needs ASPROF=path of asprof" >&2; exit 1; } ;;
	*) echo "lock.sh: unknown mode $m (off, lock, alock)" >&2; exit 1 ;;
	esac
done
[ -f build/java/Contention.class ] || { echo "lock.sh: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The time (in the file's unit) of the stacks of collapsed file $1 whose
# frame $2 from the end (1: the last) is the class $3.
time_of_class() {
	awk -v back="$2" -v class="$3" '{
		n = split($0, f, ";"); split(f[n], last, " "); f[n] = last[1]
		if (n - back + 1 >= 1 && f[n - back + 1] == class) t += $NF
	} END { printf "%.0f\n", t }' "$1"
}

# One run of mode $1: elapsed ns to $tmp/$1; gate and lock times shown, and measured, to $tmp/$1.shown.
run_once() {
	local mode=$1 line wp pp="" elapsed="" gate="" lock=""

	rm -f "$tmp/go" "$tmp/out"
	mkfifo "$tmp/out"
	"$java" -cp build/java Contention -g "$tmp/go" -r "$work" -s >"$tmp/out" 2>/dev/null &
	wp=$!
	exec 3<"$tmp/out"
	read -r line <&3 || { echo "lock.sh: the JVM failed to start" >&2; exit 1; }   # "ready"
	case $mode in
	lock)
		rm -f "$tmp/err"
		mkfifo "$tmp/err"
		"$prof" -p "$wp" -e lock -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		wait_for_sampling 4 || { echo "lock.sh: the profiler failed to start" >&2; kill "$wp"; exit 1; }
		;;
	alock)
		"$asprof" start -e lock --lock 0 "$wp" >/dev/null 2>&1 ||
			{ echo "lock.sh: asprof failed to start" >&2; kill "$wp"; exit 1; }
		;;
	esac
	touch "$tmp/go"
	while read -r line <&3; do
		case $line in
		gate_waited_ns*) gate=${line#gate_waited_ns } ;;
		lock_waited_ns*) lock=${line#lock_waited_ns } ;;
		elapsed_ns*) elapsed=${line#elapsed_ns } ;;
		done) break ;;
		esac
	done
	if [ -n "$pp" ]; then
		kill -INT "$pp"
		wait "$pp" || { echo "lock.sh: the profiler failed" >&2; exit 1; }
		cat <&4 >/dev/null
		exec 4<&-
		# Microseconds; the class is the frame before the state.
		echo "$(time_of_class "$tmp/p.collapsed" 2 'Contention$Gate')000" \
			"$(time_of_class "$tmp/p.collapsed" 2 java.util.concurrent.locks.ReentrantLock)000" "$gate" "$lock" \
			>>"$tmp/$mode.shown"
	fi
	if [ "$mode" = alock ]; then
		"$asprof" stop -o collapsed --total -f "$tmp/a.collapsed" "$wp" >/dev/null 2>&1 || true
		echo "$(time_of_class "$tmp/a.collapsed" 1 'Contention$Gate_[i]')" \
			"$(time_of_class "$tmp/a.collapsed" 1 'java.util.concurrent.locks.ReentrantLock$NonfairSync_[i]')" \
			"$gate" "$lock" >>"$tmp/$mode.shown"
	fi
	kill "$wp"
	wait "$wp" 2>/dev/null || true
	exec 3<&-
	[ -n "$elapsed" ] || { echo "lock.sh: Contention gave no elapsed_ns" >&2; exit 1; }
	echo "$elapsed" >>"$tmp/$mode"
}

echo "lock.sh: $(date +%F), $(nproc) CPUs, $(uname -r), $runs runs per mode," \
	"$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/ *java.runtime.version = //p'), Contention -r $work"
rotated_rounds "$runs" 3 "${modes[@]}"
for m in "${modes[@]}"; do
	print_times "$m" 6 3
	[ ! -f "$tmp/off" ] || printf '  per-round ratio to off: median %.4f' "$(ratio_median "$tmp/$m" "$tmp/off")"
	echo
	if [ -f "$tmp/$m.shown" ]; then
		printf '         shown / measured by the takers, median: monitor %.3f, ReentrantLock %.3f\n' \
			"$(awk '{ print $3 ? $1 / $3 : 0 }' "$tmp/$m.shown" | median)" \
			"$(awk '{ print $4 ? $2 / $4 : 0 }' "$tmp/$m.shown" | median)"
	fi
done

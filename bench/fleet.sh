#!/bin/bash
# What fleet mode costs on a busy host: jbpfprof -a --continuous -F 19
# (--dir to a temporary directory, --keep 64M) on a host where this script
# starts 200 processes:
#   120 sleepers (sleep(1), C),
#    40 lightly busy C loops (about 1 ms of CPU every 100 ms; built here),
#    36 python3 loops (a little arithmetic every 100 ms),
#     4 JVMs (JDK 17) running a light loop (2 ms of CPU every 100 ms; built
#       here with the JDK's javac), on top of whatever the machine already runs.
#
#   bench/fleet.sh [SECONDS]        (root; default 60 s; make -j2 all first)
#   SOAK=1800 bench/fleet.sh        a soak: SOAK seconds, RSS every 30 s
#   BURSTS=1 SOAK=1800 ...          and every 5 minutes from 60 s, a 30 s burst
#                                   of short-lived processes with big, distinct
#                                   programs (gcc's cc1 on this tree's sources,
#                                   perl, python3, java -version): a build
#                                   passing through the host
#
# It reports:
#   - the profiler's CPU as % of one core, from /proc/PID/stat (utime +
#     stime of the whole process) between 5 s after its "sampling" line and
#     the end (start-up excluded: -a reads every process once), and over
#     the second half alone ("steady": after the first sample of each
#     process has had its tables built; in a soak, after 120 s);
#   - its VmRSS at the end and VmHWM (peak) from /proc/PID/status;
#   - each JVM's VmRSS before the profiler started and at the end: with an
#     agent attached (when -a attaches JVMs), the difference is the agent's
#     memory and the code it caused to be compiled and kept;
#   - under SOAK: VmRSS every 30 s, and its least-squares slope in KiB per
#     hour over the samples after the first 2 minutes (warm-up: tables fill);
#     with BURSTS, the samples taken during a burst and until the interval
#     cut after it (30 s + the interval) are the burst's: the slope and the
#     range "outside bursts" leave them out, and their peak is printed apart.
# Environment: PROF (default build/jbpfprof), JAVA (default JDK 17's java),
# INTERVAL (--interval, default 60s), EXTRA (more profiler options).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-60}
soak=${SOAK:-0}
[ "$soak" -gt 0 ] && duration=$soak
prof=${PROF:-build/jbpfprof}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
javac=$(dirname "$java")/javac
interval=${INTERVAL:-60s}
tck=$(getconf CLK_TCK)

[ "$(id -u)" = 0 ] || { echo "bench/fleet.sh: run as root" >&2; exit 1; }
[ -x "$prof" ] || { echo "bench/fleet.sh: no $prof (make -j2 all)" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
prof_pid=
cleanup() {
	[ -n "$prof_pid" ] && kill -TERM "$prof_pid" 2>/dev/null && wait "$prof_pid" 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/light.c" <<'EOF'
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(void)
{
	volatile unsigned long sink = 0;
	struct timespec nap = { 0, 99000000 };
	for (;;) {
		double end = now() + 0.001;
		while (now() < end)
			sink++;
		nanosleep(&nap, 0);
	}
}
EOF
cc -O1 -o "$tmp/light" "$tmp/light.c"
mkdir -p "$tmp/java"
cat >"$tmp/java/Light.java" <<'EOF'
public class Light {
	static volatile long sink;
	public static void main(String[] args) throws Exception {
		for (;;) {
			long end = System.nanoTime() + 2_000_000;
			while (System.nanoTime() < end)
				sink += Long.numberOfTrailingZeros(sink + 1);
			Thread.sleep(98);
		}
	}
}
EOF
"$javac" -d "$tmp/java" "$tmp/java/Light.java"

for i in $(seq 120); do sleep 100000 & pids+=($!); done
for i in $(seq 40); do "$tmp/light" & pids+=($!); done
for i in $(seq 36); do
	python3 -c 'import time
while True:
    sum(range(3000)); time.sleep(0.1)' & pids+=($!)
done
jvms=()
for i in $(seq 4); do "$java" -Xmx64m -cp "$tmp/java" Light & jvms+=($!); pids+=($!); done
sleep 5   # the JVMs' start-up, before their RSS is taken
declare -A jvm_before
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
for j in "${jvms[@]}"; do jvm_before[$j]=$(rss_kib "$j"); done

cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# Its stderr to a file, never a pipe nobody reads: a full pipe would stop the profiler.
# -v: its end-of-run figures (tables held, CPU) and a line per interval.
"$prof" -a --continuous -F 19 -v --interval "$interval" --dir "$tmp/out" --keep 64M ${EXTRA:-} >"$tmp/stderr" 2>&1 &
prof_pid=$!   # (others may run a profiler too: no pgrep)
for i in $(seq 600); do
	grep -q "jbpfprof: sampling" "$tmp/stderr" && break
	kill -0 "$prof_pid" 2>/dev/null || { cat "$tmp/stderr" >&2; exit 1; }
	sleep 0.1
done
sleep 5
t0=$(date +%s.%N)
c0=$(cpu_ticks "$prof_pid")
cpu_since() { # ticks0 t0: % of one core since then
	awk -v c="$(($(cpu_ticks "$prof_pid") - $1))" -v t0="$2" -v t1="$(date +%s.%N)" -v hz="$tck" \
		'BEGIN { printf "%.2f%% of one core over %.0f s", 100 * c / hz / (t1 - t0), t1 - t0 }'
}
echo "bench/fleet.sh: $(date -u +%FT%TZ), $(nproc) CPUs, $(ls /proc | grep -c '^[0-9]') processes, ${duration} s, $prof -a --continuous -F 19 --interval $interval"
burst() { # 30 s of short-lived processes, each a big program of its own
	local end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ]; do
		for f in user/record/unwinder.c user/java/java.c output/pprof.c; do
			gcc -O2 -fsyntax-only -I. -Ibuild -Iuser "$f" 2>/dev/null &
		done
		perl -e 'my $s = 0; $s += $_ for 1 .. 3000000' &
		"$java" -version 2>/dev/null &
		python3 -c 'import json, decimal; sum(range(3000000))' &
		wait
	done
}
if [ "$soak" -gt 0 ]; then
	: >"$tmp/soak"
	start=$(date +%s)
	burst_start=
	next_burst=60
	interval_s=${interval%s}
	case $interval_s in '' | *[!0-9]*) interval_s=60 ;; esac
	while [ $(($(date +%s) - start)) -lt "$duration" ]; do
		now=$(($(date +%s) - start))
		# A profiler that died says so, with the end of what it printed.
		if ! kill -0 "$prof_pid" 2>/dev/null; then
			rc=0; wait "$prof_pid" 2>/dev/null || rc=$?
			echo "bench/fleet.sh: the profiler exited (status $rc) at t=${now}s; its last lines:" >&2
			tail -20 "$tmp/stderr" >&2
			prof_pid=
			exit 1
		fi
		r=$(rss_kib "$prof_pid")
		# A burst's memory is let go at the first interval's cut after it: until then a sample is the burst's.
		in_burst=0
		if [ -n "$burst_start" ] && [ $((now - burst_start)) -lt $((30 + interval_s)) ]; then in_burst=1; fi
		if [ -n "${BURSTS:-}" ] && [ "$now" -ge "$next_burst" ]; then
			burst &
			burst_start=$now
			next_burst=$((next_burst + 300))
			echo "  t=${now}s a burst starts"
		fi
		echo "$now $r $in_burst" >>"$tmp/soak"
		echo "  t=${now}s VmRSS ${r} KiB$([ "$in_burst" = 1 ] && echo " (burst)")"
		if [ -z "${cm:-}" ] && [ "$now" -ge 120 ]; then cm=$(cpu_ticks "$prof_pid"); tm=$(date +%s.%N); fi
		sleep 30
	done
	# The slope over the samples outside bursts: what the profiler keeps, not what a burst needs meanwhile.
	awk '$1 >= 120 && $3 == 0 { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
	     END { if (n < 2) { print "soak: too few samples after the warm-up"; exit }
		   b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
		   printf "soak: VmRSS slope %.1f KiB/hour (least squares over %d samples after 120 s, outside bursts)\n", b * 3600, n }' "$tmp/soak"
	awk '$1 >= 120 && $3 == 0 { if (!n++ || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } $3 == 1 && $2 > peak { peak = $2 }
	     END { if (n) printf "soak: VmRSS outside bursts after 120 s %.1f to %.1f MiB%s\n", lo / 1024, hi / 1024, peak ? sprintf("; during bursts up to %.1f MiB", peak / 1024) : "" }' "$tmp/soak"
else
	sleep $((duration / 2))
	cm=$(cpu_ticks "$prof_pid")
	tm=$(date +%s.%N)
	sleep $((duration - duration / 2))
fi
# The second half (after 120 s in a soak): the processes' tables are built by then.
[ -n "${cm:-}" ] && echo "profiler CPU, steady: $(cpu_since "$cm" "$tm")"
c1=$(cpu_ticks "$prof_pid")
t1=$(date +%s.%N)
awk -v c="$((c1 - c0))" -v t0="$t0" -v t1="$t1" -v hz="$tck" \
	'BEGIN { printf "profiler CPU: %.2f%% of one core over %.0f s\n", 100 * c / hz / (t1 - t0), t1 - t0 }'
awk '/^Vm(RSS|HWM):/ { printf "profiler %s %.1f MiB\n", $1, $2 / 1024 }' "/proc/$prof_pid/status"
for j in "${jvms[@]}"; do
	after=$(rss_kib "$j")
	echo "JVM $j VmRSS: $((jvm_before[$j] / 1024)) MiB before, $((after / 1024)) MiB at the end ($(((after - jvm_before[$j]) / 1024)) MiB more)"
done
echo "--dir: $(ls "$tmp/out" | wc -l) files, $(du -sk "$tmp/out" | cut -f1) KiB"
kill -TERM "$prof_pid"
wait "$prof_pid" 2>/dev/null || true
grep -E "own CPU|symbolizer:|unwind tables:|unwind table cache:|agents:|interval [0-9]+:" "$tmp/stderr" | tail -8 || true
echo "profiler stderr: $(wc -l <"$tmp/stderr") lines"
prof_pid=

#!/bin/bash
# What a wall-clock recording costs a JVM whose threads do nothing: a JVM
# running ParkedThreads (tests/workloads/java, in build/java) parks THREADS
# threads (default 1000) for good, and each run records it for SECONDS.
#
#   [THREADS=N] [JAVA=path] [ASPROF=path/to/asprof] [BASELINE=path/to/other/jbpfprof]
#       bench/wall_idle_java.sh [SECONDS] [ROUNDS]
#                      (root; default 30 s, 3 rounds; needs python3)
#
# Modes, rotated each round so that a drift in the machine's load hits them
# alike: off (nothing attached, the same length of time), jbpfprof
# (build/jbpfprof -e wall -p PID -d SECONDS), baseline (the same with the
# binary BASELINE names, say one built from an earlier commit, for a
# before/after measured side by side), and, when ASPROF is given,
# async-profiler's wall-clock mode at its default interval (asp) and at
# 10 ms (asp10). Every run gets a fresh JVM, started and left to settle
# before the measurement, so every attach is a first attach.
#
# For each run, from the profiler's start to its exit (start-up, attach,
# the end-of-recording stacks and the output included):
#   - busy: the whole machine's busy time from /proc/stat (everything but
#     idle and iowait), in seconds of one CPU, less the off run's rate
#     times the same length: what profiling added to the whole machine
#     (others' load on a shared machine makes this noisy);
#   - prof: the profiler process's CPU time (jbpfprof's own, from its -v
#     line; asprof's launcher, from bash's times);
#   - jvm: the JVM's CPU time (/proc/PID/stat), less the off run's rate
#     (async-profiler samples from inside the JVM: its cost is here);
#   - bpf: jbpfprof's BPF programs' run time, as the kernel counts it
#     (kernel.bpf_stats_enabled) and jbpfprof's -v line "BPF run time"
#     reports it: read by the profiler itself, so that nothing else runs
#     on the machine during the measurement.
# Prints each run, then each mode's medians, in seconds and in % of one
# CPU over SECONDS. The aim: the whole recording at most 0.5% of one CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
seconds=${1:-30}
rounds=${2:-3}
threads=${THREADS:-1000}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
asprof=${ASPROF:-}
prof=build/jbpfprof
[ -x "$prof" ] && [ -f build/java/ParkedThreads.class ] || { echo "wall_idle_java.sh: run make all first" >&2; exit 1; }
[ -x "$java" ] || { echo "wall_idle_java.sh: no JDK at $java (set JAVA)" >&2; exit 1; }
baseline=${BASELINE:-}
modes=(off jbpfprof)
[ -n "$baseline" ] && modes+=(baseline)
[ -n "$asprof" ] && modes+=(asp asp10)
tmp=$(mktemp -d)
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
jp=""
trap '[ -n "$jp" ] && kill "$jp" 2>/dev/null; echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled

busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
jvm_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

# Starts a JVM and waits for its "ready" (every thread parked) and one
# heartbeat after it, so its start-up is over; sets jp.
start_jvm() {
	local line
	rm -f "$tmp/jout"
	mkfifo "$tmp/jout"
	"$java" -cp build/java ParkedThreads "$threads" >"$tmp/jout" &
	jp=$!
	exec 3<"$tmp/jout"
	while read -r line <&3; do [ "$line" = "beat 2" ] && break; done
	[ "$line" = "beat 2" ] || { echo "wall_idle_java.sh: the JVM did not start" >&2; exit 1; }
	# Keep reading the heartbeats so the JVM never blocks on a full pipe.
	cat <&3 >"$tmp/beats" &
	exec 3<&-
}

stop_jvm() {
	kill "$jp"
	wait "$jp" 2>/dev/null || true
	jp=""
}

# One run of mode $1; appends "mode window_ns busy_ticks jvm_ticks prof_s bpf_ms beats" to $tmp/rows.
run_once() {
	local mode=$1 t0 t1 b0 b1 j0 j1 prof_s=0 bpf_ms=0 beats
	start_jvm
	t0=$(date +%s%N); b0=$(busy_ticks); j0=$(jvm_ticks "$jp")
	case $mode in
	off) sleep "$seconds" ;;
	jbpfprof | baseline)
		local bin=$prof
		[ "$mode" = baseline ] && bin=$baseline
		"$bin" -v -e wall -p "$jp" -d "$seconds" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" ||
			{ echo "wall_idle_java.sh: jbpfprof failed:" >&2; cat "$tmp/err" >&2; exit 1; }
		prof_s=$(sed -n 's/.*own CPU time \([0-9.]*\) s.*/\1/p' "$tmp/err")
		bpf_ms=$(sed -n 's/.*BPF run time \([0-9.]*\) ms.*/\1/p' "$tmp/err")
		echo "  $mode BPF run time by program: $(sed -n 's/.*BPF run time [0-9.]* ms in [0-9]* runs: //p' "$tmp/err")"
		;;
	asp | asp10)
		local interval=()
		[ "$mode" = asp10 ] && interval=(-i 10ms)
		prof_s=$( { TIMEFORMAT='%U %S'; time "$asprof" -e wall "${interval[@]}" -d "$seconds" -o collapsed \
			-f "$tmp/a.collapsed" "$jp" >/dev/null 2>"$tmp/err"; } 2>&1 | awk '{ print $1 + $2 }') ||
			{ echo "wall_idle_java.sh: asprof failed:" >&2; cat "$tmp/err" >&2; exit 1; }
		;;
	esac
	t1=$(date +%s%N); b1=$(busy_ticks); j1=$(jvm_ticks "$jp")
	beats=$(grep -c '^beat' "$tmp/beats" || true)
	stop_jvm
	echo "$mode $((t1 - t0)) $((b1 - b0)) $((j1 - j0)) ${prof_s:-0} ${bpf_ms:-0} $beats" >>"$tmp/rows"
}

echo "wall_idle_java.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $("$java" -version 2>&1 | head -1)," \
	"$threads parked threads, $seconds s recordings, $rounds rounds"
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#modes[@]}; k++)); do
		run_once "${modes[$(((k + r) % ${#modes[@]}))]}"
	done
done
python3 - "$tmp/rows" "$seconds" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
rows, seconds, hz = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
runs = [l.split() for l in open(rows)]
off = [r for r in runs if r[0] == "off"]
# The machine's and the JVM's busy rate with nothing attached, in CPU seconds per second.
busy_rate = statistics.median(int(r[2]) / hz / (int(r[1]) / 1e9) for r in off)
jvm_rate = statistics.median(int(r[3]) / hz / (int(r[1]) / 1e9) for r in off)
by_mode = {}
for mode, window_ns, busy, jvm, prof_s, bpf_ms, beats in runs:
    window = int(window_ns) / 1e9
    row = {
        "window": window,
        "busy": int(busy) / hz - busy_rate * window,
        "jvm": int(jvm) / hz - jvm_rate * window,
        "prof": float(prof_s),
        "bpf": float(bpf_ms) / 1e3,
    }
    by_mode.setdefault(mode, []).append(row)
    print(f"  {mode:9s} window {window:6.2f} s: added busy {row['busy']:+.3f} s, profiler {row['prof']:.3f} s, "
          f"JVM {row['jvm']:+.3f} s, BPF {row['bpf']:.3f} s; JVM heartbeats {beats}")
print(f"  off: machine busy {busy_rate * 100:.1f}% of one CPU, JVM {jvm_rate * 100:.2f}%")
for mode, rs in by_mode.items():
    if mode == "off":
        continue
    med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
    own = med["prof"] + med["jvm"] + med["bpf"]
    print(f"  {mode:9s} medians: added machine busy {med['busy']:+.3f} s ({100 * med['busy'] / seconds:+.2f}% of one CPU "
          f"over {seconds:.0f} s); profiler {med['prof']:.3f} s + JVM {med['jvm']:+.3f} s + BPF {med['bpf']:.3f} s "
          f"= {own:.3f} s ({100 * own / seconds:.2f}%)")
PY

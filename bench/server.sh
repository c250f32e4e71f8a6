#!/bin/bash
# What profiling costs a busy Java server: Debian's Tomcat 10 under Debian's
# wrk on loopback, requests per second unprofiled against each profiling
# mode, side by side.
#
#   bench/server.sh [ROUNDS] [ASPROF]   (root; default 4 rounds; needs tomcat10, wrk,
#                                        bpftool, curl and python3)
#
# Tomcat runs from /usr/share/tomcat10 with a CATALINA_BASE of its own in a
# temporary directory, on a free loopback port, serving one small JSP (a few
# string and map operations per request, so that requests run Java code;
# no HTTP session: wrk sends no cookie, so a session per request would fill
# the heap within minutes and the rounds would measure the garbage
# collector).
# After a warm-up (JIT), each round runs every mode once, in an order rotated
# from round to round: wrk -t2 -c20 -d8s against
#
#   none        no profiler
#   F99, F999   jbpfprof -F 99, -F 999: Java stacks walked by BPF (the
#               default, --java-stacks bpf), nothing loaded into the JVM
#   F99agent, F999agent   the same with --java-stacks agent: the JVMTI
#               agent, AsyncGetCallTrace through a signal from BPF
#   nojava999   jbpfprof -F 999 --no-java: native and kernel stacks only
#   threads999  jbpfprof -F 999 --threads: stacks under their threads, named
#               as the JVM names them (with MODES=, bench/thread_names.sh)
#   nonames999  the same with JBPFPROF_THREAD_NAMES=0: the kernel's names
#               (with MODES=, bench/thread_names.sh)
#   wall        jbpfprof -e wall (BPF walks the Java stack of a walked JVM's
#               thread at each recorded switch-out)
#   wakers      jbpfprof -e wall --wakers: the same, and a program on every
#               wakeup of the host, reading the waker's stacks of each
#               recorded wait (with MODES=)
#   lock        jbpfprof -e lock: every wait of the JVM's threads recorded,
#               those for a lock kept (with MODES=)
#   wallagent   jbpfprof -e wall --java-stacks agent (not in the default
#               rotation, with MODES=)
#   nojava      jbpfprof -F 99 --no-java (with MODES=)
#   nativemem, leaks   jbpfprof -e nativemem, with --leaks for the second:
#               the JVM's native allocations, uprobes on its malloc and kin
#               (with MODES=)
#   ticks999    build/bench/tick_only on every CPU at 999 Hz: the timer
#               interrupts alone, no program (the floor of any sampler
#               driven by them; with MODES=, after make bench)
#   ap99, ap999, apwall   async-profiler at the same settings (asprof -e cpu
#               -i 10101010 / 1001001 ns, asprof -e wall), when ASPROF, the path
#               of its asprof, is given
#
# The profiler starts before wrk and ends after it. Every profiled run is
# sandwiched between unprofiled ones (a round: none, mode, none, mode, ...,
# none), and its ratio is its requests per second over the mean of the two
# unprofiled runs beside it, seconds away: this machine's throughput drifts
# by 10% or more over minutes, far more than within one sandwich. Each
# mode's figure is the median of its ratios over rounds. For the jbpfprof
# modes, the share of the JVM's samples with Java frames (from the
# summary: "N of M JVM thread samples with Java frames" for the BPF walk,
# "Java stacks: J of N joined ..., V on VM threads" for the agent, J over
# N + V), and the kernel's BPF
# statistics (kernel.bpf_stats_enabled) over the wrk run give the BPF time
# of the profiler's programs as a share of one CPU, and apart the system call
# exit programs' runs and time (0 where BPF task work pays the deferred
# signals, see bpf/deferral.bpf.h). After the table, each jbpfprof mode's
# last run: its summary's Java part, and its BPF programs' run time over the
# whole recording (-v: runs and ns per run of each program, e.g. the
# sched_switch program's under -e wall), and the median over the rounds of
# the profiler's own CPU (-v's "own CPU time", as a share of one CPU).
#
# PROFILER=path measures another build (for example one of main, for a
# before and after); BASELINE=path adds "wallbase" and "F999base", the -e
# wall and the -F 999 of a second build in the same rounds (a before and
# after side by side); MODES="none wall ..." runs only those modes, so
# that more rounds fit in the time;
# JAVA_HOME picks the JDK (default Debian's 17). On a shared or noisy
# machine, figures are provisional: use more rounds.
#
# Two jbpfprof modes that differ in one thing are also compared round by
# round: F999 over nojava999 (what the Java walk costs a busy server),
# threads999 over nonames999 (what the JVM's thread names cost),
# F999 over F999agent, and each mode over its *base (a before and after),
# when both ran: the median of the per-round ratio of their ratios (each
# already relative to the unprofiled runs beside it), its range, and the
# rounds in which the first did at least as well as the second.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/tomcat.sh

rounds=${1:-4}
asprof=${2:-}
prof=${PROFILER:-build/jbpfprof}
baseline=${BASELINE:-}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
seconds=${SERVER_SECONDS:-8}
[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$prof" ] || { echo "bench: $prof not built (make)" >&2; exit 1; }
for tool in wrk bpftool curl python3; do
	command -v "$tool" >/dev/null || { echo "bench: needs $tool (apt-get install $tool)" >&2; exit 1; }
done
[ -z "$(tomcat_missing)" ] || { echo "bench: $(tomcat_missing)" >&2; exit 1; }
[ -z "$asprof" ] || [ -x "$asprof" ] || { echo "bench: $asprof is not executable" >&2; exit 1; }

tmp=$(mktemp -d)
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
	tomcat_stop
	echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled
	rm -rf "$tmp"
}
trap cleanup EXIT

# One small JSP: a few string and map operations per request.
tomcat_start "$tmp" '<%@ page session="false" import="java.util.*" %><%
	Map<String, Integer> words = new TreeMap<>();
	String text = "the quick brown fox jumps over the lazy dog " + request.getQueryString();
	for (String w : text.split(" "))
		words.merge(w, 1, Integer::sum);
	out.print(words);
%>'
jvm=$tomcat   # catalina.sh run execs java
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# Requests per second of one wrk run.
load() { wrk -t2 -c20 -d${seconds}s "$url" | awk '/^Requests\/sec:/ { print $2 }'; }

# Every BPF program's statistics, into $1.
bpf_snapshot() { bpftool prog show -j >"$1"; }

# One run of jbpfprof with arguments $2...; requests/s into $tmp/$1, BPF figures into $tmp/$1.bpf.
run_jbpfprof() {
	local mode=$1 rps
	shift
	bpf_snapshot "$tmp/before.json"
	rm -f "$tmp/err"
	mkfifo "$tmp/err"
	"${run_prof:-$prof}" -v "$@" -p "$jvm" -d $((seconds + 4)) -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
	local pp=$!
	exec 4<"$tmp/err"
	wait_for_sampling 4 || { echo "bench: the profiler failed to start" >&2; exit 1; }
	bpf_snapshot "$tmp/a.json"
	rps=$(load)
	bpf_snapshot "$tmp/b.json"
	cat <&4 >"$tmp/log"
	exec 4<&-
	wait "$pp" || { echo "bench: the profiler failed:" >&2; cat "$tmp/log" >&2; exit 1; }
	echo "$rps" >>"$tmp/$mode"
	python3 - "$tmp" "$seconds" >>"$tmp/$mode.bpf" <<'PY'
import json, sys
tmp, seconds = sys.argv[1], float(sys.argv[2])
def progs(path):
    return {p["id"]: p for p in json.load(open(path))}
before, a, b = progs(f"{tmp}/before.json"), progs(f"{tmp}/a.json"), progs(f"{tmp}/b.json")
ours = [p for p in b if p not in before and p in a]
def diff(ids, key):
    return sum(b[p].get(key, 0) - a[p].get(key, 0) for p in ids)
exits = [p for p in ours if b[p].get("name", "").startswith("syscall_exit")]
print(diff(ours, "run_time_ns") / seconds / 1e9 * 100, diff(exits, "run_cnt") / seconds,
      diff(exits, "run_time_ns") / seconds / 1e9 * 100)
PY
	[ -s "$tmp/deferral" ] || grep -h "deferred signals and stacks" "$tmp/log" | head -1 >"$tmp/deferral" || true
	# The share of the JVM's samples with Java frames, and the summary's Java part of the latest run.
	sed -n 's/.* \([0-9]*\) of \([0-9]*\) JVM thread samples with Java frames.*/\1 \2 0/p;
		s/.*Java stacks: \([0-9]*\) of \([0-9]*\) joined[^,]*, \([0-9]*\) on VM threads.*/\1 \2 \3/p' "$tmp/log" |
		head -1 | awk '{ if ($2 + $3) printf "%.1f\n", 100 * $1 / ($2 + $3) }' >>"$tmp/$mode.java"
	grep -o 'Java stacks: .*\|[0-9]* of [0-9]* JVM thread samples with Java frames.*' "$tmp/log" | head -1 >"$tmp/$mode.summary" || true
	grep -h 'BPF run time' "$tmp/log" | head -1 >"$tmp/$mode.programs" || true
	# Request threads under their whole names ("[http-nio-ADDRESS-PORT-exec-N"; the kernel's is cut at 15 bytes).
	grep -o '^\[http-nio-[0-9.-]*-exec-[0-9]*' "$tmp/p.collapsed" | sort -u | wc -l >>"$tmp/$mode.named" || true
	# The profiler's own CPU (its -v line), in % of one CPU over the recording.
	sed -n 's/.*own CPU time [0-9.]* s (\([0-9.]*\)% of one CPU.*/\1/p' "$tmp/log" >>"$tmp/$mode.own"
}

# One run of async-profiler with arguments $2...; requests/s into $tmp/$1.
run_asprof() {
	local mode=$1 rps
	shift
	"$asprof" "$@" -d $((seconds + 3)) -f "$tmp/ap.html" "$jvm" >"$tmp/ap.log" 2>&1 &
	local ap=$!
	sleep 1
	rps=$(load)
	wait "$ap" || { echo "bench: asprof failed:" >&2; cat "$tmp/ap.log" >&2; exit 1; }
	echo "$rps" >>"$tmp/$mode"
}

# The bare timer of every CPU at 999 Hz (build/bench/tick_only) around one wrk run; requests/s into $tmp/ticks999.
run_ticks() {
	local pids=() rps cpu
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		rm -f "$tmp/tick$cpu"
		mkfifo "$tmp/tick$cpu"
		build/bench/tick_only "$cpu" 1001001 $((seconds + 2)) 2>"$tmp/tick$cpu" &
		pids+=($!)
		exec 5<"$tmp/tick$cpu"
		wait_for_sampling 5 || { echo "bench: tick_only failed to start" >&2; exit 1; }
		exec 5<&-
	done
	rps=$(load)
	for p in "${pids[@]}"; do wait "$p"; done
	echo "$rps" >>"$tmp/ticks999"
}

run_mode() {
	case $1 in
	none) load >>"$tmp/none" ;;
	F99) run_jbpfprof F99 -F 99 ;;
	F999) run_jbpfprof F999 -F 999 ;;
	F99agent) run_jbpfprof F99agent -F 99 --java-stacks agent ;;
	F999agent) run_jbpfprof F999agent -F 999 --java-stacks agent ;;
	wall) run_jbpfprof wall -e wall ;;
	wakers) run_jbpfprof wakers -e wall --wakers ;;
	lock) run_jbpfprof lock -e lock ;;
	wallagent) run_jbpfprof wallagent -e wall --java-stacks agent ;;
	wallbase) run_prof=$baseline run_jbpfprof wallbase -e wall ;;
	F999base) run_prof=$baseline run_jbpfprof F999base -F 999 ;;
	nojava) run_jbpfprof nojava -F 99 --no-java ;;
	nojava999) run_jbpfprof nojava999 -F 999 --no-java ;;
	threads999) run_jbpfprof threads999 -F 999 --threads ;;
	nonames999) JBPFPROF_THREAD_NAMES=0 run_jbpfprof nonames999 -F 999 --threads ;;
	nativemem) run_jbpfprof nativemem -e nativemem ;;
	leaks) run_jbpfprof leaks -e nativemem --leaks ;;
	ticks999) run_ticks ;;
	ap99) run_asprof ap99 -e cpu -i 10101010 ;;
	ap999) run_asprof ap999 -e cpu -i 1001001 ;;
	apwall) run_asprof apwall -e wall ;;
	esac
}

modes=(none F99 F999 F99agent F999agent nojava999 wall)
[ -z "$baseline" ] || modes+=(wallbase F999base)
[ -z "$asprof" ] || modes+=(ap99 ap999 apwall)
[ -z "${MODES:-}" ] || read -r -a modes <<<"$MODES"
load >/dev/null   # warm-up: the JIT compiles the request path
for r in $(seq "$rounds"); do
	n=${#modes[@]}
	order=()
	for i in $(seq 0 $((n - 1))); do order+=("${modes[$(((i + r) % n))]}"); done
	run_mode none
	for m in "${order[@]}"; do
		[ "$m" != none ] || continue
		before=$(tail -1 "$tmp/none")
		run_mode "$m"
		run_mode none
		echo "$(tail -1 "$tmp/$m") $before $(tail -1 "$tmp/none")" | awk '{ print $1 * 2 / ($2 + $3) }' >>"$tmp/$m.ratio"
	done
	echo "round $r of $rounds: $(for m in "${modes[@]}"; do printf '%s %s  ' "$m" "$(tail -1 "$tmp/$m")"; done)"
done

echo "server.sh: $(date +%Y-%m-%d), $(nproc) CPUs, Tomcat 10 ($JAVA_HOME) under wrk -t2 -c20 -d${seconds}s," \
	"$rounds rounds, profiler $prof; $(sed 's/^jbpfprof: //' "$tmp/deferral" 2>/dev/null)"
printf '%-10s %12s %10s %14s %12s %22s %8s\n' mode "req/s (med)" "vs none" "ratio range" "BPF % CPU" "sys_exit runs/s, %CPU" "Java %"
for m in "${modes[@]}"; do
	ratio=1 range=""
	if [ "$m" != none ]; then
		ratio=$(median <"$tmp/$m.ratio")
		range=$(sort -n "$tmp/$m.ratio" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }')
	fi
	bpf="" exits=""
	if [ -f "$tmp/$m.bpf" ]; then
		bpf=$(awk '{ print $1 }' "$tmp/$m.bpf" | median)
		exits="$(awk '{ print $2 }' "$tmp/$m.bpf" | median | xargs printf '%.0f'), $(awk '{ print $3 }' "$tmp/$m.bpf" | median | xargs printf '%.2f')"
		bpf=$(printf '%.2f' "$bpf")
	fi
	java=""
	[ ! -s "$tmp/$m.java" ] || java=$(median <"$tmp/$m.java")
	printf '%-10s %12.0f %10.3f %14s %12s %22s %8s\n' "$m" "$(median <"$tmp/$m")" "$ratio" "$range" "$bpf" "$exits" "$java"
done
for m in "${modes[@]}"; do
	[ ! -s "$tmp/$m.summary" ] || echo "  $m, last run: $(cat "$tmp/$m.summary")"
	[ ! -s "$tmp/$m.programs" ] || echo "  $m, last run: $(sed 's/^jbpfprof: //' "$tmp/$m.programs")"
	[ ! -s "$tmp/$m.own" ] || echo "  $m: the profiler's own CPU, median $(median <"$tmp/$m.own")% of one CPU"
	[ ! -s "$tmp/$m.named" ] || [ "$(sort -n "$tmp/$m.named" | tail -1)" = 0 ] ||
		echo "  $m: request threads under their whole names, median $(median <"$tmp/$m.named") a run"
done

# Round-by-round comparisons: ratio of $1's ratio to $2's ratio, per round.
compare() {
	[ -s "$tmp/$1.ratio" ] && [ -s "$tmp/$2.ratio" ] || return 0
	paste "$tmp/$1.ratio" "$tmp/$2.ratio" | awk '{ print $1 / $2 }' >"$tmp/pair"
	printf '  %s over %s, round by round: median %.3f, range %s, %s of %s rounds at 1 or above\n' "$1" "$2" \
		"$(median <"$tmp/pair")" "$(sort -n "$tmp/pair" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }')" \
		"$(awk '$1 >= 1' "$tmp/pair" | wc -l)" "$(wc -l <"$tmp/pair")"
}
compare F999 nojava999
compare threads999 nonames999
compare F999 F999agent
compare wall wallbase
compare F999 F999base

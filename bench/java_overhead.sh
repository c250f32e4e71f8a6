#!/bin/bash
# Overhead of profiling a real Java workload: the JDK's own compiler, and
# the share of its samples that carry Java frames.
#
#   [COMPILES=N] [JAVA=path] [PROF=path] [ASPROF=path] bench/java_overhead.sh [--asprof PATH] [RUNS] [MODE...]
#                            (root; default 7 runs of: off 99 999; COMPILES 3)
#
# A MODE is one of:
#   off        no profiler
#   N          jbpfprof -F N, the default: Java stacks walked by BPF
#              (--java-stacks bpf), nothing loaded into the JVM
#   Nagent     jbpfprof -F N --java-stacks agent: the JVMTI agent, its
#              AsyncGetCallTrace through a signal from BPF
#   Nf         jbpfprof -F N --fixed-interval, as in bench/overhead.sh
#   Nnative    jbpfprof -F N --no-java: native and kernel frames only, the
#              floor under any way of adding Java frames to them
#   alloc      jbpfprof -e alloc: Java heap allocations, one sample per
#              512 KiB a thread allocates (the default --alloc-interval),
#              through the agent (JVMTI SampledObjectAlloc)
#   aalloc     async-profiler's -e alloc at the same interval (--alloc 512k)
#   aN         async-profiler at N Hz (asprof start -e cpu -i 1e9/N ns -a -t
#              -o collapsed), started on the JVM at the same point, its
#              profile written when the JVM exits; ASPROF (or --asprof PATH)
#              names its asprof, built outside this tree. --asprof PATH also
#              adds aN for every plain N listed.
# PROF names the jbpfprof to run (default build/jbpfprof), e.g. an older
# build for a before/after comparison. Every profiler writes collapsed
# stacks with a frame per thread (jbpfprof --threads, asprof -t).
#
# Java frames, per profiled mode (medians over runs), from each profile:
#   - "with Java": the share of all the JVM's samples (every thread: GC and
#     compiler threads too) with at least one Java frame;
#   - "main": the same share for javac's main thread, the thread whose
#     samples most often contain JavacDriver.main (jbpfprof names it by its
#     comm, "java", async-profiler "main"), and the share of its samples
#     that reach JavacDriver.main, walked to the root;
#   - from jbpfprof's summary: for the BPF walk, the share of samples with
#     Java frames walked to the root ("N of M JVM thread samples with Java
#     frames, X% of them walked to the root"); for the agent, the share of
#     Java-thread samples joined ("Java stacks: J of N joined").
# A Java frame is one annotated _[j], _[i], _[0] or _[1] (async-profiler's
# -a), else one named like a Java method (dotted or slashed Class.method,
# no "::", no parentheses, no compiler suffix such as .isra.0).
#
# The work: one JVM (JavacDriver, from tests/workloads/java, in build/java)
# runs javac in process COMPILES times over a fixed set of sources:
# java.base's java/util/*.java, java/util/function/*.java and
# java/util/stream/*.java from the running JDK's source archive (JDK 17:
# package openjdk-17-source, 202 files in 17.0.x; a later JDK: its
# lib/src.zip), extracted once into a cache directory. The first compile
# runs mostly interpreted and compiling, the later ones mostly
# JIT-compiled, so both regimes are in the total; COMPILES=1 measures the
# first only, javac from its first instant.
#
# Each run starts the JVM and waits for its "ready"; a profiled run then
# starts the profiler on it and waits for its "sampling" line (the time
# from launch to that line is the attach latency, printed per run), and
# only then releases the work. The JVM measures its own elapsed time from
# release to the end of the last compile, so JVM start-up, the attach and
# the writing of the profile are not counted. It also reports the CPU time
# all its threads used meanwhile; to that jbpfprof's own CPU time (its -v
# report) is added (async-profiler runs inside the JVM, so its time is in
# the JVM's), and the ratio of that sum to the unprofiled run's CPU time
# is the cost in CPU, which noise from other machines sharing the host
# disturbs less than wall time. Modes take turns within each round (order
# rotated each round) so a drift in machine speed hits them alike. Prints
# each round, then each mode's median, min and max, the median of its
# per-round ratios to the unprofiled run, the attach latency and the Java
# frame shares above ("-" where a profile has none), and for jbpfprof the
# perf_event program's BPF time per sample kept (its -v report, with the
# kernel's kernel.bpf_stats_enabled on; BPF runs on the sampled CPU, in
# the JVM's time, where the CPU ratio counts it already), its own CPU time
# (median), and the last run's -v line on naming walked Java frames
# (frames remembered, reads of the JVM's memory, caches emptied).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# Says so when the agent could not be loaded: the run then has no Java frames.
show_agent_failure() { case $1 in *"cannot load the agent"*) echo "java_overhead.sh: $1" >&2 ;; esac; }
asprof=${ASPROF:-}
add_asprof=
if [ "${1:-}" = --asprof ]; then
	add_asprof=1
	asprof=${2:?java_overhead.sh: --asprof needs the path of asprof}
	[ -x "$asprof" ] || { echo "java_overhead.sh: $asprof is not executable" >&2; exit 1; }
	shift 2
fi
runs=${1:-7}
shift || true
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(off 99 999)
if [ -n "$add_asprof" ]; then
	for m in "${modes[@]}"; do
		case $m in [0-9]*[0-9]) modes+=("a$m") ;; esac
	done
fi
for m in "${modes[@]}"; do
	case $m in
	off | [0-9]*[0-9] | [0-9]*f | [0-9]*agent | [0-9]*native | alloc) ;;
	a[0-9]* | aalloc) [ -n "$asprof" ] || { echo "java_overhead.sh: mode $m needs ASPROF=path of asprof" >&2; exit 1; } ;;
	*) echo "java_overhead.sh: unknown mode $m (off, N, Nagent, Nnative, Nf, aN, alloc, aalloc)" >&2; exit 1 ;;
	esac
done
[ -z "$asprof" ] || [ -x "$asprof" ] || { echo "java_overhead.sh: $asprof is not executable" >&2; exit 1; }
compiles=${COMPILES:-3}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
# The sources javac compiles are the running JDK's own: java.base's from
# another release does not compile against it. JDK 17's come from Debian's
# openjdk-17-source, a JDK with lib/src.zip (Temurin's) uses that.
src_zip=/usr/lib/jvm/openjdk-17/src.zip
jdk_src=$(dirname "$(dirname "$(readlink -f "$java")")")/lib/src.zip
case $("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p') in
17) ;;
*) src_zip=$jdk_src ;;
esac
prof=${PROF:-build/jbpfprof}
[ -x "$prof" ] && [ -f build/java/JavacDriver.class ] || { echo "java_overhead.sh: run make first" >&2; exit 1; }
[ -x "$java" ] || { echo "java_overhead.sh: no JDK 17 at $java (apt-get install openjdk-17-jdk-headless, or set JAVA)" >&2; exit 1; }
[ -r "$src_zip" ] || { echo "java_overhead.sh: no $src_zip (apt-get install openjdk-17-source)" >&2; exit 1; }

# The sources, extracted once per version of the archive.
cache=$(javac_sources "$src_zip")
nfiles=$(wc -l <"$cache/files")

tmp=$(mktemp -d)
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
# The perf_event program's run time per sample, in jbpfprof's -v report.
echo 1 >/proc/sys/kernel/bpf_stats_enabled
write_javac_args "$cache" "$tmp/classes" "$tmp/javac.args"

# From collapsed stacks with a thread frame first (file $1), prints
# "WITHJAVA MAIN_WITHJAVA MAIN_TO_ROOT": the percentages of all samples with
# a Java frame, of the main thread's samples with one, and of the main
# thread's that reach JavacDriver.main ("-" where there are none).
java_shares() {
	python3 - "$1" <<'PY'
import re, sys
java = re.compile(r"^[A-Za-z_$][\w$]*(?:[./][\w$]+)*[./](?:[\w$]+|<init>|<clinit>)$")
compiler_suffix = re.compile(r"\.(?:isra|part|constprop|cold|lto_priv|clone)(?:\.\d+)?$|\.\d+$")
def is_java(frame):
    if re.search(r"_\[[ji01]\]$", frame):
        return True
    if re.search(r"_\[\w+\]$", frame) or "::" in frame or "(" in frame:
        return False
    return bool(java.match(frame)) and not compiler_suffix.search(frame)
total = with_java = 0
threads = {}  # thread frame: [samples, with Java, reaching JavacDriver.main]
for line in open(sys.argv[1]):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    if not count.isdigit():
        continue
    n = int(count)
    frames = stack.split(";")
    has_java = any(is_java(f) for f in frames[1:])
    at_main = any(re.sub(r"_\[\w+\]$", "", f) in ("JavacDriver.main", "JavacDriver/main") for f in frames)
    total += n
    with_java += n if has_java else 0
    t = threads.setdefault(frames[0], [0, 0, 0])
    t[0] += n
    t[1] += n if has_java else 0
    t[2] += n if at_main else 0
pct = lambda a, b: f"{100 * a / b:.1f}" if b else "-"
main = max(threads.values(), key=lambda t: t[2], default=[0, 0, 0])
print(pct(with_java, total), pct(main[1], main[0]) if main[2] else "-", pct(main[2], main[0]) if main[2] else "-")
PY
}

# async-profiler on pid $2 at $1 Hz (or, for "alloc", its -e alloc), from now until the JVM exits.
start_asprof() {
	local event=(-e alloc --alloc 524288)

	[ "$1" = alloc ] || event=(-e cpu -i $((1000000000 / $1)))
	"$asprof" start "${event[@]}" -a -t -o collapsed -f "$tmp/a.collapsed" "$2" >/dev/null 2>&1 ||
		{ echo "java_overhead.sh: asprof failed to start" >&2; kill "$2"; exit 1; }
}

# One run of MODE $1: appends the elapsed ns to $tmp/$1, the attach latency
# in ms to $tmp/$1.attach, the summary's share (walked to the root, or
# joined) to $tmp/$1.summ, and the shares of java_shares to $tmp/$1.withjava,
# $tmp/$1.main and $tmp/$1.mainroot.
run_once() {
	local mode=$1 hz=$1 line wp pp="" extra=() rate t0 t1 rest summ shares
	case $1 in
	*[0-9]f) hz=${1%f} extra=(--fixed-interval) ;;
	*agent) hz=${1%agent} extra=(--java-stacks agent) ;;
	*native) hz=${1%native} extra=(--no-java) ;;
	alloc) ;;
	a*) hz=${1#a} ;;
	esac
	mkfifo "$tmp/in" "$tmp/out"
	"$java" -cp build/java JavacDriver "$compiles" "@$tmp/javac.args" <"$tmp/in" >"$tmp/out" &
	wp=$!
	exec 5>"$tmp/in" 3<"$tmp/out"
	read -r line <&3 || { echo "java_overhead.sh: the JVM failed to start" >&2; exit 1; }   # "ready"
	rm -f "$tmp/p.collapsed" "$tmp/a.collapsed"
	if [ "$mode" = "a$hz" ]; then
		t0=$(date +%s%N)
		start_asprof "$hz" "$wp"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$tmp/$mode.attach"
	elif [ "$hz" != off ]; then
		mkfifo "$tmp/err"
		t0=$(date +%s%N)
		rate=(-F "$hz")
		[ "$hz" != alloc ] || rate=(-e alloc)
		"$prof" -v -p "$wp" "${rate[@]}" "${extra[@]}" --threads -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
		pp=$!
		exec 4<"$tmp/err"
		# Release the work only once the profiler samples.
		wait_for_sampling 4 show_agent_failure ||
			{ echo "java_overhead.sh: the profiler failed to start" >&2; kill "$wp"; exit 1; }
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$tmp/$mode.attach"
	fi
	echo go >&5
	cpu=0
	while read -r line <&3; do
		case $line in
		cpu_ns*) cpu=${line#cpu_ns } ;;
		elapsed_ns*) break ;;
		esac
	done
	wait "$wp" || { echo "java_overhead.sh: javac failed (status $?)" >&2; exit 1; }
	exec 3<&- 5>&-
	if [ -n "$pp" ]; then
		wait "$pp" || { echo "java_overhead.sh: the profiler failed" >&2; exit 1; }   # it stops when the JVM exits
		rest=$(cat <&4)
		exec 4<&-
		# The summary's Java part, with the reasons for stacks not joined or walks ended early, of the latest run.
		grep -o 'Java stacks: .*\|[0-9]* of [0-9]* JVM thread samples with Java frames.*' <<<"$rest" | head -1 \
			>"$tmp/$mode.summary" || true
		grep -o '[0-9]* Java signals sent.*\|agent signal handler: .*' <<<"$rest" | tr '\n' ';' \
			>>"$tmp/$mode.summary" || true
		rm -f "$tmp/err"
		summ=$(sed -n 's/.*Java stacks: [0-9]* of [0-9]* joined (\([0-9.]*\)%).*/\1/p;
			s/.* JVM thread samples with Java frames, \([0-9.]*\)% of them walked to the root.*/\1/p' <<<"$rest" | head -1)
		echo "${summ:--}" >>"$tmp/$mode.summ"
		sed -n 's/.*sample_cpu \([0-9.]*\) ms.*samples kept \([0-9]*\).*/\1 \2/p' <<<"$(tr '\n' ' ' <<<"$rest")" |
			awk '{ if ($2) printf "%.1f\n", $1 * 1e3 / $2 }' >>"$tmp/$mode.bpf"
		own=$(sed -n 's/.*own CPU time \([0-9.]*\) s.*/\1/p' <<<"$rest")
		echo "${own:--}" >>"$tmp/$mode.own"
		# What naming the walked frames took (its -v line), of the latest run.
		sed -n 's/^jbpfprof: Java frames walked by BPF: //p' <<<"$rest" >"$tmp/$mode.naming"
		cpu=$(awk -v a="$cpu" -v b="${own:-0}" 'BEGIN { printf "%.0f", a + b * 1e9 }')
		shares=$(if [ -s "$tmp/p.collapsed" ]; then java_shares "$tmp/p.collapsed"; else echo - - -; fi)
	elif [ "$mode" = "a$hz" ]; then
		echo - >>"$tmp/$mode.summ"
		shares=$(if [ -s "$tmp/a.collapsed" ]; then java_shares "$tmp/a.collapsed"; else echo - - -; fi)
	fi
	if [ "$hz" != off ]; then
		read -r a b c <<<"$shares"
		echo "$a" >>"$tmp/$mode.withjava"
		echo "$b" >>"$tmp/$mode.main"
		echo "$c" >>"$tmp/$mode.mainroot"
	fi
	echo "$cpu" >>"$tmp/$mode.cpu"
	rm -f "$tmp/in" "$tmp/out"
	echo "${line#elapsed_ns }" >>"$tmp/$mode"
}

label() {
	case $1 in
	off) echo off ;;
	*f) echo "${1%f} Hz fixed" ;;
	*agent) echo "${1%agent} Hz agent" ;;
	*native) echo "${1%native} Hz no Java" ;;
	alloc) echo "alloc 512k" ;;
	aalloc) echo "asprof alloc" ;;
	a*) echo "asprof ${1#a} Hz" ;;
	*) echo "$1 Hz" ;;
	esac
}

# The median of a file of figures, "-" lines left out; "-" when none is left.
median_known() { if grep -qv '^-$' "$1"; then grep -v '^-$' "$1" | median; else echo -; fi; }

echo "java_overhead.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $runs runs per mode," \
	"$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p'), javac x $compiles over $nfiles files"
# After each profiled mode's time in a round: its ratio to that round's unprofiled run, and its attach latency.
round_note() {
	[ "$1" != off ] || return 0
	[ -f "$tmp/off" ] && printf ' (x%.3f)' "$(awk -v a="$(tail -1 "$tmp/$1")" -v b="$(tail -1 "$tmp/off")" 'BEGIN { print a / b }')"
	printf ', attach %d ms' "$(tail -1 "$tmp/$1.attach")"
}
rotated_rounds "$runs" 2 "${modes[@]}"
for m in "${modes[@]}"; do
	read -r med lo hi <<<"$(spread "$tmp/$m")"
	ratio=1 cpu_ratio=1
	[ -f "$tmp/off" ] && ratio=$(ratio_median "$tmp/$m" "$tmp/off")
	[ -f "$tmp/off.cpu" ] && cpu_ratio=$(ratio_median "$tmp/$m.cpu" "$tmp/off.cpu")
	awk -v m="$(label "$m")" -v med="$med" -v lo="$lo" -v hi="$hi" -v ratio="$ratio" 'BEGIN {
		printf "  %-12s median %.2f s (min %.2f, max %.2f)  per-round ratio to off: median %.4f (%+.2f%%)",
			m, med / 1e9, lo / 1e9, hi / 1e9, ratio, (ratio - 1) * 100 }'
	awk -v c="$(median <"$tmp/$m.cpu")" -v r="$cpu_ratio" 'BEGIN {
		printf "  CPU median %.2f s, per-round ratio %.4f (%+.2f%%)", c / 1e9, r, (r - 1) * 100 }'
	if [ "$m" != off ]; then
		read -r amed alo ahi <<<"$(spread "$tmp/$m.attach")"
		[ ! -s "$tmp/$m.bpf" ] || printf '  BPF %s us per sample' "$(median <"$tmp/$m.bpf")"
		[ ! -s "$tmp/$m.own" ] || printf ', profiler own CPU median %s s' "$(median_known "$tmp/$m.own")"
		printf '\n    attach: median %s ms (min %s, max %s); with Java frames: all samples %s%%, main thread %s%%, main thread to JavacDriver.main %s%%; summary: %s%% %s' \
			"$amed" "$alo" "$ahi" "$(median_known "$tmp/$m.withjava")" "$(median_known "$tmp/$m.main")" \
			"$(median_known "$tmp/$m.mainroot")" "$(median_known "$tmp/$m.summ")" \
			"$(case $m in alloc) echo "of allocations (not applicable)" ;; a*) echo "(none)" ;; *agent) echo "of Java-thread samples joined" ;; *) echo "of samples with Java frames walked to the root" ;; esac)"
		if [ -s "$tmp/$m.summary" ]; then printf '\n    last run: %s' "$(cat "$tmp/$m.summary")"; fi
		if [ -s "$tmp/$m.naming" ]; then printf '\n    last run, naming: %s' "$(cat "$tmp/$m.naming")"; fi
	fi
	echo
done

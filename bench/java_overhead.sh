#!/bin/bash
# Overhead of profiling a real Java workload: the JDK's own compiler.
#
#   [COMPILES=N] [JAVA=path] [PROF=path] bench/java_overhead.sh [--asprof PATH] [RUNS] [MODE...]
#                            (root; default 7 runs of: off 99 999; COMPILES 3)
#
# A MODE is "off", a frequency in Hz, or a frequency with "f" appended for
# --fixed-interval, as in bench/overhead.sh. With --asprof PATH (async-
# profiler's asprof, built outside this tree), each frequency N also gets a
# mode "aN" in the same rounds: async-profiler started on the JVM at the
# same point (asprof start -e cpu -i 1e9/N ns -a -o collapsed), its profile
# written when the JVM exits. PROF names the jbpfprof to run (default
# build/jbpfprof), e.g. an older build for a before/after comparison.
#
# Java frames, per profiled mode (medians over runs): "joined", the share
# of the JVM's Java-thread samples that carry Java frames (jbpfprof's
# summary: Java stacks J of N joined), and "with Java", the share of all
# the JVM's samples that do (J over N plus the VM threads' samples; for
# async-profiler, the samples of its collapsed output with a frame
# annotated _[j], _[i], _[0] or _[1]), the figure both profilers have.
#
# The work: one JVM (JavacDriver, from tests/workloads/java, in build/java)
# runs javac in process COMPILES times over a fixed set of sources:
# java.base's java/util/*.java, java/util/function/*.java and
# java/util/stream/*.java from the running JDK's source archive (JDK 17:
# package openjdk-17-source, 202 files in 17.0.x; a later JDK: its
# lib/src.zip), extracted once into a cache directory. The first compile runs mostly interpreted and compiling, the
# later ones mostly JIT-compiled, so both regimes are in the total.
#
# Each run starts the JVM and waits for its "ready"; a profiled run then
# starts build/jbpfprof -p on it and waits for its "sampling" line (the time
# from launch to that line is the attach latency, printed per run), and
# only then releases the work. The JVM measures its own elapsed time from
# release to the end of the last compile, so JVM start-up, the attach and
# the writing of the profile are not counted. It also reports the CPU time
# all its threads used meanwhile; to that the profiler's own CPU time (its
# -v report) is added, and the ratio of that sum to the unprofiled run's
# CPU time is the cost in CPU, which noise from other machines sharing the
# host disturbs less than wall time. Modes take turns within each
# round (order rotated each round) so a drift in machine speed hits them
# alike. Prints each round, then each mode's median, min and max, the
# median of its per-round ratios to the unprofiled run, the attach latency
# and the share of samples with Java stacks joined (from the summary line;
# "-" while the profiler has no Java support or the agent did not load).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# Says so when the agent could not be loaded: the run then has no Java frames.
show_agent_failure() { case $1 in *"cannot load the agent"*) echo "java_overhead.sh: $1" >&2 ;; esac; }
asprof=
if [ "${1:-}" = --asprof ]; then
	asprof=${2:?java_overhead.sh: --asprof needs the path of asprof}
	[ -x "$asprof" ] || { echo "java_overhead.sh: $asprof is not executable" >&2; exit 1; }
	shift 2
fi
runs=${1:-7}
shift || true
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(off 99 999)
if [ -n "$asprof" ]; then
	for m in "${modes[@]}"; do
		case $m in [0-9]*[0-9]) modes+=("a$m") ;; esac
	done
fi
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
trap 'rm -rf "$tmp"' EXIT
write_javac_args "$cache" "$tmp/classes" "$tmp/javac.args"

# The share of async-profiler's collapsed samples (file $1) with a Java frame.
asprof_with_java() {
	awk '{ n = $NF; all += n; if ($0 ~ /_\[[ji01]\][; ]/) java += n }
		END { if (all) printf "%.1f\n", 100 * java / all; else print "-" }' "$1"
}

# async-profiler on pid $2 at $1 Hz, from now until the JVM exits.
start_asprof() {
	"$asprof" start -e cpu -i $((1000000000 / $1)) -a -o collapsed -f "$tmp/a.collapsed" "$2" >/dev/null 2>&1 ||
		{ echo "java_overhead.sh: asprof failed to start" >&2; kill "$2"; exit 1; }
}

# One run of MODE $1: appends the elapsed ns to $tmp/$1, the attach latency
# in ms to $tmp/$1.attach, the joined share to $tmp/$1.joined and the share
# of all samples with Java frames to $tmp/$1.withjava.
run_once() {
	local mode=$1 hz=$1 line wp pp="" fixed=() t0 t1 rest joined withjava
	case $1 in *[0-9]f) hz=${1%f} fixed=(--fixed-interval) ;; a*) hz=${1#a} ;; esac
	mkfifo "$tmp/in" "$tmp/out"
	"$java" -cp build/java JavacDriver "$compiles" "@$tmp/javac.args" <"$tmp/in" >"$tmp/out" &
	wp=$!
	exec 5>"$tmp/in" 3<"$tmp/out"
	read -r line <&3 || { echo "java_overhead.sh: the JVM failed to start" >&2; exit 1; }   # "ready"
	if [ "$mode" != "$hz" ] && [ "$mode" = "a$hz" ]; then
		t0=$(date +%s%N)
		rm -f "$tmp/a.collapsed"
		start_asprof "$hz" "$wp"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$tmp/$mode.attach"
	elif [ "$hz" != off ]; then
		mkfifo "$tmp/err"
		t0=$(date +%s%N)
		"$prof" -v -p "$wp" -F "$hz" "${fixed[@]}" -o collapsed -f "$tmp/p.collapsed" 2>"$tmp/err" &
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
		# The summary's Java part, with the reasons for stacks not joined, of the latest run.
		grep -o 'Java stacks: .*' <<<"$rest" >"$tmp/$mode.summary" || true
		rm -f "$tmp/err"
		joined=$(sed -n 's/.*Java stacks: \([0-9]*\) of \([0-9]*\) joined.*/\1 \2/p' <<<"$rest" |
			awk '{ printf "%.1f", $2 ? 100 * $1 / $2 : 0 }')
		echo "${joined:--}" >>"$tmp/$mode.joined"
		withjava=$(sed -n 's/.*Java stacks: \([0-9]*\) of \([0-9]*\) joined[^,]*, \([0-9]*\) on VM threads.*/\1 \2 \3/p' \
			<<<"$rest" | awk '{ printf "%.1f", $2 + $3 ? 100 * $1 / ($2 + $3) : 0 }')
		echo "${withjava:--}" >>"$tmp/$mode.withjava"
		own=$(sed -n 's/.*own CPU time \([0-9.]*\) s.*/\1/p' <<<"$rest")
		cpu=$(awk -v a="$cpu" -v b="${own:-0}" 'BEGIN { printf "%.0f", a + b * 1e9 }')
	fi
	if [ "$mode" = "a$hz" ]; then
		echo - >>"$tmp/$mode.joined"
		if [ -s "$tmp/a.collapsed" ]; then asprof_with_java "$tmp/a.collapsed"; else echo -; fi >>"$tmp/$mode.withjava"
	fi
	echo "$cpu" >>"$tmp/$mode.cpu"
	rm -f "$tmp/in" "$tmp/out"
	echo "${line#elapsed_ns }" >>"$tmp/$mode"
}

label() { case $1 in off) echo off ;; *f) echo "${1%f} Hz fixed" ;; a*) echo "asprof ${1#a} Hz" ;; *) echo "$1 Hz" ;; esac; }

# The median of a file of figures, "-" lines left out; "-" when none is left.
median_known() { if grep -qv '^-$' "$1"; then grep -v '^-$' "$1" | median; else echo -; fi; }

echo "java_overhead.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $runs runs per mode," \
	"$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p'), javac x $compiles over $nfiles files"
for ((r = 0; r < runs; r++)); do
	for ((k = 0; k < ${#modes[@]}; k++)); do
		run_once "${modes[$(((k + r) % ${#modes[@]}))]}"
	done
	printf '  round %d:' $((r + 1))
	for m in "${modes[@]}"; do
		ns=$(tail -1 "$tmp/$m")
		printf '  %s %.2f s' "$(label "$m")" "$(awk -v ns="$ns" 'BEGIN { print ns / 1e9 }')"
		if [ "$m" != off ]; then
			[ -f "$tmp/off" ] && printf ' (x%.3f)' "$(awk -v a="$ns" -v b="$(tail -1 "$tmp/off")" 'BEGIN { print a / b }')"
			printf ', attach %d ms' "$(tail -1 "$tmp/$m.attach")"
		fi
	done
	echo
done
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
		printf '  attach: median %s ms (min %s, max %s)  Java stacks joined: median %s%%, all samples with Java: median %s%%' \
			"$amed" "$alo" "$ahi" "$(median_known "$tmp/$m.joined")" "$(median_known "$tmp/$m.withjava")"
		if [ -s "$tmp/$m.summary" ]; then printf '\n    last run: %s' "$(cat "$tmp/$m.summary")"; fi
	fi
	echo
done

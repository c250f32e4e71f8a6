#!/bin/bash
# The kernel matrix's checks on the running kernel: each mode of the
# profiler on a workload with a known answer, by one integration test
# chosen for it (the cheapest that proves the mode does its job). Runs
# inside each guest that tests/kernels/matrix.sh boots, and on the host.
#
#   tests/kernels/guest-checks.sh OUT_DIR
#
# Run from the checkout's root, after the build (make, make
# build/asan/jbpfprof and the build/tests/test_* named below).
# KERNEL_MATRIX=short runs the checks marked short only (make test's
# matrix); anything else, all of them.
#
# Writes, in OUT_DIR: each check's log (SLUG.log, the test's output), the
# outputs of the processes it ran (SLUG.outputs: the profiler's stderr, the
# workloads' stdout; the harness's JBPF_OUTPUT_LOG) and the profiler's
# notes (SLUG.notes, the harness's JBPF_NOTES_FILE), and
# cells.tsv, a line per check: "MODE<TAB>STATUS<TAB>SECONDS<TAB>SLUG.log",
# STATUS one of
#   works                       the test passed
#   works (fallback: ...)       passed, and the profiler went on without a
#                               feature (its "jbpfprof: fallback: " lines)
#   refused: ...                failed, and the profiler said in one line
#                               that it refuses the part the test needs
#                               ("jbpfprof: unavailable: ")
#   skipped: ...                the test skipped (no JDK 25, say)
#   FAILS (...)                 anything else: why, in one line
# and uname -r in kernel.txt. Prints one progress line per check. Exits 0
# when every check ran, whatever the cells say: the matrix judges them.
set -euo pipefail
if [ $# -ne 1 ]; then
	echo "usage: $0 OUT_DIR" >&2
	exit 2
fi
out=$1
mkdir -p "$out"
: >"$out/cells.tsv"
uname -r >"$out/kernel.txt"
export JBPFPROF=${JBPFPROF:-build/asan/jbpfprof} WORKLOAD_DIR=${WORKLOAD_DIR:-build/workloads}
export JAVA_CLASSES=${JAVA_CLASSES:-build/java} AGENT=${AGENT:-build/libjbpfagent.so}
# A test has its own deadlines; this one only catches a test that hangs
# past them, so one stuck check cannot eat the whole guest's time.
check_timeout=${CHECK_TIMEOUT:-600}

# MODE | short | test program | cmocka test name | what the profiler may
# refuse for this mode (a failure is "refused" only when its one
# "unavailable:" line names that part; empty: never). Each test is chosen
# for a known answer (shares, states or bytes the workload reports itself)
# at the lowest cost; the short set keeps one check per kind of BPF program
# (perf_event sampler, scheduler tracepoints, uprobes, the continuous loop).
checks='
cpu                    |s|test_cpu_sampling|kernel_frames_under_user_frames|
Java frames (JDK 17)   |s|test_java        |deflate_native_frames_under_java (jdk17)|
Java frames (JDK 25)   | |test_java        |deflate_native_frames_under_java (jdk25)|
-e wall                |s|test_wall        |spinner_runs|
-e offcpu              | |test_wall        |offcpu_mode_has_no_running|
-e lock                | |test_locks       |contention_jdk17|
--wakers               | |test_wakers      |native_waiter_woken_by_its_signaller|
-e alloc               |s|test_alloc       |alloc_split_jdk17|
-e nativemem           |s|test_nativemem   |shares_follow_the_bytes|
-e nativemem --leaks   | |test_nativemem   |leaks_show_only_what_was_not_freed|
-a                     | |test_cpu_sampling|all_processes_finds_workload|
--continuous           |s|test_fleet       |each_interval_arrives|
-o pprof, convert      | |test_convert     |cpu_round_trip|
-o otlp                | |test_convert     |otlp_holds_what_pprof_holds|
-o jfr                 | |test_jfr         |cpu_jdk17|
virtual threads        |s|test_vthreads    |unmounted_waits_under_their_methods|virtual threads
'


trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

# Why a failed check failed, in one line, from its log and the outputs of
# the processes it ran: the verifier's own reason when a BPF program was
# rejected (the program, the last line of the verifier's log that is
# neither an instruction, a register state nor a statistic, and what comes
# just before it when that says where: the instruction, or the message a
# register's line explains), else the test's failure message, then the
# profiler's own word.
failure_reason() {
	local log=$1 outputs=$2 why said quiet
	why=$(cat "$outputs" "$log" | awk '
		function flush() {
			# exit runs END, which flushes again: once is enough.
			if (!inlog || told++) return
			if (!ended) print prog ": rejected by the verifier (its log is cut short: see the logs)"
			else if (last != "") print prog ": verifier: " where last
			exit
		}
		/libbpf: prog .*: BPF program load failed/ && !inlog {
			prog = $0; sub(/^libbpf: prog \047/, "", prog); sub(/\047.*/, "", prog) }
		/-- BEGIN PROG LOAD LOG --/ && !inlog { inlog = 1; next }
		/-- END PROG LOAD LOG --/ && inlog { ended = 1; flush() }
		inlog && /^(\[|== pid )/ { flush() }
		!inlog { next }
		/^[0-9]+: \([0-9a-f]+\) / {
			insn = $0; sub(/^[0-9]+: \([0-9a-f]+\) +/, "", insn); sub(/ +;.*/, "", insn)
			prev = "insn"; next }
		!NF || /^([ ;]|R[0-9]+(_[a-z]+)?=|from [0-9]+ to |last_idx |regs=|parent |processed |verification time|stack depth|mark_read)/ {
			prev = ""; next }
		{
			where = prev == "insn" ? "at " insn ": " : ""
			if (prev == "msg" && /^R[0-9]+ /) where = message " / "
			last = $0; message = $0; prev = "msg"
		}
		END { flush() }')
	[ -n "$why" ] || why=$(sed -n 's/^\[  ERROR   \] --- \(.*\)/\1/p' "$log" | grep -v '^\[   LINE   \]' | head -1)
	[ -n "$why" ] || why=$(awk '/^\[ RUN      \]/ { run = 1; next }
		run && NF && !/^[[ ]/ && !/^(libbpf|jbpfprof): / { print; exit }' "$log")
	# The profiler's first line that is neither progress nor one of -v's
	# statistics: where it says what went wrong.
	quiet='^jbpfprof: ([0-9]+ (samples|profiles|agent)|sampling|wrote|fallback|unavailable|interval [0-9]+:'
	quiet+='|own CPU time|BPF (run time|ticks)|deferred|unwind table|symbolizer|kernel symbols|push to'
	quiet+='|Java stacks|window|agent loaded)'
	said=$(cat "$log" "$outputs" | grep '^jbpfprof: ' | grep -v -E "$quiet" | head -1 || true)
	[ -n "$said" ] && why="${why:+$why; }${said}"
	[ -n "$why" ] || why=$(sed -n 's/^\[   LINE   \] --- \(.*\)/\1/p' "$log" | head -1)
	printf '%s' "${why:-no failure message}" | tr '\t' ' '
}

n=0
while IFS='|' read -r mode short program test refusable; do
	mode=$(trim "$mode") program=$(trim "$program") test=$(trim "$test") refusable=$(trim "$refusable")
	[ -n "$mode" ] || continue
	[ "${KERNEL_MATRIX:-full}" != short ] || [ "$(trim "$short")" = s ] || continue
	n=$((n + 1))
	slug=$(printf '%02d-%s' "$n" "$(printf '%s' "$mode" | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/^-//;s/-$//')")
	log="$out/$slug.log" notes="$out/$slug.notes" outputs="$out/$slug.outputs"
	: >"$notes"
	: >"$outputs"
	start=$SECONDS
	status=0
	JBPF_TEST_FILTER=$test JBPF_NOTES_FILE=$(realpath "$notes") JBPF_OUTPUT_LOG=$(realpath "$outputs") \
		timeout -k 10 "$check_timeout" "build/tests/$program" >"$log" 2>&1 </dev/null || status=$?
	took=$((SECONDS - start))

	fallbacks=$(sed -n 's/^jbpfprof: fallback: //p' "$notes" | sort -u | paste -sd '|' | sed 's/|/; /g')
	refusal=$(sed -n 's/^jbpfprof: unavailable: //p' "$notes" | head -1)
	# Only the part this mode may lack: another part's refusal explains no failure.
	refused=
	[ -z "$refusable" ] ||
		refused=$(sed -n 's/^jbpfprof: unavailable: //p' "$notes" | grep -F -- "$refusable" | head -1 || true)
	if grep -q '^\[==========\] Running 0 test(s)' "$log"; then
		# The check list names a test that no longer exists: say so, loudly.
		cell="FAILS (no test named '$test' in $program)"
	elif [ "$status" -eq 0 ] && grep -q '^\[  PASSED  \] 1 test(s)\.' "$log"; then
		cell="works${fallbacks:+ (fallback: $fallbacks)}"
		[ -z "$refusal" ] || cell="$cell (unavailable: $refusal)"
	elif [ "$status" -eq 0 ] && grep -q '^\[  SKIPPED \]' "$log"; then
		cell="skipped: $(sed -n 's/^SKIPPED: //p' "$log" | head -1)"
	elif [ -n "$refused" ]; then
		cell="refused: $refused"
	elif [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		cell="FAILS (still running after ${check_timeout} s, killed)"
	else
		cell="FAILS ($(failure_reason "$log" "$outputs"))"
	fi
	printf '%s\t%s\t%s\t%s\n' "$mode" "$cell" "$took" "$slug.log" >>"$out/cells.tsv"
	printf 'guest-checks: %s: %s (%s s)\n' "$mode" "$cell" "$took"
done <<<"$checks"

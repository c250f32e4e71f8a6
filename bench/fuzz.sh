#!/bin/bash
# Fuzzes every target (or those named) at length, JOBS (2) at a time, each
# under its bounds (tests/fuzz/bounds), its corpus kept across runs in
# CORPUS/NAME (default FUZZ_DIR/corpus; seeded from FUZZ_DIR/seeds/NAME and
# tests/fuzz/regressions/NAME), what it found kept in FUZZ_DIR/found/NAME
# (each input that crashed, broke a sanitizer or a bound). FUZZ_DIR is
# build/fuzz unless set: a copy of it keeps a long run's binaries apart from
# the next build. Prints a table:
# executions, executions per second, coverage (edges and features) and
# findings per target. A finding becomes a regression input: copy it into
# tests/fuzz/regressions/NAME with the fix.
#
#   [RUNS=N] [JOBS=N] [FUZZ_DIR=DIR] [CORPUS=DIR] bench/fuzz.sh [SECONDS] [NAME...]
#       SECONDS per target (default 3600); RUNS: stop a target after N
#       executions instead (e.g. RUNS=10000000), whichever comes first.
#       Needs make fuzz (build/fuzz/fuzz_* and their seeds).
set -u
cd "$(dirname "$0")/.."
dir=${FUZZ_DIR:-build/fuzz}
corpus=${CORPUS:-$dir/corpus}
jobs=${JOBS:-2}
seconds=${1:-3600}
shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for t in "$dir"/fuzz_*; do
		[ -x "$t" ] && names+=("$(basename "$t")")
	done
fi
[ ${#names[@]} -gt 0 ] || { echo "fuzz.sh: no targets in $dir (make fuzz)" >&2; exit 1; }
logs=$dir/logs
mkdir -p "$logs"

fuzz_one() {
	local name=$1 inputs=() runs=()
	mkdir -p "$corpus/$name" "$dir/found/$name"
	for d in "$dir/seeds/$name" "tests/fuzz/regressions/$name"; do
		[ -d "$d" ] && inputs+=("$d")
	done
	[ -n "${RUNS:-}" ] && runs=(-runs="$RUNS")
	# shellcheck disable=SC2046
	"$dir/$name" -max_total_time="$seconds" "${runs[@]}" -print_final_stats=1 $(tests/fuzz/bounds "$name") \
		-artifact_prefix="$dir/found/$name/" "$corpus/$name" "${inputs[@]}" \
		>"$logs/$name.log" 2>&1
	echo $? >"$logs/$name.rc"
}
export -f fuzz_one
export seconds RUNS logs dir corpus

echo "fuzz.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), ${seconds} s per target${RUNS:+, at most $RUNS runs}, $jobs at a time"
printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_one {}'
printf '%-18s %12s %10s %8s %8s %8s %s\n' target executions exec/s edges features corpus findings
for name in "${names[@]}"; do
	log=$logs/$name.log
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	kept=$(find "$corpus/$name" -type f | wc -l)
	found=$(find "$dir/found/$name" -type f | wc -l)
	printf '%-18s %12s %10s %8s %8s %8s %s\n' "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$kept" \
		"$found$( [ "$(cat "$logs/$name.rc")" -ne 0 ] && echo " (stopped: see $log)")"
done

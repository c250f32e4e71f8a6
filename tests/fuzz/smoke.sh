#!/bin/bash
# Runs every libFuzzer target in FUZZ_DIR (default build/fuzz), two at a
# time, each under the bounds its parser promises (tests/fuzz/bounds): a
# crash, a sanitizer report, an input that makes one allocation larger than
# the bound or takes longer than the bound, or a process that grows past
# the memory bound, fails it. First every input kept in
# tests/fuzz/regressions/NAME and every seed (FUZZ_DIR/seeds/NAME) runs
# once (-runs=0), so a known finding fails every run, not one in two; then
# the timed part, FUZZ_SECONDS (default 20) of fuzzing from the same
# inputs. Prints one cmocka-like
# line per target and the tally tests/run-suite.sh reads, and each
# target's executions and coverage.
#
#   [FUZZ_DIR=build/fuzz] [FUZZ_SECONDS=20] tests/fuzz/smoke.sh [NAME...]
set -u
cd "$(dirname "$0")/../.."
dir=${FUZZ_DIR:-build/fuzz}
seconds=${FUZZ_SECONDS:-20}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for t in "$dir"/fuzz_*; do
		[ -x "$t" ] && names+=("$(basename "$t")")
	done
fi
[ ${#names[@]} -gt 0 ] || { echo "smoke.sh: no fuzz targets in $dir (make fuzz)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run_one() {
	local name=$1 t=$dir/$1 corpus=$out/$1.corpus bounds inputs=() rc
	bounds=$(tests/fuzz/bounds "$name") || { echo "no bounds for $name" >"$out/$name.log"; echo 1 >"$out/$name.rc"; return; }
	mkdir -p "$corpus"
	for d in "$dir/seeds/$name" "tests/fuzz/regressions/$name"; do
		[ -d "$d" ] && inputs+=("$d")
	done
	# shellcheck disable=SC2086
	"$t" -runs=0 -print_final_stats=1 $bounds -artifact_prefix="$out/$name-" \
		"$corpus" "${inputs[@]}" >"$out/$name.replay.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		{ echo "  $name: a kept input or seed fails (replayed before fuzzing)"; cat "$out/$name.replay.log"; } \
			>"$out/$name.log"
		echo $rc >"$out/$name.rc"
		return
	fi
	# shellcheck disable=SC2086
	"$t" -max_total_time="$seconds" -print_final_stats=1 $bounds -artifact_prefix="$out/$name-" \
		"$corpus" "${inputs[@]}" >"$out/$name.timed.log" 2>&1
	echo $? >"$out/$name.rc"
	cp "$out/$name.timed.log" "$out/$name.log"
}
export -f run_one
export dir out seconds

printf '%s\n' "${names[@]}" | xargs -P 2 -I{} bash -c 'run_one {}'
passed=0 failed=0
echo "[==========] Running ${#names[@]} test(s)."
for name in "${names[@]}"; do
	rc=$(cat "$out/$name.rc" 2>/dev/null || echo 1)
	replayed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.replay.log" 2>/dev/null | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.timed.log" 2>/dev/null | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$out/$name.timed.log" 2>/dev/null | tail -1)
	echo "[ RUN      ] $name"
	echo "  $name: ${replayed:-?} executions replaying kept inputs and seeds, then ${execs:-?} in ${seconds} s, ${cov:-cov: ?} edges"
	if [ "$rc" -eq 0 ]; then
		echo "[       OK ] $name"
		passed=$((passed + 1))
	else
		grep -E 'replayed before|ERROR|SUMMARY|==[0-9]+==|Test unit written|Running: |out-of-memory|timeout|malloc' "$out/$name.log" | head -20
		for a in "$out/$name"-*; do
			[ -f "$a" ] || continue
			mkdir -p build/fuzz-artifacts
			cp "$a" build/fuzz-artifacts/ && echo "  input kept: build/fuzz-artifacts/$(basename "$a")"
		done
		echo "[  FAILED  ] $name"
		failed=$((failed + 1))
	fi
done
echo "[==========] ${#names[@]} test(s) run."
echo "[  PASSED  ] $passed test(s)."
[ "$failed" -eq 0 ] || { echo "[  FAILED  ] $failed test(s)."; exit 1; }

#!/bin/bash
# Runs test programs one after another and ends with one tally line,
# "N passed, N failed, N skipped", summed from each program's summary:
# cmocka's ("[  PASSED  ] N test(s).") or, for the Node tests, TAP's
# ("# pass N", "# fail N", "# cancelled N", "# skipped N"; a cancelled
# test, one that timed out or never ran to its end, counts as failed).
# Exits non-zero if any test failed or any program crashed. Each program's
# time goes to stderr ("NAME: PROGRAM took N s"), and the suite's with the
# tally, so a suite that grows slow says where.
#
#   tests/run-suite.sh NAME PROGRAM...
set -u
name=$1
shift
passed=0 failed=0 skipped=0 broken=0 suite_start=$SECONDS
for t in "$@"; do
	log=$(mktemp)
	start=$SECONDS
	"$t" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	echo "$name: $t took $((SECONDS - start)) s" >&2
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' "$log" | tail -1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' "$log" | tail -1)
	if [ -z "$p$f$s" ]; then
		p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
		c=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$log" | tail -1)
		s=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$log" | tail -1)
		[ -n "$f$c" ] && f=$((${f:-0} + ${c:-0}))
	fi
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
	# A program that died before its summary counts as one failure.
	if [ "$status" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "$name: $t exited with status $status before reporting" >&2
		broken=$((broken + 1))
	fi
	rm -f "$log"
done
failed=$((failed + broken))
echo "$name: $passed passed, $failed failed, $skipped skipped in $((SECONDS - suite_start)) s"
[ "$failed" -eq 0 ]

#!/bin/bash
# The kernel matrix: the profiler's checks (tests/kernels/guest-checks.sh)
# on Debian 12's own kernel (6.1, the one linux-image-amd64 depends on),
# on the newest bookworm 6.12 (linux-image-6.12.*+deb12-amd64-unsigned),
# each booted under qemu by tests/kernels/boot.sh, and on the host's own
# kernel, run directly, as it is and with the older kernels' fallbacks
# forced.
#
#   tests/kernels/matrix.sh
#
# Run as root from the checkout's root after the build (make test-kernels
# builds what it needs). The kernel packages are fetched with apt-get
# download and unpacked with dpkg-deb -x into KERNEL_CACHE (default
# build/kernels), never installed; a package already there is reused.
# Each kernel's logs go to KERNEL_CACHE/results/RELEASE/.
#
# Prints one table, mode x kernel, each cell works, works (fallback: ...),
# refused: ..., skipped: ... or FAILS (...), long texts as numbered notes
# under it; the same goes to KERNEL_CACHE/matrix.txt. Then each kernel's
# time, and a cmocka-style tally for tests/run-suite.sh (works and refused
# count as passed, FAILS as failed). Exits non-zero if any cell FAILS.
#
# Environment: KERNEL_MATRIX=short for the short set of checks (make
# test's); KERNEL_MATRIX_KERNELS, a space-separated subset of "6.1 6.12
# host host-fallbacks" (default all four; the last is the host's kernel
# with the fallbacks of 6.1 and 6.12 forced, JBPFPROF_FORCE_FALLBACK);
# GUEST_TIMEOUT, seconds one guest may take
# (default 3600); GUEST_TIMEOUT_SCALE, by how much the tests' deadlines
# stretch under qemu's emulation (JBPF_TIMEOUT_SCALE, default 8: TCG runs
# a JVM's start several times slower than the host, up to 40 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${KERNEL_CACHE:-build/kernels}
kernels=${KERNEL_MATRIX_KERNELS:-6.1 6.12 host host-fallbacks}
form=${KERNEL_MATRIX:-full}
[ "$form" = short ] || form=full

# Like the integration tests: without root, skipped with the reason.
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIPPED: the kernel matrix loads BPF programs and boots kernels: it needs root"
	echo "[  SKIPPED ] 1 test(s)."
	exit 0
fi
for f in "${JBPFPROF:-build/asan/jbpfprof}" "${AGENT:-build/libjbpfagent.so}"; do
	[ -e "$f" ] || { echo "matrix: no $f (make test-kernels builds it)" >&2; exit 1; }
done
mkdir -p "$cache/debs" "$cache/results"

# The package of one column: 6.1 is what linux-image-amd64 depends on in
# this release; 6.12 the newest bookworm build of it that apt knows.
package_of() {
	case $1 in
	6.1) apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1 ;;
	6.12) apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' | sort -V | tail -1 ;;
	esac
}

# Fetches and unpacks one package into $cache/PACKAGE; prints that
# directory. A download that fails leaves the last good unpacked copy.
unpacked() {
	local pkg=$1 dir="$cache/$1" deb
	if [ ! -e "$dir/.unpacked" ]; then
		# apt-get download writes into the current directory; as root it
		# warns that _apt cannot write there, harmlessly.
		(cd "$cache/debs" && apt-get download -q "$pkg" >&2) || return 1
		deb=$(ls -t "$cache/debs/${pkg}"_*.deb | head -1)
		rm -rf "$dir"
		dpkg-deb -x "$deb" "$dir"
		touch "$dir/.unpacked"
	fi
	printf '%s\n' "$dir"
}

# Runs the checks of one column into RESULTS; a column whose guest never
# ran them gets one cells.tsv line saying why, so the table shows it.
column_failed() {
	local results=$1 why=$2
	printf '%s\t%s\t0\t%s\n' "(every check)" "FAILS ($why)" "$3" >"$results/cells.tsv"
}

# One guest's column: boots KROOT under qemu to run the checks into
# RESULTS, then writes its label (with the guest's release) and its time.
# The guests run side by side: TCG gives each a host thread of its own.
run_guest() {
	local kroot=$1 results=$2 label=$3 start=$SECONDS status=0 took
	BOOT_TIMEOUT=${GUEST_TIMEOUT:-3600} tests/kernels/boot.sh "$kroot" "$results" \
		env KERNEL_MATRIX="$form" JBPF_TIMEOUT_SCALE="${GUEST_TIMEOUT_SCALE:-8}" \
		JBPFPROF="${JBPFPROF:-build/asan/jbpfprof}" WORKLOAD_DIR="${WORKLOAD_DIR:-build/workloads}" \
		JAVA_CLASSES="${JAVA_CLASSES:-build/java}" AGENT="${AGENT:-build/libjbpfagent.so}" \
		tests/kernels/guest-checks.sh /jbpf-results \
		>"$results/boot.log" 2>&1 || status=$?
	# The guest's progress lines, for whoever watches.
	grep '^guest-checks: ' "$results/console.log" >&2 || true
	if [ ! -s "$results/cells.tsv" ]; then
		column_failed "$results" "the guest did not run its checks (status $status): $(tail -1 \
			"$results/boot.log")" console.log
	elif [ "$status" -ne 0 ]; then
		# Checks ran but the guest ended badly: a cell for that too.
		printf '%s\t%s\t0\t%s\n' "(guest)" "FAILS (guest-checks.sh exited with $status)" \
			console.log >>"$results/cells.tsv"
	fi
	label="$(cat "$results/kernel.txt" 2>/dev/null || echo "$label") (qemu)"
	echo "$label" >"$results/label.txt"
	took=$((SECONDS - start))
	echo "$label: $((took / 60)) min $((took % 60)) s" >"$results/time.txt"
}

columns=() guests=()
matrix_start=$SECONDS
for k in $kernels; do
	results="$cache/results/$k"
	label=$k
	[ "$k" = host ] || [ "$k" = host-fallbacks ] && { columns+=("$results"); continue; }
	pkg=$(package_of "$k")
	[ -z "$pkg" ] || { results="$cache/results/${pkg#linux-image-}" label=${pkg#linux-image-}; }
	rm -rf "$results" && mkdir -p "$results"
	echo "$label" >"$results/label.txt"
	columns+=("$results")
	if [ -z "$pkg" ]; then
		column_failed "$results" "apt knows no package for $k: apt-get update?" ""
		echo "$label: not run" >"$results/time.txt"
		continue
	fi
	if ! kroot=$(unpacked "$pkg"); then
		column_failed "$results" "apt-get download $pkg failed" ""
		echo "$label: not run" >"$results/time.txt"
		continue
	fi
	echo "matrix: $pkg under qemu: $form checks (console: $results/console.log)" >&2
	run_guest "$kroot" "$results" "$label" &
	guests+=($!)
done
for pid in "${guests[@]}"; do
	wait "$pid" || true
done
# The host's columns after the guests, whose emulation would slow its checks.
for k in $kernels; do
	[ "$k" = host ] || [ "$k" = host-fallbacks ] || continue
	results="$cache/results/$k"
	label="$(uname -r) (host)"
	forced=
	# The fallbacks 6.1 and 6.12 take, forced: their ways proved on this
	# kernel too. (bpf-loop, for kernels before 6.1, leaves the Java
	# walk out altogether: test_wall forces it on its own.)
	[ "$k" = host-fallbacks ] && label="$(uname -r) (host, fallbacks)" \
		forced=map-elem-iter,task-work,uprobe-multi,uprobe-session
	rm -rf "$results" && mkdir -p "$results"
	echo "$label" >"$results/label.txt"
	echo "matrix: $label: $form checks" >&2
	start=$SECONDS
	JBPFPROF_FORCE_FALLBACK=$forced KERNEL_MATRIX=$form tests/kernels/guest-checks.sh "$results" >&2 ||
		column_failed "$results" "guest-checks.sh exited with $?" ""
	took=$((SECONDS - start))
	echo "$label: $((took / 60)) min $((took % 60)) s" >"$results/time.txt"
done
times=()
for results in "${columns[@]}"; do
	times+=("$(cat "$results/time.txt" 2>/dev/null || echo "$(cat "$results/label.txt"): no time")")
done
took=$((SECONDS - matrix_start))
times+=("in all (the guests side by side): $((took / 60)) min $((took % 60)) s")

# The table: one row per mode in the order the checks ran, one column per
# kernel. Cells longer than a word go to numbered notes, one per distinct
# text, each with the logs it comes from.
cols=$(printf '%s\n' "${columns[@]}")
machine="$(date -u +%F), $(nproc) CPUs, host $(. /etc/os-release && echo "$PRETTY_NAME"), qemu TCG"
awk -F '\t' -v cols="$cols" -v form="$form" -v machine="$machine" '
	BEGIN { ncol = split(cols, col, "\n") }
	FNR == 1 { c++; getline label < (col[c] "/label.txt"); head[c] = label }
	{
		if (!($1 in seen)) { seen[$1] = 1; rows[++nrow] = $1 }
		text = $2
		if (text == "works") { cell[$1, c] = "works"; next }
		kind = text; sub(/[ :(].*/, "", kind)
		if (text ~ /^works \(fallback/) kind = "works (fallback)"
		else if (text ~ /^works \(unavailable/) kind = "works (unavailable)"
		if (!(text in note)) { note[text] = ++nnote; notes[nnote] = text }
		n = note[text]
		if ($4 != "") logs[n] = logs[n] (logs[n] == "" ? "" : ", ") col[c] "/" $4
		cell[$1, c] = kind " [" n "]"
	}
	END {
		w0 = length("mode")
		for (r = 1; r <= nrow; r++) if (length(rows[r]) > w0) w0 = length(rows[r])
		for (c = 1; c <= ncol; c++) {
			w[c] = length(head[c])
			for (r = 1; r <= nrow; r++) {
				if (!((rows[r], c) in cell)) cell[rows[r], c] = "-"
				if (length(cell[rows[r], c]) > w[c]) w[c] = length(cell[rows[r], c])
			}
		}
		printf "Kernel matrix (%s checks): %s\n\n%-" w0 "s", form, machine, "mode"
		for (c = 1; c <= ncol; c++) printf "  %-" w[c] "s", head[c]
		printf "\n"
		for (r = 1; r <= nrow; r++) {
			printf "%-" w0 "s", rows[r]
			for (c = 1; c <= ncol; c++) printf "  %-" w[c] "s", cell[rows[r], c]
			printf "\n"
		}
		if (nnote) printf "\n"
		for (n = 1; n <= nnote; n++) {
			printf "[%d] %s\n", n, notes[n]
			if (logs[n] != "") printf "    logs: %s\n", logs[n]
		}
	}' "${columns[@]/%//cells.tsv}" >"$cache/matrix.txt"
{
	echo
	for t in "${times[@]}"; do echo "time: $t"; done
} >>"$cache/matrix.txt"
cat "$cache/matrix.txt"

# The tally, in cmocka's words, for tests/run-suite.sh: one test per cell.
passed=0 failed=0 skipped=0
for c in "${columns[@]}"; do
	while IFS=$'\t' read -r _ cell _; do
		case $cell in
		works* | refused:*) passed=$((passed + 1)) ;;
		skipped:*) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	done <"$c/cells.tsv"
done
echo "[  PASSED  ] $passed test(s)."
echo "[  FAILED  ] $failed test(s)."
echo "[  SKIPPED ] $skipped test(s)."
[ "$failed" -eq 0 ]

# Helpers the bench scripts share; sourced, not run (". bench/lib.sh" from
# the project root).

# The median of the numbers on standard input, one per line.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# "MEDIAN MIN MAX" of the numbers in file $1, one per line.
spread() { echo "$(median <"$1") $(sort -n "$1" | head -1) $(sort -n "$1" | tail -1)"; }

# The median of the ratios of file $1 to file $2, line by line: each line is
# one round, so the ratio compares runs made side by side.
ratio_median() { paste "$1" "$2" | awk '{ print $1 / $2 }' | median; }

# Reads the profiler's stderr from descriptor $1 until it says it samples,
# handing every line read to the function named $2 first, if one is named.
# Returns 1 when the profiler's stderr ends before that.
wait_for_sampling() {
	local fd=$1 each=${2:-} line

	while read -r line <&"$fd"; do
		if [ -n "$each" ]; then
			"$each" "$line"
		fi
		case $line in *"jbpfprof: sampling"*) return 0 ;; esac
	done
	return 1
}

# Extracts java.util's sources from the src.zip $1 once, into a cache
# directory named after the archive's size and time, and prints that
# directory; its file "files" lists the sources for javac.
javac_sources() {
	local src_zip=$1 cache

	cache=${XDG_CACHE_HOME:-$HOME/.cache}/jbpfprof/javac-src-$(stat -L -c %s-%Y "$src_zip")
	if [ ! -f "$cache/files" ]; then
		rm -rf "$cache"
		mkdir -p "$cache"
		unzip -q "$src_zip" 'java.base/java/util/*' -d "$cache"
		(cd "$cache" && ls java.base/java/util/*.java java.base/java/util/function/*.java \
			java.base/java/util/stream/*.java) >"$cache/files.tmp"
		mv "$cache/files.tmp" "$cache/files"
	fi
	echo "$cache"
}

# Writes to $3 javac's arguments for compiling the sources in directory $1
# (from javac_sources) into $2: as java.base itself, patched, against the
# rest of the JDK.
write_javac_args() {
	{
		echo "-d $2"
		echo "--patch-module java.base=$1/java.base"
		echo "-proc:none -implicit:none -nowarn -Xlint:none"
		sed "s|^|$1/|" "$1/files"
	} >"$3"
}

# Runs $1 rounds of the modes $3..., each mode once a round through the
# script's run_once MODE (which appends the run's time, in ns, to
# $tmp/MODE), in an order rotated from round to round so that no mode
# always runs first or after the same one; then prints the round's times
# in the modes' order, in seconds with $2 decimals, "  round N:  MODE T s
# ...". A script may define label MODE (the name printed for MODE) and
# round_note MODE (printed after MODE's time: figures of its own, such as
# a ratio to another mode of the same round).
rotated_rounds() {
	local runs=$1 digits=$2 r k m name
	shift 2
	local modes=("$@") n=$#

	for ((r = 0; r < runs; r++)); do
		for ((k = 0; k < n; k++)); do
			run_once "${modes[$(((k + r) % n))]}"
		done
		printf '  round %d:' $((r + 1))
		for m in "${modes[@]}"; do
			name=$m
			if declare -F label >/dev/null; then name=$(label "$m"); fi
			printf "  %s %.${digits}f s" "$name" "$(awk -v v="$(tail -1 "$tmp/$m")" 'BEGIN { print v / 1e9 }')"
			if declare -F round_note >/dev/null; then round_note "$m"; fi
		done
		echo
	done
}

# Prints, without ending the line, mode $1's times over the rounds (from
# $tmp/$1, ns) in seconds with $3 decimals, the mode's name $2 wide:
# "  MODE median T s (min T, max T)".
print_times() {
	local m=$1 width=$2 digits=$3 med lo hi

	read -r med lo hi <<<"$(spread "$tmp/$m")"
	printf "  %-${width}s median %.${digits}f s (min %.${digits}f, max %.${digits}f)" "$m" \
		"$(awk -v v="$med" 'BEGIN { print v / 1e9 }')" "$(awk -v v="$lo" 'BEGIN { print v / 1e9 }')" \
		"$(awk -v v="$hi" 'BEGIN { print v / 1e9 }')"
}

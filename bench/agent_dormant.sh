#!/bin/bash
# What the agent costs a JVM that loads it at start-up and is never
# profiled: javac with and without -J-agentpath:libjbpfagent.so (dormant).
#
#   [JAVAC=path] bench/agent_dormant.sh [ROUNDS]   (default 9 rounds)
#
# The work: JDK 17's javac (or $JAVAC, a javac of the same major version as
# the sources) compiles java.base's java/util/*.java, java/util/function/*.java
# and java/util/stream/*.java from JDK 17's source archive (package
# openjdk-17-source, the set bench/java_overhead.sh uses), as one process
# from launch to exit, so JVM start-up, where the agent's Agent_OnLoad runs,
# is counted. Each round runs both variants, in alternating order, side by
# side; the script prints each round's elapsed and CPU (user + system)
# seconds, then each variant's median, min and max and the median of the
# per-round ratios (agent / none). A dormant agent should cost nothing: a
# ratio of 1 within the spread of the rounds.
#
# No root needed; nothing is profiled. On a shared machine the figures are
# noisy: rerun with more rounds on a quiet one.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-9}
javac=${JAVAC:-/usr/lib/jvm/java-17-openjdk-amd64/bin/javac}
src_zip=/usr/lib/jvm/openjdk-17/src.zip
agent=$(realpath build/libjbpfagent.so 2>/dev/null || true)
[ -f "$agent" ] || { echo "agent_dormant.sh: no build/libjbpfagent.so: run make first" >&2; exit 1; }
[ -x "$javac" ] || { echo "agent_dormant.sh: no javac at $javac (set JAVAC)" >&2; exit 1; }
[ -r "$src_zip" ] || { echo "agent_dormant.sh: no $src_zip (apt-get install openjdk-17-source)" >&2; exit 1; }

# The sources, extracted once per version of the archive (shared with java_overhead.sh).
cache=$(javac_sources "$src_zip")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
write_javac_args "$cache" "$tmp/classes" "$tmp/javac.args"

# One compile of variant $1 (none or agent): appends elapsed and CPU seconds to $tmp/$1.wall and $tmp/$1.cpu.
run_once() {
	local flags=() t
	[ "$1" = agent ] && flags=("-J-agentpath:$agent")
	rm -rf "$tmp/classes"
	TIMEFORMAT='%R %U %S'
	t=$( { time "$javac" "${flags[@]}" "@$tmp/javac.args" >"$tmp/out" 2>&1; } 2>&1 ) ||
		{ echo "agent_dormant.sh: javac failed ($1):" >&2; cat "$tmp/out" >&2; exit 1; }
	read -r real user sys <<<"$t"
	echo "$real" >>"$tmp/$1.wall"
	awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }' >>"$tmp/$1.cpu"
}

echo "javac: $javac, $(wc -l <"$cache/files") files; agent: $agent; $rounds rounds; $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%MZ)"
run_once none # warm the page cache; not counted
rm -f "$tmp"/none.*
printf '%-6s %10s %10s %10s %10s\n' round none_s agent_s none_cpu agent_cpu
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then run_once none; run_once agent; else run_once agent; run_once none; fi
	printf '%-6s %10s %10s %10s %10s\n' "$r" "$(tail -1 "$tmp/none.wall")" "$(tail -1 "$tmp/agent.wall")" \
		"$(tail -1 "$tmp/none.cpu")" "$(tail -1 "$tmp/agent.cpu")"
done
for v in none agent; do
	read -r m lo hi <<<"$(spread "$tmp/$v.wall")"
	read -r cm clo chi <<<"$(spread "$tmp/$v.cpu")"
	printf '%-6s elapsed median %s s (min %s, max %s); CPU median %s s (min %s, max %s)\n' "$v" "$m" "$lo" "$hi" \
		"$cm" "$clo" "$chi"
done
echo "agent/none, median of per-round ratios: elapsed $(ratio_median "$tmp/agent.wall" "$tmp/none.wall"), CPU $(ratio_median "$tmp/agent.cpu" "$tmp/none.cpu")"

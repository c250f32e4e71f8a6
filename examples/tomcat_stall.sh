#!/bin/bash
# A stall, found on the flame graph page's timeline: Debian's Tomcat 10,
# under Debian's wrk on loopback, serves a JSP whose requests each read a
# price list under a lock; 8 s into a 20 s recording one request rebuilds
# the list, holding the lock for 4 s, and every other request waits for it.
# Writes the recording's flame graph page (CPU, 199 Hz, a row per thread);
# with a second argument, also a PNG of that page in headless Chromium with
# the stall selected on the timeline (how docs/images/tomcat-stall.png was
# made). Run from the project root, as root, after make.
#
#   examples/tomcat_stall.sh OUTPUT.html [SCREENSHOT.png]
#
# Needs tomcat10, wrk and curl (apt-get install tomcat10 wrk curl); the
# screenshot needs what the browser tests need (./install-deps.sh), and is
# made smaller by pngquant where it is installed.
# Tomcat runs from /usr/share/tomcat10 with a CATALINA_BASE of its own in a
# temporary directory, on a free loopback port, with 8 request threads (wrk
# keeps 8 connections open), and is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh      # wait_for_sampling
. bench/tomcat.sh   # tomcat_start, tomcat_stop

out=${1:?usage: examples/tomcat_stall.sh OUTPUT.html [SCREENSHOT.png]}
shot=${2:-}
prof=build/jbpfprof
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
seconds=20 stall_at=8 stall_ms=4000
[ "$(id -u)" = 0 ] || { echo "tomcat_stall.sh: run as root" >&2; exit 1; }
[ -x "$prof" ] || { echo "tomcat_stall.sh: $prof not built (make)" >&2; exit 1; }
for tool in wrk curl python3; do
	command -v "$tool" >/dev/null || { echo "tomcat_stall.sh: needs $tool (apt-get install $tool)" >&2; exit 1; }
done
[ -z "$(tomcat_missing)" ] || { echo "tomcat_stall.sh: $(tomcat_missing)" >&2; exit 1; }

tmp=$(mktemp -d)
cleanup() {
	tomcat_stop
	rm -rf "$tmp"
}
trap cleanup EXIT

# 8 request threads (wrk keeps 8 connections open), and one JSP.
jsp=$(cat <<'JSP'
<%@ page session="false" import="java.util.*" %><%!
	/* The price list every request reads, and the lock that guards it. */
	static final Object PRICES_LOCK = new Object();
	static Map<String, Long> prices = new HashMap<>();

	static long priceOf(String item) {
		synchronized (PRICES_LOCK) {
			return prices.getOrDefault(item, 0L);
		}
	}

	/* Recomputes the whole list for millis ms, under the lock: every request waits meanwhile. */
	static void rebuildPrices(long millis) {
		synchronized (PRICES_LOCK) {
			Map<String, Long> next = new HashMap<>();
			long end = System.nanoTime() + millis * 1000000L, n = 0;
			while (System.nanoTime() < end) {
				String item = Long.toString(n++ % 50000, 36);
				next.merge(item, (long) item.hashCode() * 31 + n, Long::sum);
			}
			prices = next;
		}
	}
%><%
	if (request.getParameter("rebuild") != null) {
		rebuildPrices(Long.parseLong(request.getParameter("rebuild")));
		out.print("rebuilt");
		return;
	}
	Map<String, Integer> words = new TreeMap<>();
	String text = "the quick brown fox jumps over the lazy dog " + request.getQueryString();
	for (String w : text.split(" "))
		words.merge(w, 1, Integer::sum);
	out.print(words + " " + priceOf("fox"));
%>
JSP
)
tomcat_start "$tmp" "$jsp" 'maxThreads="8" minSpareThreads="8"'

# Warm up (JIT), so that the recording shows the service, not the compiler.
wrk -t2 -c8 -d25s "$url" >/dev/null
curl -sf "http://127.0.0.1:$port/index.jsp?rebuild=300" >/dev/null

mkfifo "$tmp/err"
"$prof" -p "$tomcat" -F 199 --threads -d "$seconds" -f "$out" 2>"$tmp/err" &
pp=$!
exec 4<"$tmp/err"
wait_for_sampling 4 || { echo "tomcat_stall.sh: the profiler failed to start" >&2; exit 1; }
start=$(date +%s.%N)
wrk -t2 -c8 -d$((seconds - 1))s "$url" >"$tmp/wrk" &
wp=$!
sleep "$stall_at"
from=$(date +%s.%N)
curl -sf "http://127.0.0.1:$port/index.jsp?rebuild=$stall_ms" >/dev/null
to=$(date +%s.%N)
wait "$wp"
cat <&4 >&2
exec 4<&-
wait "$pp" || { echo "tomcat_stall.sh: the profiler failed" >&2; exit 1; }
range=$(python3 -c "import sys; s, a, b = map(float, sys.argv[1:]); print('%.1f %.1f' % (a - s, b - s))" \
	"$start" "$from" "$to")
echo "tomcat_stall.sh: $(awk '/^Requests\/sec:/ { print $2 }' "$tmp/wrk") requests/s;" \
	"the stall from ${range% *} s to ${range#* } s of the recording"
if [ -n "$shot" ]; then
	# shellcheck disable=SC2086  # two numbers
	node examples/timeline_screenshot.mjs "$out" $range "$shot" org.apache.jsp.index_jsp.rebuildPrices
	# A page's few flat colours fit a palette: a third of the size.
	if command -v pngquant >/dev/null; then
		pngquant --force --output "$shot" 256 "$shot"
	fi
fi

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
. bench/lib.sh   # wait_for_sampling

out=${1:?usage: examples/tomcat_stall.sh OUTPUT.html [SCREENSHOT.png]}
shot=${2:-}
prof=build/jbpfprof
catalina_home=/usr/share/tomcat10
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
seconds=20 stall_at=8 stall_ms=4000
[ "$(id -u)" = 0 ] || { echo "tomcat_stall.sh: run as root" >&2; exit 1; }
[ -x "$prof" ] || { echo "tomcat_stall.sh: $prof not built (make)" >&2; exit 1; }
for tool in wrk curl python3; do
	command -v "$tool" >/dev/null || { echo "tomcat_stall.sh: needs $tool (apt-get install $tool)" >&2; exit 1; }
done
[ -x "$catalina_home/bin/catalina.sh" ] ||
	{ echo "tomcat_stall.sh: needs tomcat10 (apt-get install tomcat10)" >&2; exit 1; }

tmp=$(mktemp -d)
tomcat=
cleanup() {
	if [ -n "$tomcat" ] && kill "$tomcat" 2>/dev/null; then
		for _ in $(seq 50); do kill -0 "$tomcat" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$tomcat" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# A CATALINA_BASE: Debian's configuration on a free port, 8 request threads, no shutdown port, one JSP.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=$tmp/base
mkdir -p "$base/conf" "$base/logs" "$base/temp" "$base/work" "$base/webapps/ROOT"
cp "$catalina_home"/etc/* "$base/conf/"
sed -i -e "0,/port=\"8080\"/s//port=\"$port\" address=\"127.0.0.1\" maxThreads=\"8\" minSpareThreads=\"8\"/" \
	-e 's/port="8005"/port="-1"/' "$base/conf/server.xml"
cat >"$base/webapps/ROOT/index.jsp" <<'JSP'
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
CATALINA_HOME=$catalina_home CATALINA_BASE=$base CATALINA_TMPDIR=$base/temp \
	"$catalina_home/bin/catalina.sh" run >"$tmp/tomcat.log" 2>&1 &
tomcat=$!   # catalina.sh run execs java
url="http://127.0.0.1:$port/index.jsp?x=1"
for _ in $(seq 120); do
	curl -sf "$url" >/dev/null 2>&1 && break
	sleep 0.5
done
curl -sf "$url" >/dev/null || { echo "tomcat_stall.sh: Tomcat did not start:" >&2; cat "$tmp/tomcat.log" >&2; exit 1; }

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

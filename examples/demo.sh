#!/bin/sh
# Profiles the bundled Java demo (examples/Demo.java) for 5 seconds and
# writes a flame graph. Run from the project root, as root, after make.
#
#   examples/demo.sh [OUTPUT.html]     (default demo-flamegraph.html)
#
# The JVM runs with no special flags: jbpfprof loads its agent into it when
# it attaches. JAVA=path picks another java than the one on PATH.
set -eu
cd "$(dirname "$0")/.."
[ -x build/jbpfprof ] && [ -f build/java/Demo.class ] || make
if [ ! -f build/java/Demo.class ]; then
	echo "demo.sh: make did not build build/java/Demo.class (no javac? ./install-deps.sh installs JDK 17)" >&2
	exit 1
fi
java=${JAVA:-java}
if ! command -v "$java" >/dev/null; then
	echo "demo.sh: no java to run the demo (./install-deps.sh installs JDK 17)" >&2
	exit 1
fi
out=${1:-demo-flamegraph.html}
tmp=$(mktemp -d)
demo=
trap 'if [ -n "$demo" ]; then kill "$demo" 2>/dev/null || true; fi; rm -rf "$tmp"' EXIT
mkfifo "$tmp/out"
"$java" -cp build/java Demo 60 >"$tmp/out" &
demo=$!
exec 3<"$tmp/out"
# Profile once the demo's threads run, not while the JVM starts.
if ! read -r line <&3 || [ "$line" != ready ]; then
	echo "demo.sh: the demo JVM did not start" >&2
	exit 1
fi
build/jbpfprof -p "$demo" -d 5 -f "$out"
kill "$demo"
wait "$demo" 2>/dev/null || true
demo=
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
echo "Open $out in a browser to see where the demo spent its CPU."

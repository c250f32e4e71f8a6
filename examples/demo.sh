#!/bin/sh
# Profiles the bundled demo for 5 seconds and writes a flame graph.
# Run from the project root, as root, after make.
set -eu
cd "$(dirname "$0")/.."
[ -x build/jbpfprof ] && [ -x build/workloads/demo ] || make
out=${1:-demo-flamegraph.html}
build/workloads/demo 8 >/dev/null &
demo=$!
trap 'kill $demo 2>/dev/null || true' EXIT
build/jbpfprof -p "$demo" -d 5 -f "$out"
echo "Open $(pwd)/$out in a browser to see where the demo spent its CPU."

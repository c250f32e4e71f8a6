#!/bin/bash
# Unwind table build time and size for the files a profiled host maps most:
# libc, libjvm of JDK 17 and JDK 25, python3, and libLLVM-14 (the largest
# .eh_frame on these machines, 4.8 MiB). Each table is built RUNS times
# (default 5) in one process; the median and fastest times are printed with
# the FDEs read, rows kept, rows the walk cannot follow (stop), PLT rows,
# the table's bytes (12 per row), the median time of the SHA-256 digest
# that keys the table (paid per file even when the table is cached), and the
# FDE ranges cut by libdw's work budget (cut: 0 for a real file). Files not
# installed are skipped.
#
#   bench/unwind_tables.sh [FILE...]     (no root needed)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build/bench/unwind_tables
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
	for f in /lib/x86_64-linux-gnu/libc.so.6 \
		/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so \
		/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so \
		"$(readlink -f /usr/bin/python3)" \
		/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1; do
		if [ -r "$f" ]; then files+=("$f"); else echo "bench: $f not installed, skipped" >&2; fi
	done
fi
echo "unwind tables, $(date -u +%Y-%m-%d), $(nproc) CPUs, elfutils $(dpkg-query -W -f='${Version}' libdw1 2>/dev/null || echo '?')"
build/bench/unwind_tables -n "${RUNS:-5}" "${files[@]}"

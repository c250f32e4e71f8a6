#!/bin/bash
# Seeds for the fuzz targets, made from real inputs of this machine and
# this build, into DIR/seeds/NAME (default build/fuzz):
#   fuzz_procmaps  a process's /proc/PID/maps
#   fuzz_proc      /proc/PID/stat and status, and an environment block
#   fuzz_attach    a JVM's attach reply, /proc/PID/status and cmdline
#   fuzz_perfmap   a perf map in the JVM's format
#   fuzz_elf, fuzz_unwind  the build's small test programs (ELF, with CFI)
#   fuzz_pprof     a pprof recording of a busy shell, written by the
#                  build's jbpfprof (root: BPF), gzipped and plain
# fuzz_record and fuzz_javastream start from nothing: their formats are
# fixed-size headers libFuzzer finds in seconds.
#
#   tests/fuzz/seeds.sh [DIR]
set -eu
cd "$(dirname "$0")/../.."
dir=${1:-build/fuzz}/seeds
rm -rf "$dir"
for name in fuzz_procmaps fuzz_proc fuzz_attach fuzz_perfmap fuzz_elf fuzz_unwind fuzz_pprof fuzz_record \
	fuzz_javastream; do
	mkdir -p "$dir/$name"
done
cat /proc/self/maps >"$dir/fuzz_procmaps/self.maps"
cat /proc/$$/stat >"$dir/fuzz_proc/stat"
cat /proc/$$/status >"$dir/fuzz_proc/status"
printf 'PATH=/usr/bin:/bin\0JAVA_TOOL_OPTIONS=-Xmx1g -XX:+UseG1GC\0HOME=/root\0' >"$dir/fuzz_proc/environ"
printf '0\nreturn code: 0\n' >"$dir/fuzz_attach/reply"
cat /proc/$$/status >"$dir/fuzz_attach/status"
printf 'java\0-XX:+DisableAttachMechanism\0-cp\0app.jar\0Main\0' >"$dir/fuzz_attach/cmdline"
printf '7f3a10000000 80 Interpreter\n7f3a10001000 1a4 Ljava/lang/String;::hashCode\n7f3a10002000 60 stub: call_stub\n' \
	>"$dir/fuzz_perfmap/jvm.map"
for f in build/workloads/cpu_split build/workloads/exec_into build/workloads/comm_target; do
	[ -f "$f" ] || continue
	cp "$f" "$dir/fuzz_elf/"
	cp "$f" "$dir/fuzz_unwind/"
done
if [ -x build/jbpfprof ] && [ "$(id -u)" -eq 0 ]; then
	timeout 3 sh -c 'while :; do :; done' &
	if build/jbpfprof -p $! -d 1 -F 499 --threads -o pprof -f "$dir/fuzz_pprof/busy.pb.gz" >/dev/null 2>&1; then
		gzip -dc "$dir/fuzz_pprof/busy.pb.gz" >"$dir/fuzz_pprof/busy.pb"
	fi
	wait || true
fi
echo "seeds: $(find "$dir" -type f | wc -l) files in $dir"

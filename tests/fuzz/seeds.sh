#!/bin/bash
# Seeds for the fuzz targets, made from real inputs of this machine and
# this build, into DIR/seeds/NAME (default build/fuzz):
#   fuzz_procmaps  a process's /proc/PID/maps
#   fuzz_proc      /proc/PID/stat and status, and an environment block
#   fuzz_attach    a JVM's attach reply, /proc/PID/status and cmdline
#   fuzz_perfmap   a perf map in the JVM's format
#   fuzz_elf, fuzz_unwind  the build's small test programs (ELF, with CFI)
#   fuzz_pprof     a pprof recording of a busy shell, written by the
#                  build's jbpfprof (root: BPF), gzipped and plain, and
#                  one of two events (-e cpu,nativemem) and a wall-clock
#                  one: samples with their times (timestamp and duration)
#   fuzz_jfr       the same recording as JFR (jbpfprof convert), a JDK's
#                  own recording of CpuSplit (when java is there), and
#                  async-profiler's (tests/fixtures/jfr)
#   fuzz_hotspot_names  one interpreted frame of a method laid out as
#                  JDK 17 lays out Method, ConstMethod, ConstantPool,
#                  Klass and Symbol (the offsets of tests/unit/hotspot_jdks.h)
#   fuzz_vmstructs the tables a JDK 17 libjvm gives for what naming reads,
#                  written by DIR/seed_vmstructs (tests/fuzz/seed_vmstructs.c)
#   fuzz_classes   an image with vmClasses, a StackChunk class (its pool and
#                  field stream) and a flag table, one seed per call
#   fuzz_lines     line number tables as JDK 17 and JDK 25 compress them:
#                  short pairs, a long one (0xff and two signed numbers)
#   fuzz_thread_names  a JavaThread whose Thread is named in Latin-1, and one
#                  in UTF-16, with compressed oops
# fuzz_record and fuzz_javastream start from nothing: their formats are
# fixed-size headers libFuzzer finds in seconds.
#
#   tests/fuzz/seeds.sh [DIR]
set -eu
cd "$(dirname "$0")/../.."
dir=${1:-build/fuzz}/seeds
rm -rf "$dir"
for name in fuzz_procmaps fuzz_proc fuzz_attach fuzz_perfmap fuzz_elf fuzz_unwind fuzz_pprof fuzz_record \
	fuzz_javastream fuzz_hotspot_names fuzz_vmstructs fuzz_jfr fuzz_classes fuzz_thread_names fuzz_lines; do
	mkdir -p "$dir/$name"
done
"${1:-build/fuzz}/seed_vmstructs" "$dir/fuzz_vmstructs/jdk17"
cat /proc/self/maps >"$dir/fuzz_procmaps/self.maps"
# JDK 17: Method._constMethod +8, ConstMethod._constants +8, _flags +28,
# _code_size +32, _name_index +34, _signature_index +36, sizeof 48;
# ConstantPool._pool_holder +24, _length +60, entries after its 72 bytes;
# Klass._name +24; Symbol._length +4, _body +6. The image is mapped at
# 0x10000000; the frame: interpreted, Method at +0x100, bcp 2 bytes into
# the bytecodes, cookie the ConstMethod at +0x200.
python3 - "$dir/fuzz_hotspot_names/interpreted" <<'PY'
import struct, sys
base = 0x10000000
img = bytearray(0x1000)
def put(off, fmt, v): struct.pack_into("<" + fmt, img, off, v)
def symbol(off, text):
    put(off + 4, "H", len(text))
    img[off + 6:off + 6 + len(text)] = text
put(0x100 + 8, "Q", base + 0x200)
put(0x200 + 8, "Q", base + 0x400)
put(0x200 + 32, "H", 10)
put(0x200 + 34, "H", 1)
put(0x200 + 36, "H", 2)
put(0x400 + 24, "Q", base + 0x600)
put(0x400 + 60, "i", 3)
put(0x400 + 72 + 8, "Q", base + 0x800)
put(0x400 + 72 + 16, "Q", base + 0x900)
put(0x600 + 24, "Q", base + 0xa00)
symbol(0x800, b"run")
symbol(0x900, b"(I)V")
symbol(0xa00, b"com/example/Foo")
frame = bytes([1]) + struct.pack("<III", 0x100, 0x200 + 48 + 2, 0x200)
open(sys.argv[1], "wb").write(bytes([0, 0]) + frame + img)
PY
# fuzz_classes: the image at 0x10000000 (tests/fuzz/fuzz_classes.c): vmClasses
# (+0: none, the class at +0x100), the class's name +24, constant pool +224
# and field stream +448; the pool at +0x800 (72 bytes, _length +60, Symbol *
# entries after), Symbols at +0x400.. (length u2 +4, bytes +6); the stream at
# +0xa00 (an int length, then UNSIGNED5: 2 Java fields, 0 injected, then
# name, signature, offset, access, flags of "parent" and "sp"); two flags at
# +0xc00 (32 bytes each: name +8, value's address +16), their names at +0xd00,
# values at +0xe00; JVMFlag::flags and numFlags at +0xf00.
python3 - "$dir/fuzz_classes" <<'PY'
import struct, sys
base = 0x10000000
img = bytearray(0x1000)
def put(off, fmt, v): struct.pack_into("<" + fmt, img, off, v)
def symbol(off, text):
    put(off + 4, "H", len(text))
    img[off + 6:off + 6 + len(text)] = text
def u5(v):
    out = bytearray()
    for i in range(5):
        if v < 191 or i == 4:
            out.append(v + 1)
            return out
        v -= 191
        out.append(1 + 191 + v % 64)
        v >>= 6
put(8, "Q", base + 0x100)
put(0x100 + 24, "Q", base + 0x400)
put(0x100 + 224, "Q", base + 0x800)
put(0x100 + 448, "Q", base + 0xa00)
symbols = [b"jdk/internal/vm/StackChunk", b"parent", b"Ljdk/internal/vm/StackChunk;", b"sp", b"I"]
for i, text in enumerate(symbols):
    symbol(0x400 + 0x40 * i, text)
    put(0x800 + 72 + 8 * (i + 1), "Q", base + 0x400 + 0x40 * i)
put(0x800 + 60, "i", len(symbols) + 1)
stream = u5(2) + u5(0) + b"".join(u5(v) for v in (2, 3, 12, 2, 0, 4, 5, 20, 2, 0))
put(0xa00, "i", len(stream))
img[0xa04:0xa04 + len(stream)] = stream
for i, name in enumerate((b"UseSerialGC", b"UseCompressedOops")):
    img[0xd00 + 0x40 * i:0xd00 + 0x40 * i + len(name)] = name
    put(0xc00 + 32 * i + 8, "Q", base + 0xd00 + 0x40 * i)
    put(0xc00 + 32 * i + 16, "Q", base + 0xe00 + i)
img[0xe01] = 1
put(0xf00, "Q", base + 0xc00)
put(0xf08, "Q", 2)
for call, name in enumerate(("class", "field", "flag")):
    open(f"{sys.argv[1]}/{name}", "wb").write(bytes([call]) + img)
PY
# fuzz_thread_names: the image at 0x10000000 (tests/fuzz/fuzz_thread_names.c),
# also the compressed oops' base (shift 3) and class pointers' (shift 0): the
# JavaThread at +0 (_threadObj +0x18, the handle's slot at +0x20), its Thread
# at +0x100 (name +0x50), the String at +0x200 (class +8, value +12, coder
# +16; String's class is the image's +0x40), the byte[] at +0x300 (length
# +12, bytes +16).
python3 - "$dir/fuzz_thread_names" <<'PY'
import struct, sys
base = 0x10000000
for seed, coder, text in (("latin1", 0, "worker-pool-alpha-long-name-1".encode("latin-1")),
                          ("utf16", 1, "\u8a08\u7b97-utf16-\U0001f600".encode("utf-16-le"))):
    img = bytearray(0x400 + len(text))
    def put(off, fmt, v): struct.pack_into("<" + fmt, img, off, v)
    put(0x18, "Q", base + 0x20)
    put(0x20, "Q", base + 0x100)
    put(0x100 + 0x50, "I", 0x200 >> 3)
    put(0x200 + 8, "I", 0x40)
    put(0x200 + 12, "I", 0x300 >> 3)
    put(0x200 + 16, "B", coder)
    put(0x300 + 12, "i", len(text))
    img[0x310:0x310 + len(text)] = text
    open(f"{sys.argv[1]}/{seed}", "wb").write(bytes([4 | coder]) + img)
PY
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
	# The shell that spins, not a timeout(1) waiting for it: its samples, with their times.
	sh -c 'while :; do :; done' &
	busy=$!
	if build/jbpfprof -p $busy -d 1 -F 499 --threads -o pprof -f "$dir/fuzz_pprof/busy.pb.gz" >/dev/null 2>&1; then
		gzip -dc "$dir/fuzz_pprof/busy.pb.gz" >"$dir/fuzz_pprof/busy.pb"
		build/jbpfprof convert "$dir/fuzz_pprof/busy.pb.gz" -o jfr -f "$dir/fuzz_jfr/busy.jfr" >/dev/null 2>&1 || true
	fi
	# A recording of two events: their sample types side by side.
	build/jbpfprof -p $busy -d 1 -e cpu,nativemem -o pprof -f "$dir/fuzz_pprof/events.pb.gz" >/dev/null 2>&1 || true
	# Wall-clock time: waits as spans with a duration, and states.
	build/jbpfprof -p $busy -d 1 -e wall -o pprof -f "$dir/fuzz_pprof/wall.pb.gz" >/dev/null 2>&1 || true
	kill $busy
	wait || true
fi
cp tests/fixtures/jfr/*.jfr "$dir/fuzz_jfr/"
# The JDK's own: CpuSplit for two seconds under JFR's profiling settings, ended by SIGTERM (JFR writes at exit).
if command -v java >/dev/null && [ -f build/java/CpuSplit.class ]; then
	timeout -s TERM 2 java "-XX:StartFlightRecording=filename=$dir/fuzz_jfr/jdk.jfr,settings=profile" \
		-cp build/java CpuSplit -t 1 >/dev/null 2>&1 || true
fi
echo "seeds: $(find "$dir" -type f | wc -l) files in $dir"

# fuzz_lines: flags (bit 0: JDK 20's excluded byte), a bci (u16), then the
# table (tests/fuzz/fuzz_lines.c): line 20 at bci 0 (a long pair: 0xff and
# two zigzag UNSIGNED5 numbers), a line more every 4 bytecodes, a jump back
# of 5 lines 280 bytecodes on (long), and the end byte.
python3 - "$dir/fuzz_lines" <<'PY'
import sys
def u5(v, x):
    out = bytearray()
    for i in range(5):
        if v < 192 - x or i == 4:
            out.append(v + x)
            return bytes(out)
        d = (192 - x) + (v - (192 - x)) % 64
        out.append(d + x)
        v = (v - d) // 64
def zigzag(v):
    return ((v << 1) ^ (v >> 31)) & 0xffffffff
for name, x in (("jdk17", 0), ("jdk25", 1)):
    t = bytearray([0xff]) + u5(zigzag(0), x) + u5(zigzag(20), x)
    t += bytes([(4 << 3) | 1] * 8)
    t += bytes([0xff]) + u5(zigzag(280), x) + u5(zigzag(-5), x)
    t.append(0)
    with open(sys.argv[1] + "/" + name, "wb") as f:
        f.write(bytes([x, 12, 0]) + bytes(t) + b"bytes after the end")
PY

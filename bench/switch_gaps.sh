#!/bin/bash
# Whether this kernel reports every context switch: records ftrace's own
# sched_switch event (a private tracefs instance, no BPF) for SECONDS and
# counts, per CPU, the switches whose prev is not the previous switch's
# next on that CPU: each is at least one switch that fired no tracepoint.
# The wall-clock mode's switch-in checks (bpf/deferral.bpf.h) exist for
# these; the most frequent (previous next, prev) pairs show where they are.
#
#   bench/switch_gaps.sh [SECONDS]   (root; default 10)
#
# Run it while the machine does its usual work: an idle CPU shows few gaps.
set -euo pipefail
seconds=${1:-10}
tracefs=/sys/kernel/tracing
[ -d "$tracefs/instances" ] || mount -t tracefs tracefs "$tracefs"
inst=$tracefs/instances/switch_gaps.$$
mkdir "$inst"
trap 'echo 0 >"$inst/events/sched/sched_switch/enable" 2>/dev/null; rmdir "$inst"' EXIT
echo 20000 >"$inst/buffer_size_kb"
echo 1 >"$inst/events/sched/sched_switch/enable"
sleep "$seconds"
echo 0 >"$inst/events/sched/sched_switch/enable"
echo "switch_gaps.sh: $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), $seconds s"
python3 - "$inst/trace" <<'PY'
import collections, re, sys
line_re = re.compile(r'\[(\d+)\].*sched_switch: prev_comm=(.*?) prev_pid=(\d+) .*==> next_comm=(.*?) next_pid=(\d+)')
last, switches, gaps, pairs = {}, collections.Counter(), collections.Counter(), collections.Counter()
lost = 0
for line in open(sys.argv[1]):
    if line.startswith('# entries-in-buffer/entries-written:'):
        kept, written = map(int, line.split(':')[1].split()[0].split('/'))
        lost = written - kept
    m = line_re.search(line)
    if not m:
        continue
    cpu, prev_comm, prev_pid, next_comm, next_pid = m.groups()
    switches[cpu] += 1
    if cpu in last and last[cpu][1] != prev_pid:
        gaps[cpu] += 1
        pairs[(last[cpu][0], prev_comm)] += 1
    last[cpu] = (next_comm, next_pid)
if lost:
    print(f"  {lost} events overwritten: the counts below are not reliable")
for cpu in sorted(switches):
    print(f"  CPU {int(cpu)}: {switches[cpu]} switches traced, {gaps[cpu]} gaps "
          f"({100 * gaps[cpu] / switches[cpu]:.2f}%)")
for (before, after), n in pairs.most_common(8):
    print(f"    {n:6d}  last traced next {before!r}, then prev {after!r}")
PY

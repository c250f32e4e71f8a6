#!/bin/bash
# What Java thread names cost a busy server: Tomcat 10 under wrk (bench/server.sh),
# jbpfprof -F 999 --threads with the JVM's names (threads999) against the same
# with the kernel's (nonames999: JBPFPROF_THREAD_NAMES=0), each sandwiched
# between unprofiled runs, in rotated order, round after round.
#
#   bench/thread_names.sh [ROUNDS]   (root; default 6 rounds; what server.sh needs)
#
# A name is read from the JVM's memory once per thread and per rename, when
# the thread list is read (user/java/thread_names.h), never per sample: the
# requests per second and the profiler's own CPU should not tell the two
# apart. server.sh prints each mode's median ratio to the unprofiled runs
# beside it, the round-by-round ratio of the two modes ("threads999 over
# nonames999"), the profiler's own CPU (median, % of one CPU), and how many
# request threads a run shows under their whole names ("[http-nio-ADDRESS-PORT-exec-N").
set -euo pipefail
cd "$(dirname "$0")/.."
MODES="none threads999 nonames999" exec bench/server.sh "${1:-6}"

#!/bin/bash
# Runs every benchmark; docs/benchmarks.md quotes their output.
set -euo pipefail
cd "$(dirname "$0")/.."
bench/overhead.sh "${RUNS:-7}"
bench/sample_cost.sh
bench/sample_floor.sh
bench/aliasing.sh
bench/timer_bias.sh
build/bench/interval_sim
bench/java_overhead.sh "${RUNS:-7}"
bench/java_sample_cost.sh
bench/java_walk_cost.sh
bench/wall_idle.sh
bench/pingpong.sh
bench/unwind_tables.sh
bench/unwind_cost.sh
bench/unwind_host.sh

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor of any BPF program on every context switch (bench/pingpong.sh):
 * two programs that do nothing, one on the sched_switch tracepoint (the
 * kind bpf/offcpu.bpf.c is, filled trace record and all) and one on the
 * raw tracepoint (arguments as they are). bench/switch_floor.c attaches
 * one of them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp/sched/sched_switch")
int floor_tp(void *ctx)
{
	return 0;
}

SEC("raw_tp/sched_switch")
int floor_raw(void *ctx)
{
	return 0;
}

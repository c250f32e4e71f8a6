/*
 * sampled_bytes: what one allocation sampled by bytes stands for.
 *
 * Both samplers of allocations (HotSpot's for -e alloc, bpf/nativemem.bpf.c
 * for -e nativemem) sample where the bytes allocated cross points drawn at
 * random, a mean of interval bytes apart (a Poisson process over bytes):
 * an allocation of size bytes is sampled with probability
 * 1 - e^(-size/interval), so each sample stands for the inverse of that
 * many such allocations.
 */
#ifndef JBPF_SAMPLED_BYTES_H
#define JBPF_SAMPLED_BYTES_H

#include <stdint.h>

/*
 * The bytes one sampled allocation of size bytes stands for:
 * size / (1 - e^(-size/interval)). size itself when interval is 0.
 */
uint64_t sampled_bytes__of(uint64_t size, uint64_t interval);

/* The allocations bytes (from sampled_bytes__of) of size each are: at least one. */
uint64_t sampled_bytes__objects(uint64_t bytes, uint64_t size);

#endif /* JBPF_SAMPLED_BYTES_H */

/*
 * leaks: sampled allocations held from their record to their address to
 * their free, and what is left at the end handed on, oldest first. Every
 * way a sample can fail to be followed (no address, untracked, its
 * process gone, the bound) drops it and is counted, never shown as a
 * leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "user/record/leaks.h"

/* A sampled allocation of bytes by thread tid of process tgid at time_ns, with one user frame. */
struct alloc_record {
	struct jbpf_sample s;
	__u64 ip;
};

static struct alloc_record alloc_of(uint32_t tgid, uint32_t tid, uint64_t time_ns, uint64_t bytes)
{
	struct alloc_record a;

	memset(&a, 0, sizeof(a));
	a.s.type = JBPF_RECORD_NATIVE_ALLOC;
	a.s.tgid = tgid;
	a.s.tid = tid;
	a.s.time_ns = time_ns;
	a.s.alloc_bytes = bytes;
	a.s.ustack_len = 1;
	a.ip = 0x1000 + bytes;
	return a;
}

static void sampled(struct leaks *l, uint32_t tgid, uint32_t tid, uint64_t time_ns, uint64_t bytes)
{
	struct alloc_record a = alloc_of(tgid, tid, time_ns, bytes);
	struct record r = { .type = JBPF_RECORD_NATIVE_ALLOC, .size = sizeof(a), .sample = &a.s };

	leaks__record(l, &r);
}

static void placed(struct leaks *l, uint32_t tgid, uint32_t tid, uint64_t time_ns, uint64_t addr, uint32_t flags)
{
	struct jbpf_native_address at = {
		.type = JBPF_RECORD_NATIVE_ADDRESS, .tid = tid, .tgid = tgid, .flags = flags, .time_ns = time_ns, .addr = addr,
	};
	struct record r = { .type = at.type, .size = sizeof(at), .native_address = &at };

	leaks__record(l, &r);
}

static void freed(struct leaks *l, uint32_t tgid, uint64_t addr)
{
	struct jbpf_native_free f = { .type = JBPF_RECORD_NATIVE_FREE, .tgid = tgid, .addr = addr };
	struct record r = { .type = f.type, .size = sizeof(f), .native_free = &f };

	leaks__record(l, &r);
}

/* What leaks__flush hands on: the bytes of each, in order. */
struct kept {
	uint64_t bytes[16];
	size_t n;
	uint32_t gone_tgid;
};

static void keep(void *ctx, const struct record *r)
{
	struct kept *k = ctx;

	assert_int_equal(r->type, JBPF_RECORD_NATIVE_ALLOC);
	assert_true(r->size >= sizeof(struct jbpf_sample) + sizeof(__u64));
	assert_true(k->n < 16);
	k->bytes[k->n++] = r->sample->alloc_bytes;
}

static bool gone(void *ctx, uint32_t tgid)
{
	return tgid == ((struct kept *)ctx)->gone_tgid;
}

static void freed_ones_leave_and_the_rest_come_out_oldest_first(void **state)
{
	struct leaks *l = leaks__new(1 << 20);
	struct leaks_stats st;
	struct kept k = { .gone_tgid = 0 };

	(void)state;
	assert_non_null(l);
	sampled(l, 10, 11, 100, 64);
	sampled(l, 10, 12, 101, 128);
	sampled(l, 10, 11, 102, 256);
	placed(l, 10, 11, 100, 0xa000, JBPF_NATIVE_TRACKED);
	placed(l, 10, 12, 101, 0xb000, JBPF_NATIVE_TRACKED);
	placed(l, 10, 11, 102, 0xc000, JBPF_NATIVE_TRACKED);
	freed(l, 10, 0xb000);
	/* A free of an address never sampled, or of another process's, changes nothing. */
	freed(l, 10, 0xd000);
	freed(l, 99, 0xa000);
	leaks__flush(l, gone, keep, &k);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.bytes[0], 64);
	assert_int_equal(k.bytes[1], 256);
	leaks__stats(l, &st);
	assert_int_equal(st.sampled, 3);
	assert_int_equal(st.freed, 1);
	assert_int_equal(st.kept, 2);
	/* Flushed: empty, a second flush hands nothing. */
	k.n = 0;
	leaks__flush(l, gone, keep, &k);
	assert_int_equal(k.n, 0);
	leaks__free(l);
}

static void what_cannot_be_followed_is_dropped_and_counted(void **state)
{
	struct leaks *l = leaks__new(1 << 20);
	struct leaks_stats st;
	struct kept k = { .gone_tgid = 30 };

	(void)state;
	assert_non_null(l);
	/* The call failed: address 0. */
	sampled(l, 10, 11, 100, 64);
	placed(l, 10, 11, 100, 0, 0);
	/* The live table was full: its free would not be seen. */
	sampled(l, 10, 11, 101, 128);
	placed(l, 10, 11, 101, 0xa000, 0);
	/* Its address never came (its record lost). */
	sampled(l, 10, 12, 102, 256);
	/* An address for no sample (the sample's record lost) is ignored. */
	placed(l, 10, 13, 103, 0xb000, JBPF_NATIVE_TRACKED);
	/* Its process ran another program; and one whose process has exited by the end. */
	sampled(l, 20, 21, 104, 512);
	placed(l, 20, 21, 104, 0xc000, JBPF_NATIVE_TRACKED);
	leaks__forget_process(l, 20);
	sampled(l, 30, 31, 105, 1024);
	placed(l, 30, 31, 105, 0xd000, JBPF_NATIVE_TRACKED);
	leaks__flush(l, gone, keep, &k);
	assert_int_equal(k.n, 0);
	leaks__stats(l, &st);
	assert_int_equal(st.sampled, 5);
	assert_int_equal(st.no_address, 2);
	assert_int_equal(st.untracked, 1);
	assert_int_equal(st.exited, 2);
	assert_int_equal(st.kept, 0);
	leaks__free(l);
}

/* An address sampled again before its free was seen: the old one was freed unseen, the new one stands. */
static void an_address_sampled_twice_counts_once(void **state)
{
	struct leaks *l = leaks__new(1 << 20);
	struct leaks_stats st;
	struct kept k = { 0 };

	(void)state;
	sampled(l, 10, 11, 100, 64);
	placed(l, 10, 11, 100, 0xa000, JBPF_NATIVE_TRACKED);
	sampled(l, 10, 11, 200, 96);
	placed(l, 10, 11, 200, 0xa000, JBPF_NATIVE_TRACKED);
	leaks__flush(l, NULL, keep, &k);
	assert_int_equal(k.n, 1);
	assert_int_equal(k.bytes[0], 96);
	leaks__stats(l, &st);
	assert_int_equal(st.freed, 1);
	leaks__free(l);
}

/* At most max_bytes of records held: the one past it is dropped and counted; a free makes room again. */
static void the_bound_holds(void **state)
{
	size_t one = sizeof(struct jbpf_sample) + sizeof(__u64);
	struct leaks *l = leaks__new(2 * one);
	struct leaks_stats st;
	struct kept k = { 0 };

	(void)state;
	for (uint32_t i = 0; i < 3; i++) {
		sampled(l, 10, 11, 100 + i, 64 + i);
		placed(l, 10, 11, 100 + i, 0xa000 + 0x100 * i, JBPF_NATIVE_TRACKED);
	}
	leaks__stats(l, &st);
	assert_int_equal(st.full, 1);
	freed(l, 10, 0xa000);
	sampled(l, 10, 11, 200, 1000);
	placed(l, 10, 11, 200, 0xf000, JBPF_NATIVE_TRACKED);
	leaks__flush(l, NULL, keep, &k);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.bytes[0], 65);
	assert_int_equal(k.bytes[1], 1000);
	leaks__free(l);
}

/* Many held at once, in every bucket: each found by its own key. */
static void many_allocations(void **state)
{
	struct leaks *l = leaks__new(64 << 20);
	struct leaks_stats st;
	struct kept k = { 0 };

	(void)state;
	for (uint32_t i = 0; i < 200000; i++) {
		sampled(l, 10, 1 + i % 7, 1000 + i, 16);
		placed(l, 10, 1 + i % 7, 1000 + i, 0x10000 + 16ull * i, JBPF_NATIVE_TRACKED);
	}
	for (uint32_t i = 0; i < 200000; i++)
		if (i != 123456)
			freed(l, 10, 0x10000 + 16ull * i);
	leaks__flush(l, NULL, keep, &k);
	assert_int_equal(k.n, 1);
	leaks__stats(l, &st);
	assert_int_equal(st.freed, 199999);
	leaks__free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(freed_ones_leave_and_the_rest_come_out_oldest_first),
		cmocka_unit_test(what_cannot_be_followed_is_dropped_and_counted),
		cmocka_unit_test(an_address_sampled_twice_counts_once),
		cmocka_unit_test(the_bound_holds),
		cmocka_unit_test(many_allocations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

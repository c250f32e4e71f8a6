/*
 * Virtual threads (JDK 21 and later), CPU samples walked by BPF, on JDK 25.
 *
 * tests/workloads/java/VThreads.java runs 10,000 virtual threads, each
 * forever doing five units of work in VThreads.five, three in
 * VThreads.three and two in VThreads.two, then yielding: 50/30/20 of the
 * work, on the carriers (ForkJoinPool workers) that mount them in turn.
 *
 * Judged, from samples taken until there are enough to judge a share to
 * the 3 points with four standard errors to spare: each method's
 * share of the samples under VThreads.unit within 3 points of its share of
 * the work; on 99% of them, the marker frame between the carrier's frames
 * (Continuation.enterSpecial) and the virtual thread's
 * (VThreads.lambda$main$1); the summary counts the samples on virtual
 * threads, as many as carry the marker. The JVM beats throughout.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"
#include "user/java/walked.h"

#define VIRTUAL_THREADS "10000"
/* Recordings at most, of 4 s each: a loaded machine takes more of them. */
#define ROUNDS 8

struct shares {
	uint64_t work;     /* samples under VThreads.unit */
	uint64_t in[3];    /* of those, under five, three, two */
	uint64_t marked;   /* of those, with the marker right under the virtual thread's entry lambda */
	uint64_t on_virtual; /* samples with the marker, the summary's figure to match */
	long long summary; /* what the summary counts on virtual threads, summed over recordings */
};

static const char *const methods[3] = { "VThreads.five", "VThreads.three", "VThreads.two" };
static const double expected[3] = { 0.5, 0.3, 0.2 };

static bool is_marker(const char *frame)
{
	return !strcmp(frame, WALKED_VIRTUAL) || !strcmp(frame, WALKED_VIRTUAL_FROZEN);
}

static void tally(const struct collapsed *c, struct shares *s)
{
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int unit, marker = -1;

		frames_split(&fr, c->stacks[i]);
		for (int k = 0; k < fr.n && marker < 0; k++)
			if (is_marker(fr.f[k]))
				marker = k;
		s->on_virtual += marker >= 0 ? c->counts[i] : 0;
		unit = find_frame(&fr, 0, "VThreads.unit");
		if (unit >= 0) {
			s->work += c->counts[i];
			for (int m = 0; m < 3; m++)
				if (find_frame(&fr, 0, methods[m]) >= 0)
					s->in[m] += c->counts[i];
			if (marker > 0 && !strcmp(fr.f[marker - 1], "jdk.internal.vm.Continuation.enterSpecial") &&
			    marker + 1 < fr.n && !strcmp(fr.f[marker + 1], "VThreads.lambda$main$1"))
				s->marked += c->counts[i];
		}
		free(fr.buf);
	}
}

/* "N on virtual threads" in the profiler's summary, or -1. */
static long long summary_on_virtual(const struct child *profiler)
{
	const char *p = strstr(profiler->buf, " on virtual threads");
	const char *start;

	if (!p)
		return -1;
	for (start = p; start > profiler->buf && start[-1] >= '0' && start[-1] <= '9'; start--)
		;
	return start == p ? -1 : atoll(start);
}

static void cpu_shares_of_virtual_threads(void **state)
{
	const struct jdk *jdk = &jdk25;
	struct shares s = { 0 };
	double tolerance = 0.03;
	/* n with four standard errors of the largest (p = 1/2) under the tolerance. */
	uint64_t needed = (uint64_t)ceil(pow(4 * 0.5 / tolerance, 2));
	struct jvm jvm;

	(void)state;
	jvm_require(jdk, "VThreads");
	jvm_start(&jvm, jdk, "VThreads", (char *[]){ "cpu", VIRTUAL_THREADS, NULL });
	s.summary = 0;
	for (int round = 0; s.work < needed && round < ROUNDS; round++) {
		char *file = harness_path(jvm.dir, "vthreads.collapsed");
		struct heartbeats hb;
		struct child profiler;
		struct collapsed stacks;
		long long counted;
		int status;

		status = jvm_record_watched(&jvm, &profiler, file, (char *[]){ "-F", "997", "-d", "4", NULL }, 60, 2000,
					    0, &hb);
		if (hb.stalled)
			jvm_kill(&jvm);
		assert_false(hb.stalled);
		if (status != 0)
			fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
		assert_int_equal(status, 0);
		assert_int_equal(collapsed_load(file, &stacks), 0);
		unlink(file);
		free(file);
		tally(&stacks, &s);
		counted = summary_on_virtual(&profiler);
		if (counted < 0)
			fprintf(stderr, "no count of virtual-thread samples in:\n%s\n", profiler.buf);
		assert_true(counted >= 0);
		s.summary += counted;
		collapsed_free(&stacks);
	}
	jvm_stop(&jvm);
	fprintf(stderr, "  %s: %llu samples of work (%llu wanted): five %.1f%%, three %.1f%%, two %.1f%%; "
		"%.2f%% with the marker between enterSpecial and the virtual thread; %llu on virtual threads, "
		"the summary says %lld\n",
		jdk->name, (unsigned long long)s.work, (unsigned long long)needed, harness_percent(s.in[0], s.work),
		harness_percent(s.in[1], s.work), harness_percent(s.in[2], s.work), harness_percent(s.marked, s.work),
		(unsigned long long)s.on_virtual, s.summary);
	assert_true(s.work >= needed);
	for (int m = 0; m < 3; m++)
		assert_true(fabs((double)s.in[m] / (double)s.work - expected[m]) <= tolerance);
	assert_true(s.marked * 100 >= s.work * 99);
	/* Every sample the summary counts on a virtual thread carries the marker, and the reverse. */
	assert_int_equal(s.summary, (long long)s.on_virtual);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(cpu_shares_of_virtual_threads, harness_teardown),
	};

	return cmocka_run_group_tests_name("vthreads", tests, NULL, NULL);
}

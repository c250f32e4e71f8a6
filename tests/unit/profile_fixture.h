/*
 * Helpers shared by the tests that build profiles by hand (profile,
 * collapsed, flamegraph, text). Include after <cmocka.h>.
 */
#ifndef JBPF_TEST_PROFILE_FIXTURE_H
#define JBPF_TEST_PROFILE_FIXTURE_H

#include <stdint.h>

#include "user/profile.h"

/* The id of (name, kind) in p; fails the test if it cannot be interned. */
static inline uint32_t intern_ok(struct profile *p, const char *name, enum frame_kind kind)
{
	int64_t id = profile__intern(p, name, kind);

	assert_true(id >= 0);
	return (uint32_t)id;
}

#endif /* JBPF_TEST_PROFILE_FIXTURE_H */

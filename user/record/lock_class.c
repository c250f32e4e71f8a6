/*
 * lock_class: -e lock's class of a stack's lock (contract in lock_class.h).
 */
#include "lock_class.h"

#include <stdio.h>
#include <string.h>

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* A frame of HotSpot's that enters a monitor (JDK 17's and 25's names). */
static bool enters_monitor(const char *name)
{
	static const char *const entries[] = {
		"ObjectMonitor::enter", "ObjectMonitor::EnterI", "ObjectMonitor::ReenterI", "ObjectMonitor::reenter",
		"ObjectSynchronizer::enter", "LightweightSynchronizer::enter",
	};

	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (starts_with(name, entries[i]))
			return true;
	return false;
}

#define SYNCHRONIZER "java.util.concurrent.locks.AbstractQueued"

/* A frame of AbstractQueued(Long)Synchronizer that acquires it. */
static bool acquires_synchronizer(const char *name)
{
	const char *method;

	if (!starts_with(name, SYNCHRONIZER) || !(method = strstr(name, "Synchronizer.")))
		return false;
	method += strlen("Synchronizer.");
	return starts_with(method, "acquire") || starts_with(method, "tryAcquire");
}

/*
 * The class of a java.util.concurrent lock, from the frame that called
 * into its synchronizer (name): "java.util.concurrent.locks.ReentrantLock"
 * from "...ReentrantLock$Sync.lock" (a lock's Sync, NonfairSync or
 * FairSync inner class stands for the lock), into out.
 */
static void lock_class_of_caller(const char *name, char *out, size_t size)
{
	const char *end = strchr(name, '('), *dot;
	size_t len = end ? (size_t)(end - name) : strlen(name);
	static const char *const syncs[] = { "$Sync", "$NonfairSync", "$FairSync" };

	/* An annotated frame ends in _[j] and the like. */
	if (len > 4 && name[len - 4] == '_' && name[len - 3] == '[')
		len -= 4;
	snprintf(out, size, "%.*s", (int)len, name);
	dot = strrchr(out, '.');
	if (dot)
		out[dot - out] = '\0';
	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++) {
		size_t n = strlen(out), k = strlen(syncs[i]);

		if (n > k && !strcmp(out + n - k, syncs[i]))
			out[n - k] = '\0';
	}
}

bool lock_class__of(const struct profile *profile, const uint32_t *frames, size_t depth, const char *monitor_class,
		    char *out, size_t size, bool *monitor)
{
	long outermost = -1;

	*monitor = false;
	for (size_t d = 0; d < depth; d++) {
		const char *name = profile__frame_name(profile, frames[d]);

		if (enters_monitor(name)) {
			*monitor = true;
			snprintf(out, size, "%s",
				 monitor_class && monitor_class[0] ? monitor_class : "[monitor of unknown class]");
			return true;
		}
		if (outermost < 0 && acquires_synchronizer(name))
			outermost = (long)d;
	}
	if (outermost < 0)
		return false;
	for (long d = outermost - 1; d >= 0; d--) {
		const char *name = profile__frame_name(profile, frames[d]);

		if (!starts_with(name, SYNCHRONIZER)) {
			lock_class_of_caller(name, out, size);
			return true;
		}
	}
	snprintf(out, size, "[synchronizer of unknown class]");
	return true;
}

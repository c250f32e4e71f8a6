/*
 * lock_class: -e lock's guess, from a stack, of whether it acquires a lock
 * and of the lock's class.
 *
 *   a monitor         a frame of HotSpot's that enters one (ObjectMonitor::
 *                     enter and kin, JDK 17's and 25's names); its class
 *                     is what the caller learnt elsewhere (the agent's
 *                     lock event, BPF's walk of the monitor), or "[monitor
 *                     of unknown class]"
 *   a java.util.      a frame of AbstractQueued(Long)Synchronizer that
 *   concurrent lock   acquires it; its class is that of the frame that
 *                     called into the synchronizer ("...ReentrantLock$Sync.
 *                     lock" gives "java.util.concurrent.locks.ReentrantLock":
 *                     a lock's Sync, NonfairSync or FairSync stands for it),
 *                     or "[synchronizer of unknown class]"
 *
 * Names are read as the profile holds them, so an annotated frame
 * ("_[j]") is recognised too. Pure: no state, no allocation.
 */
#ifndef JBPF_LOCK_CLASS_H
#define JBPF_LOCK_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/*
 * Whether the stack frames[0..depth) of profile (root first) acquires a
 * lock; if so its class into out (size bytes) and *monitor whether it is
 * a monitor. monitor_class: the monitor's class when known, else "" or
 * NULL.
 */
bool lock_class__of(const struct profile *profile, const uint32_t *frames, size_t depth, const char *monitor_class,
		    char *out, size_t size, bool *monitor);

#endif /* JBPF_LOCK_CLASS_H */

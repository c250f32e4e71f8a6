/*
 * lastjava_init: the layout lastjava.c works with, read from HotSpot's
 * VMStructs outside signal context (contract in lastjava.h).
 *
 * Every offset is checked against the size VMStructs gives its type and
 * must leave the field inside its object: a layout that is not what the
 * signal side assumes is refused as a whole, with one line saying what
 * was not understood.
 */
#include "lastjava.h"

#include <stdio.h>

#include "vmstructs.h"

/* Written once, by the first lastjava__init (the agent's lock serialises its callers). */
static struct {
	bool tried;
	int status;
	char err[160];
} st;

/* The offset of type::field into *offset when its type is size bytes, else a reason in st.why. */
static bool field(const char *type, const char *name, uint64_t size, uint64_t *offset)
{
	uint64_t got;

	if (!vmstructs__field(type, name, offset, &got)) {
		snprintf(st.err, sizeof(st.err), "VMStructs lists no %s::%s", type, name);
		return false;
	}
	if (got != size) {
		snprintf(st.err, sizeof(st.err), "%s::%s is %llu bytes, not %llu", type, name,
			 (unsigned long long)got, (unsigned long long)size);
		return false;
	}
	return true;
}

/* Every offset, checked to leave the field inside the object. */
static bool read_layout(struct lastjava_layout *lj)
{
	uint64_t anchor, anchor_size, sp, pc, fp, thread_size = vmstructs__type_size("JavaThread");
	uintptr_t low, high;

	if (!field("JavaThread", "_anchor", vmstructs__type_size("JavaFrameAnchor"), &anchor) ||
	    !field("JavaFrameAnchor", "_last_Java_sp", sizeof(void *), &sp) ||
	    !field("JavaFrameAnchor", "_last_Java_pc", sizeof(void *), &pc) ||
	    !field("JavaFrameAnchor", "_last_Java_fp", sizeof(void *), &fp) ||
	    !field("JavaThread", "_thread_state", sizeof(int32_t), &lj->state) ||
	    !field("JavaThread", "_stack_base", sizeof(void *), &lj->stack_base) ||
	    !field("JavaThread", "_stack_size", sizeof(size_t), &lj->stack_size))
		return false;
	anchor_size = vmstructs__type_size("JavaFrameAnchor");
	if (!thread_size || !anchor_size || anchor + anchor_size > thread_size || sp + 8 > anchor_size ||
	    pc + 8 > anchor_size || fp + 8 > anchor_size || lj->state + 4 > thread_size ||
	    lj->stack_base + 8 > thread_size || lj->stack_size + 8 > thread_size) {
		snprintf(st.err, sizeof(st.err), "a JavaThread field lies outside its %llu bytes",
			 (unsigned long long)thread_size);
		return false;
	}
	lj->anchor_sp = anchor + sp;
	lj->anchor_pc = anchor + pc;
	lj->anchor_fp = anchor + fp;
	if (!vmstructs__int_constant("_thread_in_vm", &lj->in_vm) ||
	    !vmstructs__int_constant("_thread_in_Java", &lj->in_java)) {
		snprintf(st.err, sizeof(st.err), "VMStructs lists no _thread_in_vm or _thread_in_Java");
		return false;
	}
	/* Set when the code cache is reserved, long before any agent can attach; never moved. */
	if (!vmstructs__static_field("CodeCache", "_low_bound", &low) ||
	    !vmstructs__static_field("CodeCache", "_high_bound", &high)) {
		snprintf(st.err, sizeof(st.err), "VMStructs lists no CodeCache::_low_bound or _high_bound");
		return false;
	}
	lj->code_low = *(const uintptr_t *)low;
	lj->code_high = *(const uintptr_t *)high;
	if (!lj->code_low || lj->code_high <= lj->code_low) {
		snprintf(st.err, sizeof(st.err), "the code cache's bounds are not set");
		return false;
	}
	return true;
}

int lastjava__init(char *err, size_t err_size)
{
	struct lastjava_layout layout;

	if (!st.tried) {
		st.tried = true;
		st.status = read_layout(&layout) ? 0 : -1;
		if (!st.status)
			lastjava__configure(&layout);
	}
	if (st.status)
		snprintf(err, err_size, "%s", st.err);
	return st.status;
}


/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The part of HotSpot's walk (bpf/hotspot.bpf.h, which includes this
 * before hotspot_step) that concerns virtual threads (JDK 21 and later):
 * where a virtual thread's frames meet its carrier's (the marker frame,
 * JBPF_JAVA_CARRIER, with the virtual thread's id and name), and the walk
 * of its frames HotSpot left frozen in the heap, in its continuation's
 * stack chunks (docs/architecture.md, "Virtual threads").
 *
 * Not a header of its own: it uses hotspot.bpf.h's steps and maps.
 */
#ifndef JBPF_HOTSPOT_VTHREADS_BPF_H
#define JBPF_HOTSPOT_VTHREADS_BPF_H

/* Words below a ContinuationEntry a virtual thread's outermost thawed frame may end at: its stack arguments. */
#define HOTSPOT_CONT_ARGS_WORDS 256

/*
 * Whether the walk, out of a virtual thread's outermost thawed frame, is
 * at the return barrier (a stub, StubRoutines::cont_returnBarrier, that
 * thaws the next frames when that frame returns): the thread has a
 * continuation mounted, and the stub's frame is the last before it.
 * *entry: the continuation's ContinuationEntry, at enterSpecial's sp.
 */
static __always_inline bool hotspot_at_return_barrier(const struct unwind_walk *w,
						      const struct jbpf_hotspot_jvm *jvm, __u64 *entry)
{
	/* A key on the stack: Linux 6.1 takes none from a global function's argument. */
	__u32 tid = w->tid;
	__u64 *thread = bpf_map_lookup_elem(&java_threads, &tid);

	return thread && !bpf_probe_read_user(entry, 8, (void *)(*thread + jvm->thread_cont_entry)) && *entry &&
	       w->sp <= *entry && *entry - w->sp <= 8 * HOTSPOT_CONT_ARGS_WORDS;
}

/* Bytes between a return address into Continuation.enterSpecial and ContinuationEntry::_return_pc, at most. */
#define HOTSPOT_ENTER_SPECIAL_NEAR 1024

/*
 * Whether the walk, at w->pc in nmethod b, is in Continuation.enterSpecial:
 * the blob that holds ContinuationEntry::_return_pc, where the continuation
 * returns after a thaw (the first run of a virtual thread returns a few
 * instructions before it, after the call that resolves Continuation.enter).
 */
static __always_inline bool hotspot_in_enter_special(const struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
						     const struct hotspot_blob *b)
{
	__s32 size = 0;

	if (w->pc + HOTSPOT_ENTER_SPECIAL_NEAR < jvm->cont_return_pc ||
	    w->pc > jvm->cont_return_pc + HOTSPOT_ENTER_SPECIAL_NEAR)
		return false;
	return !bpf_probe_read_user(&size, 4, (void *)(b->blob + jvm->blob_size)) && size > 0 &&
	       jvm->cont_return_pc >= b->code && jvm->cont_return_pc < b->blob + (__u32)size;
}

/* A stack chunk's frames end this far from its start at most (words): 8 MiB. */
#define HOTSPOT_CHUNK_MAX_WORDS (1u << 20)
/* Chunks of one virtual thread walked at most: its tail and the parents it was frozen into before. */
#define HOTSPOT_MAX_CHUNKS 4

/* The oop in the field at addr (JBPF_HOTSPOT_CHUNKS), narrow or whole; 0 when null or unread. */
static __always_inline __u64 hotspot_oop_at(const struct jbpf_hotspot_jvm *jvm, __u64 addr)
{
	__u64 whole = 0;
	__u32 narrow = 0;

	if (!jvm->oop_narrow)
		return bpf_probe_read_user(&whole, 8, (void *)addr) ? 0 : whole;
	if (bpf_probe_read_user(&narrow, 4, (void *)addr) || !narrow)
		return 0;
	return jvm->oop_base + ((__u64)narrow << (jvm->oop_shift & 31));
}

/*
 * Starts the walk of stack chunk's frames (the frames of a virtual thread
 * frozen in the heap): 0, or -1 when chunk is not a StackChunk with frames.
 * Its frames lie as on a stack from its sp to its bottom (words from where
 * its frames begin); a frame's pc is the word below its sp, and an
 * interpreted frame's rbp is kept relative to its slot, two words below
 * its sp (HotSpot's stackChunkFrameStream).
 */
static __always_inline int hotspot_chunk_begin(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm, __u64 chunk)
{
	__u64 start, words[2];
	__s32 sp = 0, bottom = 0;
	__u32 klass = 0;

	/* An empty chunk (all its frames thawed) leaves the frames to its parent. */
	for (int i = 0; i < HOTSPOT_MAX_CHUNKS; i++) {
		if (!chunk || w->chunks >= HOTSPOT_MAX_CHUNKS ||
		    bpf_probe_read_user(&klass, 4, (void *)(chunk + jvm->oop_klass)) ||
		    jvm->klass_base + ((__u64)klass << (jvm->klass_shift & 31)) != jvm->chunk_klass ||
		    bpf_probe_read_user(&sp, 4, (void *)(chunk + jvm->chunk_sp)) ||
		    bpf_probe_read_user(&bottom, 4, (void *)(chunk + jvm->chunk_bottom)) || sp <= 1 || sp > bottom ||
		    (__u32)bottom > HOTSPOT_CHUNK_MAX_WORDS)
			return -1;
		w->chunks++;
		if (sp < bottom)
			break;
		chunk = hotspot_oop_at(jvm, chunk + jvm->chunk_parent);
	}
	start = chunk + jvm->chunk_stack;
	if (sp >= bottom || bpf_probe_read_user(words, sizeof(words), (void *)(start + 8 * (__u64)sp - 16)) ||
	    !hotspot_in_code(jvm, words[1]))
		return -1;
	w->chunk = chunk;
	w->chunk_end = start + 8 * (__u64)bottom;
	w->sp = start + 8 * (__u64)sp;
	w->pc = words[1];
	w->bp = w->sp - 16 + 8 * words[0];
	w->trusted_pc = false;
	return 0;
}

/* The first 16 bytes of vthread's name into w->vthread_name, when it has one in Latin-1 (JBPF_HOTSPOT_VTHREAD_NAMES). */
static __always_inline void hotspot_vthread_name(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
						 __u64 vthread)
{
	__u64 name, value, bytes[2] = { 0, 0 };
	__s32 length = 0;
	__u8 coder = 1;

	if (!(jvm->flags & JBPF_HOTSPOT_VTHREAD_NAMES))
		return;
	name = hotspot_oop_at(jvm, vthread + jvm->thread_name);
	value = name ? hotspot_oop_at(jvm, name + jvm->string_value) : 0;
	if (!value || bpf_probe_read_user(&coder, 1, (void *)(name + jvm->string_coder)) || coder ||
	    bpf_probe_read_user(&length, 4, (void *)(value + jvm->byte_array_length)) || length <= 0 ||
	    bpf_probe_read_user(bytes, sizeof(bytes), (void *)(value + jvm->byte_array_length + 4)))
		return;
	/* Only the name's own bytes: what follows it in the heap is not. */
	if (length < 8) {
		bytes[0] &= (1ull << (8 * length)) - 1;
		bytes[1] = 0;
	} else if (length < 16) {
		bytes[1] &= (1ull << (8 * (length - 8))) - 1;
	}
	w->vthread_name[0] = bytes[0];
	w->vthread_name[1] = bytes[1];
}

/*
 * The virtual thread JavaThread thread runs (JBPF_HOTSPOT_CHUNKS): its
 * _vthread, an OopHandle, a pointer to the oop. Its id into w->vthread_id.
 * 0 when not read. hotspot_vthread: the same for the walked carrier, found
 * in java_threads, and its name into w->vthread_name.
 */
static __always_inline __u64 hotspot_vthread_of(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
						 __u64 thread)
{
	__u64 handle = 0, vthread = 0, id = 0;

	if (!(jvm->flags & JBPF_HOTSPOT_CHUNKS) || !thread ||
	    bpf_probe_read_user(&handle, 8, (void *)(thread + jvm->thread_vthread)) || !handle ||
	    bpf_probe_read_user(&vthread, 8, (void *)handle) || !vthread)
		return 0;
	if (!bpf_probe_read_user(&id, 8, (void *)(vthread + jvm->thread_tid)))
		w->vthread_id = id;
	return vthread;
}

static __always_inline __u64 hotspot_vthread(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm)
{
	__u32 tid = w->tid; /* on the stack, as in hotspot_at_return_barrier */
	__u64 *thread = bpf_map_lookup_elem(&java_threads, &tid);
	__u64 vthread = thread ? hotspot_vthread_of(w, jvm, *thread) : 0;

	if (vthread)
		hotspot_vthread_name(w, jvm, vthread);
	return vthread;
}

/*
 * The virtual thread's frames frozen in its continuation's chunks, at the
 * return barrier: its VirtualThread's cont, the Continuation's tail. 0
 * when their walk starts, -1 when not found.
 */
static __always_inline int hotspot_chunk_enter(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm, __u64 entry)
{
	__u64 vthread = hotspot_vthread(w, jvm), cont;

	if (!vthread)
		return -1;
	cont = hotspot_oop_at(jvm, vthread + jvm->vthread_cont);
	if (!cont || hotspot_chunk_begin(w, jvm, hotspot_oop_at(jvm, cont + jvm->cont_tail)))
		return -1;
	w->resume_sp = entry;
	return 0;
}

/*
 * Out of the chunks: the marker, then the carrier's frames from
 * enterSpecial's return; none for an unmounted virtual thread (resume_sp
 * 0: bpf/vthreads.bpf.c), whose walk ends at the marker. 0, or 1 when
 * the walk ends.
 */
static __always_inline int hotspot_chunk_leave(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm)
{
	/* The frames frozen before these, in the chunk's parent. */
	if (!hotspot_chunk_begin(w, jvm, hotspot_oop_at(jvm, w->chunk + jvm->chunk_parent)))
		return 0;
	w->chunk_end = 0;
	w->carrier = true;
	if (hotspot_push(w, JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_WHOLE, w->vthread_id, w->vthread_name[0],
				 w->vthread_name[1]))
		return 1;
	if (!w->resume_sp) {
		w->done = true;
		return 1;
	}
	w->pc = jvm->cont_return_pc;
	w->sp = w->resume_sp;
	w->trusted_pc = false;
	return 0;
}

/*
 * One frame of a stack chunk, and the step to its caller (stackChunkFrameStream's
 * next): an interpreted frame's caller is at fp + 2 words, its unextended
 * sp fp-relative at fp[-1], its rbp slot-relative at fp[0], and it is the
 * chunk's last when its locals reach the chunk's bottom; a compiled or
 * stub frame's caller is its frame size above its sp, the chunk's last
 * when that is within two words of the bottom. 0 goes on, 1 stops.
 */
__noinline int hotspot_chunk_step(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm)
{
	struct hotspot_reads *reads = hotspot_read_buffers();
	__u64 *slot, fp, cmethod, caller_sp, saved[2];
	struct hotspot_blob *b;
	int stop;

	if (!w || !jvm || !reads)
		return 1;
	slot = reads->slot;
	b = &reads->blob;
	if (w->pc >= jvm->interp_low && w->pc < jvm->interp_high) {
		fp = w->bp;
		/* slot[i] is fp[i + HOTSPOT_INTERP_BCP]. */
		if (fp < w->sp - 16 || fp >= w->chunk_end ||
		    bpf_probe_read_user(slot, HOTSPOT_INTERP_WORDS * 8, (void *)(fp + 8 * HOTSPOT_INTERP_BCP)))
			return hotspot_stop(w, JBPF_JAVA_STOP_READ);
		if (!hotspot_interp_frame(jvm, slot, &cmethod, &reads->code_size))
			return hotspot_stop(w, JBPF_JAVA_STOP_INTERPRETER);
		if (hotspot_push(w, JBPF_JAVA_INTERPRETED, 0, slot[HOTSPOT_INTERP_METHOD - HOTSPOT_INTERP_BCP], slot[0],
				 cmethod))
			return 1;
		/* fp[-7], the locals, relative to fp: past the bottom's last word, the chunk ends. */
		if (fp + 8 * slot[HOTSPOT_INTERP_LOCALS - HOTSPOT_INTERP_BCP] + 8 >= w->chunk_end)
			return hotspot_chunk_leave(w, jvm);
		caller_sp = fp + 8 * slot[HOTSPOT_INTERP_SENDER_SP - HOTSPOT_INTERP_BCP];
		if (caller_sp <= w->sp || caller_sp >= w->chunk_end)
			return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
		w->pc = slot[1 - HOTSPOT_INTERP_BCP];
		w->bp = fp + 8 * slot[-HOTSPOT_INTERP_BCP];
		w->sp = caller_sp;
		/* A chunk holds Java frames only: a caller outside the code cache was misread. */
		return hotspot_in_code(jvm, w->pc) ? 0 : hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
	}
	stop = hotspot_blob_info(w, jvm, b);
	if (stop)
		return hotspot_stop(w, stop);
	if (b->words <= 0 || (__u32)b->words > HOTSPOT_MAX_FRAME_WORDS)
		return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
	if (hotspot_push(w, b->is_nmethod ? JBPF_JAVA_COMPILED : JBPF_JAVA_STUB, 0, b->blob, w->pc, b->compile_id))
		return 1;
	caller_sp = w->sp + 8 * (__u64)b->words;
	if (caller_sp + 16 >= w->chunk_end)
		return hotspot_chunk_leave(w, jvm);
	if (bpf_probe_read_user(saved, sizeof(saved), (void *)(caller_sp - 16)))
		return hotspot_stop(w, JBPF_JAVA_STOP_READ);
	w->pc = saved[1];
	w->bp = caller_sp - 16 + 8 * saved[0];
	w->sp = caller_sp;
	return hotspot_in_code(jvm, w->pc) ? 0 : hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
}

#endif /* JBPF_HOTSPOT_VTHREADS_BPF_H */

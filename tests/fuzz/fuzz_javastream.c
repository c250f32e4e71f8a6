/*
 * The agent's stream, which code in the target's address space writes:
 * every message dispatched to handlers that look at what they are given.
 */
#include "fuzz.h"

#include "user/java/javastream.h"

static size_t sink;

static void on_method(void *ctx, uint64_t method_id, uint32_t flags, const char *name)
{
	sink += strlen(name);
}

static void on_trace(void *ctx, const struct jbpf_msg_trace *trace, const struct jbpf_trace_frame *frames)
{
	for (uint32_t i = 0; i < trace->frame_count; i++)
		sink += (size_t)frames[i].method_id;
}

static void on_text(void *ctx, const char *text)
{
	sink += strlen(text);
}

static void on_thread(void *ctx, uint32_t tid, const char *name)
{
	sink += strlen(name);
}

static void on_code_load(void *ctx, const struct jbpf_msg_code_load *load, const char *name)
{
	sink += strlen(name);
}

static void on_thread_stack(void *ctx, const struct jbpf_msg_thread_stack *stack, const struct jbpf_trace_frame *frames)
{
	for (uint32_t i = 0; i < stack->frame_count; i++)
		sink += (size_t)frames[i].method_id;
}

static void on_alloc(void *ctx, const struct jbpf_msg_alloc *alloc, const struct jbpf_trace_frame *frames,
		     const char *class_name, const uint64_t *native, uint32_t nr_native)
{
	for (uint32_t i = 0; i < alloc->frame_count; i++)
		sink += (size_t)frames[i].method_id;
	for (uint32_t i = 0; i < nr_native; i++)
		sink += (size_t)native[i];
	sink += strlen(class_name) + (size_t)alloc->size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct javastream_handler handler = {
		.method = on_method,
		.trace = on_trace,
		.thread = on_thread,
		.code_load = on_code_load,
		.error = on_text,
		.notice = on_text,
		.thread_stack = on_thread_stack,
		.alloc = on_alloc,
	};
	size_t done = 0;

	/* As the reader does: consumed messages dropped, a partial one kept for more bytes that never come. */
	while (done < size) {
		ssize_t n = javastream__parse(data + done, size - done, &handler);

		if (n <= 0)
			break;
		if ((size_t)n > size - done)
			abort();
		done += (size_t)n;
	}
	return 0;
}

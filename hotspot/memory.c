/*
 * memory: reads of another process's memory (contract in memory.h).
 *
 * process_vm_readv(2) copies from the target without stopping it and
 * without faulting: an unmapped page ends the copy, which reads here as a
 * failure of the whole read, never as a partial buffer taken for a full
 * one. Every read, whoever serves it, is counted in reads and bytes, so
 * that callers (and tests) can bound the work a hostile table makes.
 */
#include "hotspot/memory.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

/* Strings are read a page at a time at most, so that one never crosses into a page not mapped. */
#define MEMORY_PAGE 4096u

static bool read_process(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = (pid_t)(intptr_t)ctx;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	do
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

void hotspot_memory__of_process(struct hotspot_memory *mem, pid_t pid)
{
	/* The pid travels in ctx, so that a copy of *mem reads the same process. */
	*mem = (struct hotspot_memory){ .read = read_process, .ctx = (void *)(intptr_t)pid, .pid = pid };
}

/* Address 0 is never the target's data, and a range that wraps is nobody's. */
static bool range_valid(uint64_t addr, size_t len)
{
	return addr && addr + len >= addr;
}

bool hotspot_memory__read(struct hotspot_memory *mem, uint64_t addr, void *buf, size_t len)
{
	if (!len)
		return true;
	if (!range_valid(addr, len))
		return false;
	mem->reads++;
	mem->bytes += len;
	return mem->read(mem->ctx, addr, buf, len);
}

/*
 * One process_vm_readv of spans[0..nr), all valid and non-empty: the
 * spans read whole are ok; the one the copy stopped in is not. Returns
 * the index after that one (nr when all were read).
 */
static size_t gather_call(pid_t pid, struct hotspot_span *spans, size_t nr)
{
	struct iovec local[HOTSPOT_GATHER_MAX], remote[HOTSPOT_GATHER_MAX];
	ssize_t got;
	size_t i;

	for (i = 0; i < nr; i++) {
		local[i] = (struct iovec){ .iov_base = spans[i].buf, .iov_len = spans[i].len };
		remote[i] = (struct iovec){ .iov_base = (void *)(uintptr_t)spans[i].addr, .iov_len = spans[i].len };
	}
	do
		got = process_vm_readv(pid, local, nr, remote, nr, 0);
	while (got < 0 && errno == EINTR);
	/* An error before the first byte (the first range unmapped, the process gone) is a copy of none. */
	if (got < 0)
		got = 0;
	for (i = 0; i < nr && (size_t)got >= spans[i].len; i++) {
		spans[i].ok = true;
		got -= (ssize_t)spans[i].len;
	}
	return i < nr ? i + 1 : nr;
}

void hotspot_memory__gather(struct hotspot_memory *mem, struct hotspot_span *spans, size_t nr)
{
	struct hotspot_span *live[HOTSPOT_GATHER_MAX];
	struct hotspot_span copy[HOTSPOT_GATHER_MAX];
	size_t n = 0, done = 0;

	for (size_t i = 0; i < nr; i++)
		spans[i].ok = i < HOTSPOT_GATHER_MAX && !spans[i].len;
	/* Empty ranges need no read; ranges that cannot be anyone's are not asked for. */
	for (size_t i = 0; i < nr && i < HOTSPOT_GATHER_MAX; i++)
		if (spans[i].len && range_valid(spans[i].addr, spans[i].len)) {
			live[n] = &spans[i];
			copy[n++] = spans[i];
		}
	while (done < n) {
		mem->reads++;
		for (size_t i = done; i < n; i++)
			mem->bytes += copy[i].len;
		if (mem->read == read_process) {
			done += gather_call(mem->pid, copy + done, n - done);
		} else {
			/* Another reader (a test's image): each range on its own, stopping as the call would. */
			while (done < n && (copy[done].ok = mem->read(mem->ctx, copy[done].addr, copy[done].buf,
								     copy[done].len)))
				done++;
			done += done < n;
		}
	}
	for (size_t i = 0; i < n; i++)
		live[i]->ok = copy[i].ok;
}

bool hotspot_memory__u64(struct hotspot_memory *mem, uint64_t addr, uint64_t *out)
{
	return hotspot_memory__read(mem, addr, out, sizeof(*out));
}

bool hotspot_memory__u32(struct hotspot_memory *mem, uint64_t addr, uint32_t *out)
{
	return hotspot_memory__read(mem, addr, out, sizeof(*out));
}

bool hotspot_memory__u16(struct hotspot_memory *mem, uint64_t addr, uint16_t *out)
{
	return hotspot_memory__read(mem, addr, out, sizeof(*out));
}

bool hotspot_memory__u8(struct hotspot_memory *mem, uint64_t addr, uint8_t *out)
{
	return hotspot_memory__read(mem, addr, out, sizeof(*out));
}

/*
 * Reads up to the end of addr's page (or size - 1 bytes, if fewer) at a
 * time: a string that ends before its page does is read in one call even
 * when the next page is not mapped.
 */
long hotspot_memory__string(struct hotspot_memory *mem, uint64_t addr, char *buf, size_t size)
{
	size_t done = 0;

	if (!size)
		return -1;
	while (done < size - 1) {
		uint64_t at = addr + done;
		size_t chunk = MEMORY_PAGE - (size_t)(at % MEMORY_PAGE);
		const char *nul;

		if (chunk > size - 1 - done)
			chunk = size - 1 - done;
		if (!hotspot_memory__read(mem, at, buf + done, chunk))
			break;
		nul = memchr(buf + done, '\0', chunk);
		if (nul)
			return (long)(nul - buf);
		done += chunk;
	}
	buf[0] = '\0';
	return -1;
}

static bool read_window(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct hotspot_window *w = ctx;

	if (addr >= w->base && len <= w->len && addr - w->base <= w->len - len) {
		memcpy(buf, w->copy + (addr - w->base), len);
		return true;
	}
	return hotspot_memory__read(w->under, addr, buf, len);
}

/* w over [base, base + len) of under, len cut to the window's size; nothing read yet. */
static void window_init(struct hotspot_window *w, struct hotspot_memory *under, uint64_t base, size_t len)
{
	w->mem = (struct hotspot_memory){ .read = read_window, .ctx = w, .pid = under->pid };
	w->under = under;
	w->base = base;
	w->len = len < HOTSPOT_WINDOW_MAX ? len : HOTSPOT_WINDOW_MAX;
}

bool hotspot_memory__window_open(struct hotspot_window *w, struct hotspot_memory *under, uint64_t base, size_t len)
{
	window_init(w, under, base, len);
	if (!hotspot_memory__read(under, base, w->copy, w->len))
		w->len = 0;
	return w->len || !len;
}

void hotspot_memory__windows_open(struct hotspot_window *const *ws, struct hotspot_memory *under, const uint64_t *bases,
			  const size_t *lens, size_t nr)
{
	struct hotspot_span spans[HOTSPOT_GATHER_MAX];

	if (nr > HOTSPOT_GATHER_MAX)
		nr = HOTSPOT_GATHER_MAX;
	for (size_t i = 0; i < nr; i++) {
		window_init(ws[i], under, bases[i], lens[i]);
		spans[i] = (struct hotspot_span){ .addr = bases[i], .buf = ws[i]->copy, .len = ws[i]->len };
	}
	hotspot_memory__gather(under, spans, nr);
	for (size_t i = 0; i < nr; i++)
		if (!spans[i].ok)
			ws[i]->len = 0;
}

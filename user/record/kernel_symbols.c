/*
 * kernel_symbols: kernel functions named by the kernel (contract in
 * kernel_symbols.h).
 */
#include "user/record/kernel_symbols.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jbpfprof.h"
#include "kernel_symbols.skel.h"

struct kernel_symbols {
	struct kernel_symbols_bpf *skel;
};

void kernel_symbols__close(struct kernel_symbols *ks)
{
	if (!ks)
		return;
	kernel_symbols_bpf__destroy(ks->skel);
	free(ks);
}

int kernel_symbols__open(struct kernel_symbols **out)
{
	struct kernel_symbols *ks = calloc(1, sizeof(*ks));
	int error;

	*out = NULL;
	if (!ks)
		return -ENOMEM;
	ks->skel = kernel_symbols_bpf__open_and_load();
	if (!ks->skel) {
		error = errno ? errno : EINVAL;
		kernel_symbols__close(ks);
		return -error;
	}
	*out = ks;
	return 0;
}

static int run(struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
		return -errno;
	return 0;
}

static bool parse_hex(const char *p, const char **end, uint64_t *value)
{
	uint64_t v = 0;
	const char *start;

	if (p[0] == '0' && p[1] == 'x')
		p += 2;
	for (start = p; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++) {
		if (p - start == 16)
			return false;
		v = v << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	}
	*end = p;
	*value = v;
	return p > start;
}

int kernel_symbols__parse(const char *text, uint64_t addr, char *name, size_t size, uint64_t *start,
			  uint64_t *end)
{
	const char *sym_end = strchr(text, ' '), *plus = NULL, *p;
	uint64_t offset, length;

	if (!sym_end)
		sym_end = text + strlen(text);
	else if (sym_end[1] != '[' || sym_end[strlen(sym_end) - 1] != ']')
		return -EINVAL;
	for (p = text; p < sym_end; p++)
		if (*p == '+')
			plus = p;
	if (!plus)
		return text[0] == '0' && text[1] == 'x' ? -ENOENT : -EINVAL;
	if (plus == text || !parse_hex(plus + 1, &p, &offset) || *p != '/' || !parse_hex(p + 1, &p, &length) ||
	    p != sym_end)
		return -EINVAL;
	/* A symbol of size 0 (a label) still contains its own address. */
	if (offset > addr || (length && offset >= length) || (!length && offset))
		return -EINVAL;
	*start = addr - offset;
	*end = *start + (length ? length : 1);
	if (*end < *start)
		return -EINVAL;
	if (size) {
		size_t n = (size_t)(plus - text) < size - 1 ? (size_t)(plus - text) : size - 1;

		memcpy(name, text, n);
		name[n] = '\0';
	}
	return 0;
}

int kernel_symbols__name(struct kernel_symbols *ks, uint64_t addr, char *name, size_t size, uint64_t *start,
			 uint64_t *end)
{
	struct jbpf_kernel_query *q = &ks->skel->bss->query;
	int error;

	memset(q, 0, sizeof(*q));
	q->addr = addr;
	error = run(ks->skel->progs.name_address);
	if (error)
		return error;
	/* bpf_snprintf returns the bytes it needed, NUL included; more than the room is a cut name. */
	if (q->err <= 0 || q->err > (int64_t)sizeof(q->text))
		return q->err < 0 ? (int)q->err : -EINVAL;
	q->text[sizeof(q->text) - 1] = '\0';
	return kernel_symbols__parse(q->text, addr, name, size, start, end);
}

int kernel_symbols__address(struct kernel_symbols *ks, const char *name, uint64_t *start, uint64_t *end)
{
	struct jbpf_kernel_query *q = &ks->skel->bss->query;
	size_t len = strlen(name);
	uint64_t addr;
	int error;

	if (!len || len >= sizeof(q->text))
		return -ENOENT;
	memset(q, 0, sizeof(*q));
	memcpy(q->text, name, len + 1);
	error = run(ks->skel->progs.find_name);
	if (error)
		return error;
	if (q->err || !q->addr)
		return -ENOENT;
	addr = q->addr;
	/* Its extent: the kernel names the address it gave, with the symbol's size. */
	return kernel_symbols__name(ks, addr, NULL, 0, start, end);
}

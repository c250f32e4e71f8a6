/*
 * jninative: the native frames of a JNI allocation (contract in
 * jninative.h).
 */
#include "jninative.h"

#include <link.h>
#include <unwind.h>

/* The executable addresses of one loaded object. */
struct text_range {
	uintptr_t lo, hi;
};

static struct {
	struct text_range agent, vm;
} texts;

struct range_query {
	uintptr_t addr;
	struct text_range *out;
};

/* dl_iterate_phdr's callback: the executable segment of the object holding query->addr. */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range_query *q = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && q->addr >= lo && q->addr - lo < ph->p_memsz) {
			*q->out = (struct text_range){ lo, lo + ph->p_memsz };
			return 1;
		}
	}
	return 0;
}

static void text_of(const void *addr, struct text_range *out)
{
	struct range_query q = { (uintptr_t)addr, out };

	dl_iterate_phdr(find_text, &q);
}

void jninative__init(jvmtiEnv *jvmti)
{
	text_of((const void *)jninative__frames, &texts.agent);
	text_of((const void *)(*jvmti)->GetStackTrace, &texts.vm);
}

static bool in(const struct text_range *r, uintptr_t pc)
{
	return pc >= r->lo && pc < r->hi;
}

struct walk {
	uint64_t *pcs;
	uint32_t nr, max;
	bool cut;
};

static _Unwind_Reason_Code each_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t pc = _Unwind_GetIP(ctx);

	if (!pc)
		return _URC_END_OF_STACK;
	/* The agent's frames, then the VM's down to the JNI function the native code called. */
	if (!w->nr && (in(&texts.agent, pc) || in(&texts.vm, pc)))
		return _URC_NO_REASON;
	if (w->nr == w->max) {
		w->cut = true;
		return _URC_END_OF_STACK;
	}
	w->pcs[w->nr++] = pc;
	return _URC_NO_REASON;
}

uint32_t jninative__frames(uint64_t *pcs, uint32_t max, bool *cut)
{
	struct walk w = { .pcs = pcs, .max = max };

	if (!texts.vm.hi)
		return 0;
	/* Its end, whatever the reason (no more tables, a frame it cannot read), is where the frames end. */
	_Unwind_Backtrace(each_frame, &w);
	*cut = w.cut;
	return w.nr;
}

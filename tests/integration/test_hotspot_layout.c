/*
 * HotSpot's layout read from real JVMs (JDK 17 and JDK 25), without
 * entering them: hotspot_find__jvm, hotspot_vm__read and hotspot_layout__read on
 * a running CpuSplit workload, the values checked for what a running JVM
 * must hold, and the code heaps checked against what the JVM itself says
 * of them (jcmd PID Compiler.codecache: one "bounds [low, high,
 * high_boundary]" line per heap), with the code cache segmented (three
 * heaps, the default) and not (one).
 *
 * The time hotspot_vm__read takes (best of HOTSPOT_VM_READS, with its reads
 * and bytes) is printed, for docs/architecture.md.
 *
 * And its Java threads (hotspot_threads__read): every tid listed is one of
 * the JVM's tasks, a Java thread of the workload ("split-0") is listed,
 * and the VM's own threads that are no Java threads ("VM Thread",
 * "GC Thread#0") are not.
 */
#include "harness.h"
#include "jvm.h"

#include <dirent.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hotspot/find.h"
#include "hotspot/layout.h"
#include "hotspot/threads.h"
#include "hotspot/vmstructs.h"

#define HOTSPOT_VM_READS 5

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The tables of process tgid, read HOTSPOT_VM_READS times; the best time is printed. */
static struct hotspot_vm *read_tables(const struct jdk *jdk, pid_t tgid, const struct hotspot_vm_symbols *syms)
{
	struct hotspot_vm *vm = NULL;
	double best = 1e9;
	char err[256] = "";

	for (int i = 0; i < HOTSPOT_VM_READS; i++) {
		struct hotspot_memory mem;
		double start = now_ms(), took;

		hotspot_vm__free(vm);
		hotspot_memory__of_process(&mem, tgid);
		if (hotspot_vm__read(&mem, syms, &vm, err, sizeof(err)))
			fail_msg("%s: hotspot_vm__read: %s", jdk->name, err);
		took = now_ms() - start;
		if (took < best)
			best = took;
		if (i == HOTSPOT_VM_READS - 1)
			fprintf(stderr, "  %s: VMStructs read in %.3f ms (best of %d): %" PRIu64 " reads, %" PRIu64 " bytes\n",
				jdk->name, best, HOTSPOT_VM_READS, mem.reads, mem.bytes);
	}
	return vm;
}

/* Heap bounds as the JVM prints them. */
struct printed_heaps {
	uint64_t low[8], high_boundary[8];
	int nr;
};

/* jcmd beside the JDK's java: "jcmd PID Compiler.codecache", its bounds lines parsed. */
static void codecache_of(const struct jdk *jdk, pid_t tgid, struct printed_heaps *p)
{
	static struct child jcmd;
	char java[PATH_MAX], path[PATH_MAX + 8], pid[16];
	char *argv[] = { path, pid, "Compiler.codecache", NULL };
	const char *at;

	snprintf(java, sizeof(java), "%s", jdk_java_path(jdk));
	snprintf(path, sizeof(path), "%s/jcmd", dirname(java));
	snprintf(pid, sizeof(pid), "%d", (int)tgid);
	if (access(path, X_OK))
		skip();
	assert_int_equal(harness_start_command(&jcmd, argv, STDOUT_FILENO), 0);
	assert_int_equal(harness_finish(&jcmd, 60), 0);
	p->nr = 0;
	for (at = strstr(jcmd.buf, "bounds ["); at && p->nr < 8; at = strstr(at + 1, "bounds [")) {
		unsigned long long low, high, boundary;

		if (sscanf(at, "bounds [%llx, %llx, %llx]", &low, &high, &boundary) != 3)
			fail_msg("jcmd printed \"%.60s\"", at);
		p->low[p->nr] = low;
		p->high_boundary[p->nr++] = boundary;
	}
	if (!p->nr)
		fail_msg("jcmd printed no code heap bounds:\n%s", jcmd.buf);
}

/* What a running JVM's layout must hold, whatever its version. */
static void assert_consistent(const struct jbpf_hotspot_jvm *l)
{
	assert_true(l->nr_heaps >= 1 && l->nr_heaps <= 3);
	assert_true(l->code_low < l->interp_low);
	assert_true(l->interp_low < l->interp_high);
	assert_true(l->interp_high <= l->code_high);
	assert_true(l->call_stub_return >= l->code_low && l->call_stub_return < l->code_high);
	for (uint32_t i = 0; i < l->nr_heaps; i++) {
		assert_true(l->heaps[i].low >= l->code_low && l->heaps[i].low < l->code_high);
		assert_true(l->heaps[i].heap && l->heaps[i].segmap);
		assert_true(l->heaps[i].log2_segment >= 4 && l->heaps[i].log2_segment <= 16);
	}
	assert_true(l->heap_memory_high && l->heap_segmap_high && l->block_size);
	assert_true(l->blob_size && l->blob_frame_size && l->blob_frame_complete && l->blob_code);
	assert_true(l->frame_complete_width == 2 || l->frame_complete_width == 4);
	assert_true(l->nm_method && l->nm_compile_id && l->nm_header);
	assert_true(l->nm_header >= l->nm_method + 8 && l->nm_header >= l->nm_compile_id + 4);
	assert_true(l->method_const && l->const_code_size && l->const_size);
	assert_true(l->const_code_size + 2 <= l->const_size);
}

/* Every heap the JVM prints is one of ours, and the code cache spans them all. */
static void assert_as_printed(const struct jbpf_hotspot_jvm *l, const struct printed_heaps *p)
{
	uint64_t lowest = UINT64_MAX, highest = 0;

	assert_int_equal(p->nr, l->nr_heaps);
	for (int i = 0; i < p->nr; i++) {
		bool found = false;

		for (uint32_t j = 0; j < l->nr_heaps; j++)
			found |= l->heaps[j].low == p->low[i];
		if (!found)
			fail_msg("the JVM prints a code heap at 0x%" PRIx64 " that the layout lacks", p->low[i]);
		lowest = p->low[i] < lowest ? p->low[i] : lowest;
		highest = p->high_boundary[i] > highest ? p->high_boundary[i] : highest;
	}
	assert_true(lowest == l->code_low);
	assert_true(highest == l->code_high);
}

/* The layout of a CpuSplit JVM started with jvm_opts, checked; nr_heaps must be what the options make. */
static void check_layout(const struct jdk *jdk, char *const jvm_opts[], uint32_t nr_heaps)
{
	struct hotspot_vm_symbols syms;
	struct jbpf_hotspot_jvm l;
	struct printed_heaps printed;
	struct hotspot_memory mem;
	struct hotspot_vm *vm;
	struct jvm jvm;
	uint64_t base;
	char err[256] = "";

	jvm_start_opts(&jvm, jdk, jvm_opts, "CpuSplit", NULL);
	if (hotspot_find__jvm("/proc", (uint32_t)jvm.out.pid, &syms, &base, err, sizeof(err)) != 1)
		fail_msg("%s: hotspot_find__jvm: %s", jdk->name, err[0] ? err : "no libjvm.so");
	assert_true(base && syms.structs > base);
	vm = read_tables(jdk, jvm.out.pid, &syms);
	hotspot_memory__of_process(&mem, jvm.out.pid);
	if (hotspot_layout__read(vm, &mem, &l, err, sizeof(err)))
		fail_msg("%s: hotspot_layout__read: %s", jdk->name, err);
	fprintf(stderr, "  %s: %u heaps, code [0x%llx, 0x%llx), interpreter [0x%llx, 0x%llx), %" PRIu64 " reads\n",
		jdk->name, l.nr_heaps, (unsigned long long)l.code_low, (unsigned long long)l.code_high,
		(unsigned long long)l.interp_low, (unsigned long long)l.interp_high, mem.reads);
	assert_consistent(&l);
	/* Where a contended monitor's class is: both JDKs list it. */
	assert_true(l.flags & JBPF_HOTSPOT_LOCKS);
	assert_true(l.thread_pending_monitor && l.thread_waiting_monitor && l.oop_klass == 8 && l.klass_shift <= 32);
	/* The verified entry, for prologues: an address on JDK 17, an offset on JDK 25. */
	assert_true(l.flags & JBPF_HOTSPOT_ENTRY);
	assert_int_equal(!!(l.flags & JBPF_HOTSPOT_ENTRY_OFFSET), jdk == &jdk25);
	/* Virtual threads: JDK 25 only, enterSpecial's return address in the code cache. */
	assert_int_equal(!!(l.flags & JBPF_HOTSPOT_CONTINUATIONS), jdk == &jdk25);
	if (jdk == &jdk25)
		assert_true(l.cont_return_pc >= l.code_low && l.cont_return_pc < l.code_high && l.thread_cont_entry);
	/* And with G1, its frozen frames, its name, and its unmounts told (a class, an int field past the header). */
	assert_int_equal(!!(l.flags & JBPF_HOTSPOT_CHUNKS), jdk == &jdk25);
	assert_int_equal(!!(l.flags & JBPF_HOTSPOT_VTHREAD_NAMES), jdk == &jdk25);
	assert_int_equal(!!(l.flags & JBPF_HOTSPOT_UNMOUNTS), jdk == &jdk25);
	if (jdk == &jdk25)
		assert_true(l.vthread_klass && l.vthread_state >= 12 && l.vthread_state % 4 == 0);
	assert_int_equal(l.nr_heaps, nr_heaps);
	assert_int_equal(l.by_kind, jdk == &jdk25);
	assert_int_equal(l.code_is_offset, jdk == &jdk25);
	assert_int_equal(l.frame_complete_width, jdk == &jdk25 ? 2 : 4);
	if (jdk == &jdk25)
		assert_true(l.blob_kind != 0);
	else
		assert_true(l.blob_name != 0);
	codecache_of(jdk, jvm.out.pid, &printed);
	assert_as_printed(&l, &printed);
	hotspot_vm__free(vm);
	jvm_stop(&jvm);
}

/* The tid of the task of tgid named comm, or 0. */
static uint32_t task_named(pid_t tgid, const char *comm)
{
	char path[512], name[64];
	uint32_t found = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	d = opendir(path);
	assert_non_null(d);
	while (!found && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)tgid, e->d_name);
		f = fopen(path, "r");
		if (f && fgets(name, sizeof(name), f) && !strncmp(name, comm, strlen(comm)) && name[strlen(comm)] == '\n')
			found = (uint32_t)atoi(e->d_name);
		if (f)
			fclose(f);
	}
	closedir(d);
	return found;
}

static bool listed(const struct hotspot_java_thread *t, size_t nr, uint32_t tid)
{
	for (size_t i = 0; i < nr; i++)
		if (t[i].tid == tid)
			return true;
	return false;
}

static void java_threads_of_a_running_jvm(void **state)
{
	const struct jdk *jdk = *state;
	static struct hotspot_java_thread threads[4096];
	struct hotspot_threads__layout layout;
	struct hotspot_vm_symbols syms;
	struct hotspot_memory mem;
	struct hotspot_vm *vm;
	struct jvm jvm;
	uint64_t base;
	uint32_t worker_tid, vm_tid, gc_tid;
	char err[256] = "", path[128];
	size_t nr;

	jvm_require(jdk, "CpuSplit");
	jvm_start(&jvm, jdk, "CpuSplit", NULL);
	if (hotspot_find__jvm("/proc", (uint32_t)jvm.out.pid, &syms, &base, err, sizeof(err)) != 1)
		fail_msg("%s: hotspot_find__jvm: %s", jdk->name, err[0] ? err : "no libjvm.so");
	vm = read_tables(jdk, jvm.out.pid, &syms);
	if (hotspot_threads__layout(vm, &layout, err, sizeof(err)))
		fail_msg("%s: hotspot_threads__layout: %s", jdk->name, err);
	hotspot_memory__of_process(&mem, jvm.out.pid);
	if (hotspot_threads__read(&mem, &layout, threads, 4096, &nr, err, sizeof(err)))
		fail_msg("%s: hotspot_threads__read: %s", jdk->name, err);
	worker_tid = task_named(jvm.out.pid, "split-0");
	vm_tid = task_named(jvm.out.pid, "VM Thread");
	gc_tid = task_named(jvm.out.pid, "GC Thread#0");
	fprintf(stderr, "  %s: %zu Java threads listed in %" PRIu64 " reads; split-0 %u, VM Thread %u, GC Thread#0 %u\n",
		jdk->name, nr, mem.reads, worker_tid, vm_tid, gc_tid);
	assert_true(nr >= 2 && worker_tid && vm_tid && gc_tid);
	for (size_t i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)jvm.out.pid, threads[i].tid);
		if (access(path, F_OK))
			fail_msg("%s: tid %u listed, no task of the JVM", jdk->name, threads[i].tid);
		assert_true(threads[i].java_thread != 0);
	}
	assert_true(listed(threads, nr, worker_tid));
	assert_false(listed(threads, nr, vm_tid));
	assert_false(listed(threads, nr, gc_tid));
	hotspot_vm__free(vm);
	jvm_stop(&jvm);
}

/* The default code cache: segmented, three heaps (non-nmethods, profiled, non-profiled). */
static void layout_of_a_running_jvm(void **state)
{
	jvm_require(*state, "CpuSplit");
	check_layout(*state, NULL, 3);
}

/* One heap for all code. */
static void layout_of_an_unsegmented_code_cache(void **state)
{
	char *opts[] = { "-XX:-SegmentedCodeCache", NULL };

	jvm_require(*state, "CpuSplit");
	check_layout(*state, opts, 1);
}

/*
 * A process that maps no libjvm.so is no JVM: 0, and nothing read. So is
 * one whose maps cannot be read (gone here): nothing says it is a JVM,
 * and -a meets such processes (one the kernel hides even from root).
 */
static void no_jvm_no_layout(void **state)
{
	struct hotspot_vm_symbols syms;
	uint64_t base;
	char err[256] = "";

	assert_int_equal(hotspot_find__jvm("/proc", (uint32_t)getpid(), &syms, &base, err, sizeof(err)), 0);
	assert_true(syms.structs == 0 && base == 0);
	assert_int_equal(hotspot_find__jvm("/proc", 0x3fffffff, &syms, &base, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot read"));
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TEST(layout_of_a_running_jvm, jdk17),
		JDK_TEST(layout_of_a_running_jvm, jdk25),
		JDK_TEST(layout_of_an_unsegmented_code_cache, jdk17),
		JDK_TEST(layout_of_an_unsegmented_code_cache, jdk25),
		JDK_TEST(java_threads_of_a_running_jvm, jdk17),
		JDK_TEST(java_threads_of_a_running_jvm, jdk25),
		HARNESS_TEST(no_jvm_no_layout),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("hotspot_layout", tests, NULL, NULL);
}

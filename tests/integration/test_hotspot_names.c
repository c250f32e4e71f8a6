/*
 * Java frames named from outside real JVMs (JDK 17 and JDK 25) by
 * hotspot/names.c, checked against what the JVM says from inside: a JVMTI
 * agent (tests/workloads/names_oracle) writes every loaded method (its
 * Method *, class, name, signature and line number table) and, for each
 * compiled method, the scopes of every PcDesc (JVMTI_CMLR_INLINE_INFO).
 *
 * For each method listed, interpreted frames are named at each bci where
 * a line starts (native methods with no bcp) and must give the same names,
 * bci and line. For each compiled method whose nmethod is still in the code
 * cache (hotspot/codecache.c finds it from its code's address), each pc
 * listed must give the same chain of methods and bcis, innermost first,
 * inlined ones named INLINED and the outermost C1, C2 or NATIVE. A CpuSplit
 * workload runs DUMP_AFTER_MS first, so that C1 and C2 have compiled JDK
 * and workload methods alike. The counts compared are printed.
 */
#include "harness.h"
#include "jvm.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hotspot/codecache.h"
#include "hotspot/find.h"
#include "hotspot/layout.h"
#include "hotspot/names.h"
#include "hotspot/vmstructs.h"

#define DUMP_AFTER_MS 6000
/* Mismatches printed at most, of each kind. */
#define SHOWN 8

struct listed_method {
	uint64_t method;
	bool native;
	char *klass, *name, *signature;
	int nr_lines;
	int *start, *line;
};

struct oracle {
	struct listed_method *methods;
	size_t nr_methods, cap_methods;
	char *compiled; /* the C and P lines, as written */
	size_t compiled_len, compiled_cap;
};

static int by_method(const void *a, const void *b)
{
	const struct listed_method *x = a, *y = b;

	return x->method < y->method ? -1 : x->method > y->method;
}

static const struct listed_method *listed(const struct oracle *o, uint64_t method)
{
	struct listed_method key = { .method = method };

	return bsearch(&key, o->methods, o->nr_methods, sizeof(key), by_method);
}

/* "Ljava/lang/String;" -> "java.lang.String", as names.c prints a class. */
static char *class_of_signature(const char *sig)
{
	size_t len = strlen(sig);
	char *s = strndup(sig + 1, len >= 2 ? len - 2 : 0);

	for (char *p = s; *p; p++)
		if (*p == '/')
			*p = '.';
	return s;
}

static void parse_method(struct oracle *o, char *line)
{
	struct listed_method m = { 0 };
	char *save, *tok[7];

	tok[0] = strtok_r(line, "\t", &save);
	for (int i = 1; i < 7; i++)
		tok[i] = strtok_r(NULL, "\t\n", &save);
	if (!tok[6])
		fail_msg("oracle line cut: %s", line);
	m.method = strtoull(tok[1], NULL, 16);
	m.native = tok[2][0] == '1';
	m.klass = class_of_signature(tok[3]);
	m.name = strdup(tok[4]);
	m.signature = strdup(tok[5]);
	m.nr_lines = atoi(tok[6]);
	m.start = calloc((size_t)m.nr_lines + 1, sizeof(int));
	m.line = calloc((size_t)m.nr_lines + 1, sizeof(int));
	for (int i = 0; i < m.nr_lines; i++) {
		char *t = strtok_r(NULL, "\t\n", &save);

		if (!t || sscanf(t, "%d:%d", &m.start[i], &m.line[i]) != 2)
			fail_msg("oracle line table cut for %s.%s", m.klass, m.name);
	}
	if (o->nr_methods == o->cap_methods) {
		o->cap_methods = o->cap_methods ? 2 * o->cap_methods : 4096;
		o->methods = realloc(o->methods, o->cap_methods * sizeof(m));
	}
	o->methods[o->nr_methods++] = m;
}

static void keep_compiled(struct oracle *o, const char *line)
{
	size_t len = strlen(line);

	if (o->compiled_len + len + 1 > o->compiled_cap) {
		o->compiled_cap = 2 * (o->compiled_len + len + 1);
		o->compiled = realloc(o->compiled, o->compiled_cap);
	}
	memcpy(o->compiled + o->compiled_len, line, len + 1);
	o->compiled_len += len;
}

/* Waits for the agent's "D", then reads what it wrote before. */
static void oracle_read(struct oracle *o, const char *path, const struct jvm *jvm)
{
	char *line = NULL;
	size_t cap = 0;
	bool done = false;
	FILE *f;

	for (int waited = 0; !done && waited < 60000 + DUMP_AFTER_MS; waited += 200) {
		char cmd[PATH_MAX + 32];

		snprintf(cmd, sizeof(cmd), "grep -qx D '%s' 2>/dev/null", path);
		done = system(cmd) == 0;
		if (!done)
			usleep(200 * 1000);
	}
	if (!done)
		fail_msg("the oracle agent wrote no dump into %s", path);
	f = fopen(path, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) > 0 && strcmp(line, "D\n")) {
		if (line[0] == 'M')
			parse_method(o, line);
		else if (line[0] == 'C' || line[0] == 'P')
			keep_compiled(o, line);
	}
	free(line);
	fclose(f);
	qsort(o->methods, o->nr_methods, sizeof(o->methods[0]), by_method);
	(void)jvm;
}

static void oracle_free(struct oracle *o)
{
	for (size_t i = 0; i < o->nr_methods; i++) {
		free(o->methods[i].klass);
		free(o->methods[i].name);
		free(o->methods[i].signature);
		free(o->methods[i].start);
		free(o->methods[i].line);
	}
	free(o->methods);
	free(o->compiled);
}

/* HotSpot's Method::line_from_bci over the JVMTI table: exact, else the closest start before. */
static int expected_line(const struct listed_method *m, int bci)
{
	int best_bci = 0, best_line = 0;

	/* A method's entry (bci -1, SynchronizationEntryBCI) has the line of bci 0. */
	if (bci < 0)
		bci = 0;
	for (int i = 0; i < m->nr_lines; i++) {
		if (m->start[i] == bci)
			return m->line[i];
		if (m->start[i] < bci && m->start[i] >= best_bci) {
			best_bci = m->start[i];
			best_line = m->line[i];
		}
	}
	return best_line;
}

static bool same_names(const struct hotspot_frame *f, const struct listed_method *m)
{
	return !f->unresolved && !strcmp(f->klass, m->klass) && !strcmp(f->method, m->name) &&
	       !strcmp(f->signature, m->signature);
}

struct tally {
	uint64_t methods, methods_ok, bcis, bcis_ok, moved, nmethods, nmethods_gone, pcs, pcs_ok, inlined_pcs,
		frames, c1, c2, shown;
};

static void mismatch(struct tally *t, const char *what, const struct hotspot_frame *f, const struct listed_method *m,
		     int bci)
{
	if (t->shown++ >= SHOWN)
		return;
	fprintf(stderr, "  mismatch (%s): expected %s.%s%s bci %d, got %s.%s%s bci %d line %d kind %d unresolved %d\n",
		what, m ? m->klass : "?", m ? m->name : "?", m ? m->signature : "", bci, f->klass ? f->klass : "-",
		f->method ? f->method : "-", f->signature ? f->signature : "", f->bci, f->line, f->kind, f->unresolved);
}

/* Each listed method, as an interpreted frame at each line's start (or with no bcp when native). */
static void check_methods(struct hotspot_names *names, struct hotspot_memory *mem, const struct jbpf_hotspot_jvm *l,
			  const struct oracle *o, struct tally *t)
{
	for (size_t i = 0; i < o->nr_methods; i++) {
		const struct listed_method *m = &o->methods[i];
		struct jbpf_java_frame jf = { .kind = JBPF_JAVA_INTERPRETED, .ptr = m->method };
		struct hotspot_frame f;
		uint64_t cm;
		bool ok = true;

		if (!hotspot_memory__u64(mem, m->method + l->method_const, &cm))
			continue;
		jf.cookie = cm;
		if (!m->native && !m->nr_lines)
			continue; /* abstract, or no line table: no bci known to lie in its bytecodes */
		t->methods++;
		for (int k = 0; k < (m->native ? 1 : m->nr_lines); k++) {
			int bci = m->native ? -1 : m->start[k];

			jf.pc = m->native ? 0 : jf.cookie + l->const_size + (uint64_t)bci;
			hotspot_names__frame(names, &jf, &f, 1);
			if (f.unresolved == HOTSPOT_UNRESOLVED_MOVED) {
				t->moved++;
				ok = false;
				break;
			}
			t->bcis++;
			if (same_names(&f, m) && f.bci == bci && f.line == (m->native ? 0 : expected_line(m, bci)) &&
			    f.kind == (m->native ? HOTSPOT_FRAME_NATIVE : HOTSPOT_FRAME_INTERPRETED)) {
				t->bcis_ok++;
			} else {
				mismatch(t, "interpreted", &f, m, bci);
				ok = false;
			}
		}
		t->methods_ok += ok;
	}
}

/* The nmethod whose code starts at code and runs method, and its compile id; 0 when it is gone. */
static uint64_t nmethod_at(struct hotspot_memory *mem, const struct jbpf_hotspot_jvm *l, uint64_t code,
			   uint64_t method, uint32_t *compile_id)
{
	uint64_t nm = hotspot_codecache__blob(l, mem, code), nm_method, begin;
	uint32_t off;

	if (!nm || !hotspot_memory__u64(mem, nm + l->nm_method, &nm_method) || nm_method != method ||
	    !hotspot_memory__u32(mem, nm + l->nm_compile_id, compile_id))
		return 0;
	if (l->code_is_offset) {
		if (!hotspot_memory__u32(mem, nm + l->blob_code, &off))
			return 0;
		begin = nm + off;
	} else if (!hotspot_memory__u64(mem, nm + l->blob_code, &begin)) {
		return 0;
	}
	return begin == code ? nm : 0;
}

/* One P line: the chain at pc of nmethod nm, compared scope by scope. */
static void check_pc(struct hotspot_names *names, const struct oracle *o, uint64_t nm, uint32_t compile_id,
		     char *line, struct tally *t)
{
	struct hotspot_frame f[HOTSPOT_NAMES_MAX_INLINE];
	struct jbpf_java_frame jf = { .kind = JBPF_JAVA_COMPILED, .ptr = nm, .cookie = compile_id };
	char *save, *tok = strtok_r(line, "\t\n", &save);
	int nr, want;
	bool ok;

	jf.pc = strtoull(strtok_r(NULL, "\t\n", &save), NULL, 16);
	want = atoi(strtok_r(NULL, "\t\n", &save));
	(void)tok;
	nr = hotspot_names__frame(names, &jf, f, HOTSPOT_NAMES_MAX_INLINE);
	if (nr == 1 && f[0].unresolved == HOTSPOT_UNRESOLVED_MOVED) {
		t->moved++;
		return;
	}
	t->pcs++;
	t->inlined_pcs += want > 1;
	ok = nr == want;
	for (int i = 0; i < want; i++) {
		char *s = strtok_r(NULL, "\t\n", &save);
		unsigned long long method;
		int bci;
		const struct listed_method *m;
		int kind;

		if (!s || sscanf(s, "%llx:%d", &method, &bci) != 2)
			fail_msg("oracle P line cut");
		if (i >= nr)
			break;
		m = listed(o, method);
		kind = f[i].kind;
		t->frames++;
		t->c1 += kind == HOTSPOT_FRAME_C1;
		t->c2 += kind == HOTSPOT_FRAME_C2;
		if (f[i].unresolved || f[i].method_ptr != method || f[i].bci != bci || (m && !same_names(&f[i], m)) ||
		    (i < want - 1 ? kind != HOTSPOT_FRAME_INLINED
				  : kind != HOTSPOT_FRAME_C1 && kind != HOTSPOT_FRAME_C2 && kind != HOTSPOT_FRAME_NATIVE) ||
		    (m && f[i].line != expected_line(m, bci))) {
			mismatch(t, "compiled", &f[i], m, bci);
			ok = false;
		}
	}
	if (nr != want && t->shown++ < SHOWN)
		fprintf(stderr, "  mismatch (compiled): %d scopes at 0x%llx, expected %d\n", nr,
			(unsigned long long)jf.pc, want);
	t->pcs_ok += ok;
}

/* Each C line's nmethod, still in the code cache, at each of its P lines' pcs. */
static void check_compiled(struct hotspot_names *names, struct hotspot_memory *mem,
			   const struct jbpf_hotspot_jvm *l, const struct oracle *o, struct tally *t)
{
	char *text = strdup(o->compiled ? o->compiled : ""), *save, *line;
	uint64_t nm = 0;
	uint32_t compile_id = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'C') {
			unsigned long long code, method;
			int size;

			if (sscanf(line, "C\t%llx\t%d\t%llx", &code, &size, &method) != 3)
				fail_msg("oracle C line: %s", line);
			t->nmethods++;
			nm = nmethod_at(mem, l, code, method, &compile_id);
			t->nmethods_gone += !nm;
		} else if (line[0] == 'P' && nm) {
			check_pc(names, o, nm, compile_id, line, t);
		}
	}
	free(text);
}

static void names_agree_with_jvmti(void **state)
{
	const struct jdk *jdk = *state;
	struct hotspot_vm_symbols syms;
	struct jbpf_hotspot_jvm l;
	struct hotspot_memory mem;
	struct hotspot_names__stats st;
	struct hotspot_names *names;
	struct hotspot_vm *vm;
	struct oracle o = { 0 };
	struct tally t = { 0 };
	struct jvm jvm;
	char *agent, *dir, *file, opt[PATH_MAX * 2 + 64], err[256] = "";
	char *args[] = { "-t", "2", NULL };
	char *opts[] = { opt, NULL };
	uint64_t base;

	jvm_require(jdk, "CpuSplit");
	agent = harness_workload("libnames_oracle.so");
	if (access(agent, R_OK))
		fail_msg("%s is not built (make workloads)", agent);
	{
		/* The JVM runs in a directory of its own. */
		char *abs = realpath(agent, NULL);

		assert_non_null(abs);
		free(agent);
		agent = abs;
	}
	dir = harness_tmpdir();
	file = harness_path(dir, "oracle.txt");
	snprintf(opt, sizeof(opt), "-agentpath:%s=%s,%d", agent, file, DUMP_AFTER_MS);
	jvm_start_opts(&jvm, jdk, opts, "CpuSplit", args);
	oracle_read(&o, file, &jvm);
	if (hotspot_find__jvm("/proc", (uint32_t)jvm.out.pid, &syms, &base, err, sizeof(err)) != 1)
		fail_msg("%s: hotspot_find__jvm: %s", jdk->name, err);
	hotspot_memory__of_process(&mem, jvm.out.pid);
	if (hotspot_vm__read(&mem, &syms, &vm, err, sizeof(err)))
		fail_msg("%s: hotspot_vm__read: %s", jdk->name, err);
	if (hotspot_layout__read(vm, &mem, &l, err, sizeof(err)))
		fail_msg("%s: hotspot_layout__read: %s", jdk->name, err);
	names = hotspot_names__new(vm, &mem, err, sizeof(err));
	if (!names)
		fail_msg("%s: hotspot_names__new: %s", jdk->name, err);
	check_methods(names, &mem, &l, &o, &t);
	check_compiled(names, &mem, &l, &o, &t);
	hotspot_names__stats(names, &st);
	fprintf(stderr,
		"  %s: %" PRIu64 "/%" PRIu64 " methods agree (%" PRIu64 "/%" PRIu64 " bcis and lines), %" PRIu64
		" moved; %" PRIu64 " nmethods listed, %" PRIu64 " gone; %" PRIu64 "/%" PRIu64 " pcs agree (%" PRIu64
		" with inlining, %" PRIu64 " frames, outermost %" PRIu64 " C1 and %" PRIu64 " C2); %" PRIu64
		" named, %" PRIu64 " from the caches\n",
		jdk->name, t.methods_ok, t.methods, t.bcis_ok, t.bcis, t.moved, t.nmethods, t.nmethods_gone, t.pcs_ok,
		t.pcs, t.inlined_pcs, t.frames, t.c1, t.c2, st.named, st.cached);
	assert_true(t.methods >= 1000);
	assert_true(t.pcs >= 100 && t.inlined_pcs >= 10 && t.c1 && t.c2);
	assert_int_equal(t.bcis_ok, t.bcis);
	assert_int_equal(t.pcs_ok, t.pcs);
	hotspot_names__free(names);
	hotspot_vm__free(vm);
	oracle_free(&o);
	jvm_stop(&jvm);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(agent);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TEST(names_agree_with_jvmti, jdk17),
		JDK_TEST(names_agree_with_jvmti, jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("hotspot_names", tests, NULL, NULL);
}

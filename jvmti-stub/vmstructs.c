/*
 * vmstructs: a Java thread's native tid from HotSpot's VMStructs tables
 * (contract, sources and safety rules in vmstructs.h).
 *
 * The tables are libjvm's own constant data, always mapped, and are read
 * directly; every entry is still checked (NULL names, a stride too small
 * for the members, at most VMSTRUCTS_MAX_ENTRIES entries). Thread objects
 * are read only through vmstructs__read.
 *
 * State is written once, by the first vmstructs__init (under init_lock:
 * the thread starting a recording and the agent thread both call it), and
 * only read after that call returns.
 */
#include "vmstructs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* HotSpot has about 2,000 entries; a table without its NULL end stops here. */
#define VMSTRUCTS_MAX_ENTRIES 100000
/* Neither offset is anywhere near this in a real JavaThread or OSThread. */
#define VMSTRUCTS_MAX_OFFSET (1u << 20)
/* The kernel's PID_MAX_LIMIT: no tid is larger. */
#define VMSTRUCTS_MAX_TID (4u << 20)

static struct {
	bool tried, ready;
	void *libjvm;              /* handle when found through jvm_code, else NULL */
	uint64_t osthread_offset;  /* of the OSThread * in a JavaThread */
	uint64_t thread_id_offset; /* of the pid_t in an OSThread */
	jfieldID eetop;            /* java.lang.Thread.eetop, long */
} vs;

/* A libjvm symbol: global first, then in the library holding the JVMTI functions. */
static void *lookup(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!p && vs.libjvm)
		p = dlsym(vs.libjvm, name);
	return p;
}

/* The uint64_t variable name, into *out. */
static bool lookup_u64(const char *name, uint64_t *out)
{
	const uint64_t *p = lookup(name);

	if (!p)
		return false;
	*out = *p;
	return true;
}

/* The layout of one table: its first entry, its stride, and where the members are. */
struct table {
	const char *entries;
	uint64_t stride;
	uint64_t type_name, field_name, type_string, is_static, offset, address, size;
};

/* Whether a member of `width` bytes at off fits in the stride. */
static bool member_fits(const struct table *t, uint64_t off, uint64_t width)
{
	return off <= t->stride && width <= t->stride - off;
}

static const char *string_at(const struct table *t, const char *entry, uint64_t off)
{
	const char *s;

	memcpy(&s, entry + off, sizeof(s));
	return s;
}

/* One member of a table's entries: the symbol holding its offset, where it goes, its width. */
struct member {
	const char *symbol;
	uint64_t *offset;
	uint64_t width;
};

/*
 * A table from its array's symbol, its stride's symbol and its members:
 * false unless every symbol is there and every member fits in the stride.
 */
static bool open_table(struct table *t, const char *array, const char *stride, const struct member *members,
		       size_t nr)
{
	const char *const *p = lookup(array);

	if (!p || !*p || !lookup_u64(stride, &t->stride) || t->stride >= 4096)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (!lookup_u64(members[i].symbol, members[i].offset) ||
		    !member_fits(t, *members[i].offset, members[i].width))
			return false;
	t->entries = *p;
	return true;
}

static bool open_structs(struct table *t)
{
	const struct member members[] = {
		{ "gHotSpotVMStructEntryTypeNameOffset", &t->type_name, sizeof(char *) },
		{ "gHotSpotVMStructEntryFieldNameOffset", &t->field_name, sizeof(char *) },
		{ "gHotSpotVMStructEntryTypeStringOffset", &t->type_string, sizeof(char *) },
		{ "gHotSpotVMStructEntryIsStaticOffset", &t->is_static, sizeof(int32_t) },
		{ "gHotSpotVMStructEntryOffsetOffset", &t->offset, sizeof(uint64_t) },
		{ "gHotSpotVMStructEntryAddressOffset", &t->address, sizeof(void *) },
	};

	return open_table(t, "gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride", members,
			  sizeof(members) / sizeof(members[0]));
}

/* The integer constants' table: its name and value members (value in the offset slot). */
static bool open_int_constants(struct table *t)
{
	const struct member members[] = {
		{ "gHotSpotVMIntConstantEntryNameOffset", &t->type_name, sizeof(char *) },
		{ "gHotSpotVMIntConstantEntryValueOffset", &t->offset, sizeof(int32_t) },
	};

	return open_table(t, "gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride", members,
			  sizeof(members) / sizeof(members[0]));
}

static bool open_types(struct table *t)
{
	const struct member members[] = {
		{ "gHotSpotVMTypeEntryTypeNameOffset", &t->type_name, sizeof(char *) },
		{ "gHotSpotVMTypeEntrySizeOffset", &t->size, sizeof(uint64_t) },
	};

	return open_table(t, "gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride", members,
			  sizeof(members) / sizeof(members[0]));
}

/* The entry of type::field, static or not, or NULL. */
static const char *find_entry(const struct table *t, const char *type, const char *field)
{
	const char *e = t->entries;

	for (size_t i = 0; i < VMSTRUCTS_MAX_ENTRIES; i++, e += t->stride) {
		const char *tn = string_at(t, e, t->type_name), *fn;

		if (!tn)
			return NULL;
		fn = string_at(t, e, t->field_name);
		if (fn && !strcmp(tn, type) && !strcmp(fn, field))
			return e;
	}
	return NULL;
}

static bool entry_is_static(const struct table *t, const char *e)
{
	int32_t is_static;

	memcpy(&is_static, e + t->is_static, sizeof(is_static));
	return is_static != 0;
}

/* The non-static field type::field: its offset and type string. */
static bool find_field(const struct table *t, const char *type, const char *field, uint64_t *offset,
		       const char **type_string)
{
	const char *e = find_entry(t, type, field);

	if (!e || entry_is_static(t, e))
		return false;
	memcpy(offset, e + t->offset, sizeof(*offset));
	*type_string = string_at(t, e, t->type_string);
	return *type_string && *offset < VMSTRUCTS_MAX_OFFSET;
}

/* The size HotSpot gives type, or 0 when it lists no such type. */
static uint64_t type_size(const struct table *t, const char *type)
{
	const char *e = t->entries;

	for (size_t i = 0; i < VMSTRUCTS_MAX_ENTRIES; i++, e += t->stride) {
		const char *tn = string_at(t, e, t->type_name);
		uint64_t size;

		if (!tn)
			return 0;
		if (strcmp(tn, type))
			continue;
		memcpy(&size, e + t->size, sizeof(size));
		return size;
	}
	return 0;
}

/* The two offsets, each of a field whose type is what the read below assumes. */
static bool find_offsets(void)
{
	struct table structs, types;
	const char *osthread_type, *tid_type;
	size_t len;

	if (!open_structs(&structs) || !open_types(&types))
		return false;
	/* Moved from JavaThread's list to Thread's between JDK 17 and JDK 25; the offset is in the object either way. */
	if (!find_field(&structs, "JavaThread", "_osthread", &vs.osthread_offset, &osthread_type) &&
	    !find_field(&structs, "Thread", "_osthread", &vs.osthread_offset, &osthread_type))
		return false;
	len = strlen(osthread_type);
	if (!len || osthread_type[len - 1] != '*')
		return false;
	/* "OSThread::thread_id_t" on JDK 17, "pid_t" on JDK 25: either way 4 bytes. */
	if (!find_field(&structs, "OSThread", "_thread_id", &vs.thread_id_offset, &tid_type) ||
	    type_size(&types, tid_type) != sizeof(int32_t))
		return false;
	return true;
}

static jfieldID find_eetop(JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jfieldID id = cls ? (*jni)->GetFieldID(jni, cls, "eetop", "J") : NULL;

	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		id = NULL;
	}
	if (cls)
		(*jni)->DeleteLocalRef(jni, cls);
	return id;
}

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

bool vmstructs__init(JNIEnv *jni, const void *jvm_code)
{
	Dl_info info;
	bool ready;

	pthread_mutex_lock(&init_lock);
	if (!vs.tried) {
		vs.tried = true;
		if (jvm_code && dladdr(jvm_code, &info) && info.dli_fname)
			vs.libjvm = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD); /* kept: libjvm outlives us */
		if (find_offsets()) {
			vs.eetop = find_eetop(jni);
			vs.ready = vs.eetop != NULL;
		}
	}
	ready = vs.ready;
	pthread_mutex_unlock(&init_lock);
	return ready;
}

int vmstructs__open(struct vmstructs_reader *reader)
{
	return pipe2(reader->pipe, O_CLOEXEC | O_NONBLOCK) ? -1 : 0;
}

void vmstructs__close(struct vmstructs_reader *reader)
{
	close(reader->pipe[0]);
	close(reader->pipe[1]);
}

bool vmstructs__read(const struct vmstructs_reader *reader, uintptr_t addr, void *out, size_t len)
{
	char drain[64];
	ssize_t n;

	if (!addr || !len || len > sizeof(drain) || addr + len < addr)
		return false;
	/* The kernel copies from addr; an unmapped page fails with EFAULT instead of faulting. */
	do
		n = write(reader->pipe[1], (const void *)addr, len);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return read(reader->pipe[0], out, len) == (ssize_t)len;
	/* A read that crossed into an unmapped page: empty the pipe for the next one. */
	if (n > 0 && read(reader->pipe[0], drain, (size_t)n) < 0) {
		/* Nothing else can be done; the next read fails its length check. */
	}
	return false;
}

/* eetop of thread, 0 on any failure. */
static uintptr_t eetop(JNIEnv *jni, jthread thread)
{
	jlong v;

	if (!vs.ready || !thread)
		return 0;
	v = (*jni)->GetLongField(jni, thread, vs.eetop);

	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		return 0;
	}
	return (uintptr_t)v;
}

uint32_t vmstructs__tid(const struct vmstructs_reader *reader, JNIEnv *jni, jthread thread)
{
	uintptr_t java_thread, osthread;
	int32_t tid;

	if (!vs.ready || !thread)
		return 0;
	java_thread = eetop(jni, thread);
	if (!java_thread || java_thread + vs.osthread_offset < java_thread ||
	    !vmstructs__read(reader, java_thread + vs.osthread_offset, &osthread, sizeof(osthread)) || !osthread ||
	    osthread + vs.thread_id_offset < osthread ||
	    !vmstructs__read(reader, osthread + vs.thread_id_offset, &tid, sizeof(tid)))
		return 0;
	/* Cleared before the JavaThread is freed: unchanged, the reads above saw it alive. */
	if (eetop(jni, thread) != java_thread || tid <= 0 || (uint32_t)tid >= VMSTRUCTS_MAX_TID)
		return 0;
	if (syscall(SYS_tgkill, getpid(), tid, 0))
		return 0;
	return (uint32_t)tid;
}

uintptr_t vmstructs__java_thread(JNIEnv *jni, jthread thread)
{
	return eetop(jni, thread);
}

bool vmstructs__vtable(const struct vmstructs_reader *reader, JNIEnv *jni, jthread thread, uintptr_t *vtable)
{
	uintptr_t java_thread = eetop(jni, thread), word;

	if (!java_thread || !vmstructs__read(reader, java_thread, &word, sizeof(word)) || !word)
		return false;
	/* Cleared before the JavaThread is freed: unchanged, the read above saw it alive. */
	if (eetop(jni, thread) != java_thread)
		return false;
	*vtable = word;
	return true;
}

bool vmstructs__field(const char *type, const char *field, uint64_t *offset, uint64_t *size)
{
	struct table structs, types;
	const char *type_string;

	if (!vs.ready || !open_structs(&structs) || !open_types(&types) ||
	    !find_field(&structs, type, field, offset, &type_string))
		return false;
	/* A pointer type ("intptr_t*", "address" is listed as a type of its own) has a pointer's size. */
	*size = type_string[0] && type_string[strlen(type_string) - 1] == '*' ? sizeof(void *)
									      : type_size(&types, type_string);
	return *size != 0;
}

bool vmstructs__static_field(const char *type, const char *field, uintptr_t *address)
{
	struct table structs;
	const char *e;
	void *p;

	if (!vs.ready || !open_structs(&structs) || !(e = find_entry(&structs, type, field)) ||
	    !entry_is_static(&structs, e))
		return false;
	memcpy(&p, e + structs.address, sizeof(p));
	*address = (uintptr_t)p;
	return p != NULL;
}

uint64_t vmstructs__type_size(const char *type)
{
	struct table types;

	return vs.ready && open_types(&types) ? type_size(&types, type) : 0;
}

bool vmstructs__int_constant(const char *name, int32_t *value)
{
	struct table t;
	const char *e;

	if (!vs.ready || !open_int_constants(&t))
		return false;
	e = t.entries;
	for (size_t i = 0; i < VMSTRUCTS_MAX_ENTRIES; i++, e += t.stride) {
		const char *n = string_at(&t, e, t.type_name);

		if (!n)
			return false;
		if (!strcmp(n, name)) {
			memcpy(value, e + t.offset, sizeof(*value));
			return true;
		}
	}
	return false;
}

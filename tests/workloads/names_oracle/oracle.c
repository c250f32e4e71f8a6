/*
 * names_oracle: a JVMTI agent that tells, from inside a JVM, what
 * hotspot/names.c must find from outside it (tests/integration/
 * test_hotspot_names.c).
 *
 *   java -agentpath:liboracle.so=FILE,MS ...
 *
 * As each method is compiled (CompiledMethodLoad) it writes the code's
 * address and, for every PcDesc with a scope (JVMTI_CMLR_INLINE_INFO: HotSpot
 * lists them from the nmethod's own PcDescs), the pc and its scopes'
 * methods and bcis, innermost first. MS milliseconds after the VM starts, a
 * thread of its own writes every loaded class's methods: the Method * (in
 * HotSpot a jmethodID points at it), native or not, the class's signature,
 * the name, the signature and the line number table; then "D". Lines, tab
 * separated, each written whole under a lock:
 *
 *   C code_addr code_size method
 *   P pc nr method:bci ...
 *   M method native class_signature name signature nr start:line ...
 *   D
 *
 * A test agent: it exits the JVM on any failure to set itself up.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jvmti.h>
#include <jvmticmlr.h>

static jvmtiEnv *jvmti;
static FILE *out;
static long dump_after_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *method_ptr(jmethodID m)
{
	return m ? *(void **)m : NULL;
}

static void JNICALL compiled_method_load(jvmtiEnv *env, jmethodID method, jint code_size, const void *code_addr,
					 jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;

	pthread_mutex_lock(&lock);
	fprintf(out, "C\t%p\t%d\t%p\n", code_addr, (int)code_size, method_ptr(method));
	for (; h; h = h->next) {
		const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;

		if (h->kind != JVMTI_CMLR_INLINE_INFO)
			continue;
		for (jint i = 0; i < r->numpcs; i++) {
			const PCStackInfo *p = &r->pcinfo[i];

			fprintf(out, "P\t%p\t%d", p->pc, (int)p->numstackframes);
			for (jint f = 0; f < p->numstackframes; f++)
				fprintf(out, "\t%p:%d", method_ptr(p->methods[f]), (int)p->bcis[f]);
			fputc('\n', out);
		}
	}
	fflush(out);
	pthread_mutex_unlock(&lock);
}

static void dump_method(jclass klass, const char *class_sig, jmethodID m)
{
	char *name = NULL, *sig = NULL;
	jvmtiLineNumberEntry *lines = NULL;
	jint nr_lines = 0;
	jboolean native = JNI_FALSE;

	if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		return;
	(*jvmti)->IsMethodNative(jvmti, m, &native);
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &nr_lines, &lines) != JVMTI_ERROR_NONE)
		nr_lines = 0;
	fprintf(out, "M\t%p\t%d\t%s\t%s\t%s\t%d", method_ptr(m), native ? 1 : 0, class_sig, name, sig, (int)nr_lines);
	for (jint i = 0; i < nr_lines; i++)
		fprintf(out, "\t%lld:%d", (long long)lines[i].start_location, (int)lines[i].line_number);
	fputc('\n', out);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (lines)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)lines);
}

static void dump_classes(void)
{
	jclass *classes = NULL;
	jint nr = 0;

	if ((*jvmti)->GetLoadedClasses(jvmti, &nr, &classes) != JVMTI_ERROR_NONE)
		return;
	pthread_mutex_lock(&lock);
	for (jint i = 0; i < nr; i++) {
		char *sig = NULL;
		jmethodID *methods = NULL;
		jint nr_methods = 0;

		if ((*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) != JVMTI_ERROR_NONE)
			continue;
		if ((*jvmti)->GetClassMethods(jvmti, classes[i], &nr_methods, &methods) == JVMTI_ERROR_NONE) {
			for (jint m = 0; m < nr_methods; m++)
				dump_method(classes[i], sig, methods[m]);
			(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	fputs("D\n", out);
	fflush(out);
	pthread_mutex_unlock(&lock);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

static void JNICALL dumper(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
	struct timespec ts = { dump_after_ms / 1000, (dump_after_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	dump_classes();
}

static void JNICALL vm_init(jvmtiEnv *env, JNIEnv *jni, jthread thread)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = (*jni)->GetMethodID(jni, cls, "<init>", "()V");
	jthread t = (*jni)->NewObject(jni, cls, init);

	if (!t || (*jvmti)->RunAgentThread(jvmti, t, dumper, NULL, JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "names_oracle: cannot start its thread\n");
		exit(1);
	}
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiCapabilities caps = { 0 };
	jvmtiEventCallbacks cb = { 0 };
	char *comma = options ? strchr(options, ',') : NULL;

	if (!comma || (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "names_oracle: -agentpath:liboracle.so=FILE,MS\n");
		return 1;
	}
	*comma = '\0';
	dump_after_ms = atol(comma + 1);
	out = fopen(options, "w");
	if (!out) {
		perror(options);
		return 1;
	}
	caps.can_get_line_numbers = 1;
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		return 1;
	cb.CompiledMethodLoad = compiled_method_load;
	cb.VMInit = vm_init;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL) ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL))
		return 1;
	return 0;
}

/*
 * load_error (user/record/load_error.c): libbpf's real messages, in the
 * formats libbpf 1.1 prints them with, go through the print callback, and
 * the one-line message must tell what happened: the verifier's own reason
 * with the program and the kernel, the kernel function missing, "not
 * permitted" only for EPERM with a capability missing (and named), and
 * the program type refused despite the capabilities.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/record/load_error.h"

#define ALL_CAPS                                                                                         \
	(LOAD_ERROR_CAP(LOAD_ERROR_CAP_BPF) | LOAD_ERROR_CAP(LOAD_ERROR_CAP_PERFMON) |                   \
	 LOAD_ERROR_CAP(LOAD_ERROR_CAP_SYS_ADMIN))
#define DEBIAN_6_1 "6.1.0-56-amd64"
#define DEBIAN_6_12 "6.12.117+deb12-amd64"

/* libbpf's formats (libbpf.c, v1.1.0), with the "libbpf: " its pr_warn adds. */
#define FOUND_PROGRAM                                                                                    \
	"libbpf: sec '%s': found program '%s' at insn offset %zu (%zu bytes), code size %zu insns (%zu bytes)\n"
#define LOAD_FAILED "libbpf: prog '%s': BPF program load failed: %s\n"
#define PROG_LOG "libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n"
#define FAILED_TO_LOAD "libbpf: prog '%s': failed to load: %d\n"
#define OBJECT_FAILED "libbpf: failed to load object '%s'\n"
#define KFUNC_NOT_FOUND "libbpf: extern (func ksym) '%s': not found in kernel or module BTFs\n"

__attribute__((format(printf, 2, 3))) static int say(enum libbpf_print_level level, const char *format, ...)
{
	va_list args;
	int printed;

	va_start(args, format);
	printed = load_error__print(level, format, args);
	va_end(args);
	return printed;
}

/* libbpf's report of program prog refused with error (a positive errno) and log (NULL: none). */
static void program_refused(const char *prog, int error, const char *log)
{
	say(LIBBPF_WARN, LOAD_FAILED, prog, strerror(error));
	if (log)
		say(LIBBPF_WARN, PROG_LOG, prog, log);
	say(LIBBPF_WARN, FAILED_TO_LOAD, prog, -error);
	say(LIBBPF_WARN, OBJECT_FAILED, "sample_bpf");
}

static void compose(int error, const char *what, const char *release, uint64_t caps, char *err, size_t size)
{
	load_error__compose(load_error__captured(), error, what, release, caps, err, size);
	assert_null(strchr(err, '\n'));
}

static int forget(void **state)
{
	load_error__set_verbose(0);
	load_error__forget();
	return 0;
}

static const char map_value_log[] =
	"func#0 @0\n"
	"0: R1=ctx(off=0,imm=0) R10=fp0\n"
	"; int sample_cpu(struct bpf_perf_event_data *ctx)\n"
	"0: (bf) r6 = r1                      ; R1=ctx(off=0,imm=0) R6_w=ctx(off=0,imm=0)\n"
	"1858: (bf) r1 = r7\n"
	"; frames->ips[n] = ip;\n"
	"1859: (7b) *(u64 *)(r0 +8) = r1\n"
	"invalid access to map value, value_size=8192 off=8200 size=8\n"
	"R0 max value is outside of the allowed memory range\n"
	"processed 1422 insns (limit 1000000) max_states_per_insn 2 total_states 114 peak_states 114 "
	"mark_read 12\n";

static void verifier_rejection_names_program_kernel_and_its_reason(void **state)
{
	char err[512];

	program_refused("sample_cpu", EACCES, map_value_log);
	compose(EACCES, "BPF sampler", DEBIAN_6_1, ALL_CAPS, err, sizeof(err));
	assert_string_equal(err, "cannot load the BPF sampler: the verifier of Linux 6.1.0-56-amd64 rejected its "
				 "program sample_cpu: \"invalid access to map value, value_size=8192 off=8200 "
				 "size=8\", then \"R0 max value is outside of the allowed memory range\"; run with -v "
				 "to see the verifier's whole log");
}

static void verifier_rejection_is_not_a_permission_problem_even_without_capabilities(void **state)
{
	char err[512];

	program_refused("sample_cpu", EACCES, map_value_log);
	compose(EACCES, "BPF sampler", DEBIAN_6_1, 0, err, sizeof(err));
	assert_null(strstr(err, "not permitted"));
	assert_non_null(strstr(err, "verifier"));
	assert_non_null(strstr(err, "off=8200"));
}

static void stack_size_reason_skips_the_safe_function_line(void **state)
{
	char err[512];

	program_refused("sample_cpu", EACCES,
			"Func#9 ('java_frames_after_ips') is safe for any args that match its prototype\n"
			"combined stack size of 5 calls is 672. Too large\n"
			"verification time 10312 usec\n"
			"stack depth 160+240+96+80+96\n"
			"processed 9120 insns (limit 1000000) max_states_per_insn 4 total_states 610 "
			"peak_states 420 mark_read 33\n");
	compose(EACCES, "BPF sampler", DEBIAN_6_12, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, ": \"combined stack size of 5 calls is 672. Too large\"; run with -v"));
	assert_non_null(strstr(err, "sample_cpu"));
	assert_non_null(strstr(err, "Linux " DEBIAN_6_12));
	assert_null(strstr(err, "Func#9"));
	assert_null(strstr(err, "then"));
	assert_null(strstr(err, "not permitted"));
}

static void kfunc_not_allowed_and_register_type_are_quoted(void **state)
{
	char err[512];

	program_refused("nativemem_session", EACCES,
			"0: R1=ctx() R10=fp0\n"
			"; bool is_return = bpf_session_is_return();\n"
			"0: (85) call bpf_session_is_return#71223\n"
			"calling kernel function bpf_session_is_return is not allowed\n"
			"processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 "
			"mark_read 0\n");
	compose(EACCES, "BPF native memory program", DEBIAN_6_12, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "\"calling kernel function bpf_session_is_return is not allowed\""));
	assert_non_null(strstr(err, "nativemem_session"));
	load_error__forget();

	program_refused("end_of_waits", EACCES,
			"from 12 to 15: R0=map_value(off=0,ks=4,vs=16,imm=0) R6=ctx() R10=fp0\n"
			"15: (85) call bpf_probe_read_kernel#113\n"
			"R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value\n"
			"processed 40 insns (limit 1000000)\n");
	compose(EACCES, "BPF scheduler program", DEBIAN_6_1, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "\"R2 type=mem expected=fp, pkt, pkt_meta, map_key, map_value\""));
	assert_non_null(strstr(err, "end_of_waits"));
}

/* The verifier's path and statistics are not its reason: a log of nothing else quotes nothing. */
static void a_log_without_a_reason_quotes_nothing(void **state)
{
	char err[512];

	program_refused("sample_cpu", EACCES,
			"func#0 @0\n"
			"Validating java_frames_after_ips() func#9...\n"
			"0: R1=ctx() R10=fp0\n"
			"; int sample_cpu(struct bpf_perf_event_data *ctx)\n"
			"0: (bf) r6 = r1                      ; R1=ctx() R6_w=ctx()\n"
			"from 12 to 15: R0=map_value(off=0,ks=4,vs=16,imm=0) R6=ctx() R10=fp0\n"
			"caller:\n"
			" R6=ctx() R10=fp0\n"
			"callee:\n"
			" frame1: R1=ctx() R10=fp0\n"
			"returning from callee:\n"
			"to caller at 12:\n"
			"Func#9 ('java_frames_after_ips') is safe for any args that match its prototype\n"
			"\n"
			"verification time 10312 usec\n"
			"stack depth 160+240\n"
			"processed 9120 insns (limit 1000000) max_states_per_insn 4 total_states 610\n");
	compose(EACCES, "BPF sampler", DEBIAN_6_12, ALL_CAPS, err, sizeof(err));
	assert_string_equal(err, "cannot load the BPF sampler: the verifier of Linux 6.12.117+deb12-amd64 rejected "
				 "its program sample_cpu (Permission denied); run with -v to see the verifier's whole "
				 "log");
}

/* A log of megabytes (the verifier's path, one line per instruction) keeps its reason at the end. */
static void reason_at_the_end_of_a_long_log_survives(void **state)
{
	const char *insn = "1859: (7b) *(u64 *)(r0 +8) = r1 ; R0_w=map_value(off=0,ks=4,vs=8192,imm=0)\n";
	const char *reason = "invalid access to map value, value_size=8192 off=8200 size=8\n"
			     "R0 max value is outside of the allowed memory range\n"
			     "processed 1000000 insns\n";
	size_t n = 60000, insn_len = strlen(insn);
	char *log = malloc(n * insn_len + strlen(reason) + 1), err[512];

	assert_non_null(log);
	for (size_t i = 0; i < n; i++)
		memcpy(log + i * insn_len, insn, insn_len);
	strcpy(log + n * insn_len, reason);
	program_refused("sample_cpu", EACCES, log);
	free(log);
	compose(EACCES, "BPF sampler", DEBIAN_6_1, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "\"invalid access to map value, value_size=8192 off=8200 size=8\", then \"R0 max"));
}

static void missing_kfunc_says_which_and_that_the_kernel_lacks_it(void **state)
{
	char err[512];

	say(LIBBPF_WARN, KFUNC_NOT_FOUND, "bpf_session_is_return");
	say(LIBBPF_WARN, OBJECT_FAILED, "nativemem_bpf");
	compose(ESRCH, "BPF native memory program", DEBIAN_6_12, ALL_CAPS, err, sizeof(err));
	assert_string_equal(err, "cannot load the BPF native memory program: Linux 6.12.117+deb12-amd64 lacks the "
				 "kernel function bpf_session_is_return that it uses (in neither the kernel's BTF nor "
				 "its modules')");
}

/* An earlier program's failure, not told, must not be blamed for a later object's missing kfunc. */
static void the_latest_failure_is_the_one_told(void **state)
{
	char err[512];

	program_refused("sample_cpu", EACCES, map_value_log);
	say(LIBBPF_WARN, KFUNC_NOT_FOUND, "bpf_session_is_return");
	compose(EINVAL, "BPF native memory program", DEBIAN_6_12, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "bpf_session_is_return"));
	assert_null(strstr(err, "sample_cpu"));
	assert_null(strstr(err, "verifier"));
}

static void eperm_with_every_capability_is_a_refused_program_type(void **state)
{
	char err[512];

	say(LIBBPF_DEBUG, FOUND_PROGRAM, "iter/bpf_map_elem", "end_of_waits", (size_t)0, (size_t)0, (size_t)22,
	    (size_t)176);
	program_refused("end_of_waits", EPERM, NULL);
	compose(EPERM, "BPF scheduler program", "6.18.3", ALL_CAPS, err, sizeof(err));
	assert_string_equal(err, "cannot load the BPF scheduler program: Linux 6.18.3 refused its program "
				 "end_of_waits (iter/bpf_map_elem) with EPERM although this process has CAP_BPF, "
				 "CAP_PERFMON and CAP_SYS_ADMIN; a security policy (an LSM such as SELinux or "
				 "AppArmor, a BPF LSM program, seccomp) likely forbids it, or the capabilities count "
				 "only inside a user namespace");
}

static void eperm_quotes_a_short_log(void **state)
{
	char err[512];

	program_refused("end_of_waits", EPERM, "\n");
	compose(EPERM, "BPF scheduler program", "6.18.3", ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "refused its program end_of_waits"));
	assert_null(strstr(err, "saying"));
	load_error__forget();

	program_refused("end_of_waits", EPERM, "attach to unsupported member of struct\n");
	compose(EPERM, "BPF scheduler program", "6.18.3", ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, ", saying \"attach to unsupported member of struct\";"));
	assert_null(strstr(err, "not permitted"));
}

static void not_permitted_only_names_the_missing_capabilities(void **state)
{
	char err[512];

	program_refused("sample_cpu", EPERM, NULL);
	compose(EPERM, "BPF sampler", DEBIAN_6_1, LOAD_ERROR_CAP(LOAD_ERROR_CAP_BPF), err, sizeof(err));
	assert_string_equal(err, "not permitted to load the BPF sampler: this process lacks CAP_PERFMON (and "
				 "CAP_SYS_ADMIN, which would do instead); run as root or with CAP_BPF and "
				 "CAP_PERFMON");

	compose(EPERM, "BPF sampler", DEBIAN_6_1, 0, err, sizeof(err));
	assert_non_null(strstr(err, "not permitted"));
	assert_non_null(strstr(err, "lacks CAP_BPF and CAP_PERFMON (and CAP_SYS_ADMIN"));

	/* CAP_SYS_ADMIN stands for both. */
	compose(EPERM, "BPF sampler", DEBIAN_6_1, LOAD_ERROR_CAP(LOAD_ERROR_CAP_SYS_ADMIN), err, sizeof(err));
	assert_null(strstr(err, "not permitted"));
	assert_non_null(strstr(err, "although this process has CAP_SYS_ADMIN;"));
}

static void other_errors_name_the_program_and_errno(void **state)
{
	char err[512];

	say(LIBBPF_DEBUG, FOUND_PROGRAM, "uprobe.session", "vthread_unmount", (size_t)0, (size_t)0, (size_t)9,
	    (size_t)72);
	program_refused("vthread_unmount", EINVAL, NULL);
	compose(EINVAL, "BPF virtual thread program", DEBIAN_6_1, ALL_CAPS, err, sizeof(err));
	assert_string_equal(err, "cannot load the BPF virtual thread program: Linux 6.1.0-56-amd64 refused its "
				 "program vthread_unmount (uprobe.session): Invalid argument (likely a program or "
				 "attach type this kernel does not have); run with -v to see libbpf's messages");
	load_error__forget();

	compose(ENOMEM, "BPF sampler", "", ALL_CAPS, err, sizeof(err));
	assert_string_equal(err, "cannot load the BPF sampler on the kernel: Cannot allocate memory; run with -v "
				 "to see libbpf's messages");
}

/* What the kernel writes is made printable, and long lines are cut: the message stays one line. */
static void kernel_text_stays_on_one_printable_line(void **state)
{
	char err[512], long_line[600];

	memset(long_line, 'x', sizeof(long_line) - 2);
	long_line[sizeof(long_line) - 2] = '\n';
	long_line[sizeof(long_line) - 1] = '\0';
	program_refused("sample_cpu", EACCES, "bad\tthing\x1b[31m here\n");
	compose(EACCES, "BPF sampler", DEBIAN_6_1, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "\"bad thing [31m here\""));
	load_error__forget();

	program_refused("sample_cpu", EACCES, long_line);
	compose(EACCES, "BPF sampler", DEBIAN_6_1, ALL_CAPS, err, sizeof(err));
	assert_non_null(strstr(err, "xxx...\"; run with -v to see the verifier's whole log"));

	compose(EACCES, "BPF sampler", DEBIAN_6_1, ALL_CAPS, err, 40);
	assert_int_equal(strlen(err), 39);
}

/* Told once: the next failure, with no message of libbpf's, is not blamed on sample_cpu. */
static void strerror_forgets_what_it_told(void **state)
{
	char err[512];

	program_refused("sample_cpu", EACCES, map_value_log);
	load_error__strerror(EACCES, "BPF sampler", err, sizeof(err));
	assert_non_null(strstr(err, "sample_cpu"));
	load_error__strerror(ENOMEM, "BPF scheduler program", err, sizeof(err));
	assert_null(strstr(err, "sample_cpu"));
	assert_non_null(strstr(err, "cannot load the BPF scheduler program on "));
}

/* What the callback printed on stderr for one warning and one debug line at verbose level. */
static void printed_at(int verbose, char *out, size_t size)
{
	FILE *saved = stderr, *capture = tmpfile();
	size_t len;

	assert_non_null(capture);
	stderr = capture;
	load_error__set_verbose(verbose);
	say(LIBBPF_WARN, "libbpf: a warning %d\n", 1);
	say(LIBBPF_DEBUG, "libbpf: a debug line %d\n", 2);
	stderr = saved;
	rewind(capture);
	len = fread(out, 1, size - 1, capture);
	out[len] = '\0';
	fclose(capture);
}

static void prints_nothing_without_v_warnings_with_v_debug_with_vv(void **state)
{
	char out[256];

	printed_at(0, out, sizeof(out));
	assert_string_equal(out, "");
	printed_at(1, out, sizeof(out));
	assert_string_equal(out, "libbpf: a warning 1\n");
	printed_at(2, out, sizeof(out));
	assert_string_equal(out, "libbpf: a warning 1\nlibbpf: a debug line 2\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(verifier_rejection_names_program_kernel_and_its_reason, forget),
		cmocka_unit_test_setup(verifier_rejection_is_not_a_permission_problem_even_without_capabilities,
				       forget),
		cmocka_unit_test_setup(stack_size_reason_skips_the_safe_function_line, forget),
		cmocka_unit_test_setup(kfunc_not_allowed_and_register_type_are_quoted, forget),
		cmocka_unit_test_setup(a_log_without_a_reason_quotes_nothing, forget),
		cmocka_unit_test_setup(reason_at_the_end_of_a_long_log_survives, forget),
		cmocka_unit_test_setup(missing_kfunc_says_which_and_that_the_kernel_lacks_it, forget),
		cmocka_unit_test_setup(the_latest_failure_is_the_one_told, forget),
		cmocka_unit_test_setup(eperm_with_every_capability_is_a_refused_program_type, forget),
		cmocka_unit_test_setup(eperm_quotes_a_short_log, forget),
		cmocka_unit_test_setup(not_permitted_only_names_the_missing_capabilities, forget),
		cmocka_unit_test_setup(other_errors_name_the_program_and_errno, forget),
		cmocka_unit_test_setup(kernel_text_stays_on_one_printable_line, forget),
		cmocka_unit_test_setup(strerror_forgets_what_it_told, forget),
		cmocka_unit_test_setup(prints_nothing_without_v_warnings_with_v_debug_with_vv, forget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

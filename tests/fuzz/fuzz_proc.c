/*
 * The /proc files a target controls the text of (its comm shows in stat
 * and status; environ is its own): stat's start time and state, status's
 * ids, NSpid, Tgid and signal masks, an environment variable's value.
 */
#include "fuzz.h"

#include "symbolizer/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	uint32_t nspid, tgid, euid, egid;
	uint64_t start, mask;
	size_t vlen;
	const char *value;

	proc__parse_start_time(text, &start);
	proc__parse_state(text);
	proc__parse_nspid(text, size, &nspid);
	proc__parse_tgid(text, size, &tgid);
	proc__parse_ids(text, size, &euid, &egid);
	proc__parse_mask(text, size, "SigCgt:", &mask);
	proc__parse_id(text);
	value = proc__env_value(text, size, "JAVA_TOOL_OPTIONS", &vlen);
	/* A value is inside the input. */
	if (value && (value < text || value + vlen > text + size))
		abort();
	free(text);
	return 0;
}

/*
 * A pprof file handed to jbpfprof convert or diff (gzipped or plain
 * protobuf), read whole and, as convert --event does, for one of the
 * events a file of several may hold.
 */
#include "fuzz.h"

#include "user/pprof_read.h"

static void read_one(const uint8_t *data, size_t size, const char *event)
{
	struct pprof_recording rec;
	char err[256];

	if (pprof_read_buffer_event(data, size, event, &rec, err, sizeof(err)) == 0)
		pprof_recording_free(&rec);
	else if (!memchr(err, '\0', sizeof(err)) || strchr(err, '\n'))
		abort(); /* the reason is one line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_one(data, size, NULL);
	read_one(data, size, "alloc");
	return 0;
}

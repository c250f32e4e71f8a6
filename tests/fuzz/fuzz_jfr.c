/* A JDK Flight Recorder file handed to jbpfprof convert or diff. */
#include "fuzz.h"

#include "input/jfr_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_recording rec;
	char err[256];

	if (jfr_read__buffer(data, size, &rec, err, sizeof(err)) == 0)
		pprof_recording__free(&rec);
	else if (!memchr(err, '\0', sizeof(err)) || strchr(err, '\n'))
		abort(); /* the reason is one line */
	return 0;
}

/*
 * What a JVM answers the attach protocol, and the files read before
 * attaching to it: the reply, its status (ids, NSpid, caught signals), its
 * command line and options, and its hsperfdata file.
 */
#include "fuzz.h"

#include "user/java/attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), msg[256], caps[256];
	int agent_rc;
	pid_t nspid;
	uid_t uid;
	gid_t gid;

	/* Whatever the reply, msg is one line. */
	attach__parse_reply(text, size, &agent_rc, msg, sizeof(msg));
	if (!memchr(msg, '\0', sizeof(msg)) || strchr(msg, '\n'))
		abort();
	attach__parse_status(text, size, &nspid, &uid, &gid);
	attach__status_catches(text, size, 3);
	attach__cmdline_disables(text, size, 0);
	attach__options_disables(text, size, 0);
	if (attach__parse_perfdata(data, size, caps, sizeof(caps)) >= 0 && !memchr(caps, '\0', sizeof(caps)))
		abort();
	free(text);
	return 0;
}

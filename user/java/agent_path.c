/*
 * agent_path: the installed agent's path (contract in agent_path.h). The
 * build passes $(PREFIX)'s path as JBPF_AGENT_INSTALL_PATH.
 */
#include "user/java/agent_path.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef JBPF_AGENT_INSTALL_PATH
#error "JBPF_AGENT_INSTALL_PATH must name where make install puts the agent"
#endif

static bool is_regular(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* <directory of the running binary>/../AGENT_PATH_SUBDIR/libjbpfagent.so, resolved; 0 or -1. */
static int beside_binary(char *path, size_t size)
{
	char exe[PATH_MAX], guess[PATH_MAX + 64], *slash, *real;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int rc = -1;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(guess, sizeof(guess), "%s/../" AGENT_PATH_SUBDIR "/libjbpfagent.so", exe);
	real = realpath(guess, NULL);
	if (real && is_regular(real) && strlen(real) < size) {
		memcpy(path, real, strlen(real) + 1);
		rc = 0;
	}
	free(real);
	return rc;
}

int agent_path__installed(char *path, size_t size)
{
	if (!beside_binary(path, size))
		return 0;
	snprintf(path, size, "%s", JBPF_AGENT_INSTALL_PATH);
	return is_regular(path) ? 0 : -1;
}

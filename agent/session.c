/* The trace session (see session.h).  TODO(owner: io wrappers). */
#include <config.h>

#include <errno.h>
#include <stdio.h>

#include "agent/session.h"

void session_path(char *buf, size_t cap, const char *output, long root_pid)
{
	snprintf(buf, cap, "%s.%ld.session", output, root_pid);
}

int session_load_writes(const char *path, struct session_write **out, size_t *n)
{
	(void)path;
	*out = NULL;
	*n = 0;
	return -ENOENT;
}

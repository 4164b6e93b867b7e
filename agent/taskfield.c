/* A field of a thread's /proc/self/task/TID/status, as a number: what
 * the sampling wing (a thread's blocked and pending signals) and the
 * live patcher (whether a thread can be sent a probe) ask of the
 * program's other threads.  Declared in agent.h. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

uint64_t agent_task_field(long tid, const char *name, int base)
{
	char path[64], buf[4096], *p;
	size_t len = strlen(name), n = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (n + 1 < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return strtoull(p + len + 1, NULL, base);
	return 0;
}

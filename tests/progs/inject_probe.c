/* A library the injector's tests load into a running process
 * (attach-inject.sh): probe(PATH) writes "probed PID TID loaded" to PATH,
 * "loaded" only if its constructor ran, and returns the process's pid. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int loaded;

__attribute__((constructor)) static void init(void)
{
	loaded = 1;
}

long probe(const char *path);
long probe(const char *path)
{
	char line[128];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), n;

	if (fd < 0)
		return -1;
	n = snprintf(line, sizeof(line), "probed %ld %ld %s\n", (long)getpid(),
		     (long)syscall(SYS_gettid), loaded ? "loaded" : "not-loaded");
	(void)!write(fd, line, (size_t)n);
	close(fd);
	return (long)getpid();
}

/* A library the injector's tests load into a running process
 * (attach-inject.sh): probe(PATH) writes "probed PID TID loaded" to PATH,
 * "loaded" only if its constructor ran, and returns the process's pid;
 * probe_sleep(MS) sleeps MS milliseconds. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
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

/* probe_sleep(MS): sleeps MS milliseconds (a call long enough for the
 * injector to be killed in it), then returns MS. */
long probe_sleep(const char *ms);
long probe_sleep(const char *ms)
{
	long n = strtol(ms, NULL, 10);
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += n / 1000;
	end.tv_nsec += (n % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	do
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL);
	while (
	    clock_gettime(CLOCK_MONOTONIC, &now) == 0 &&
	    (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)));
	return n;
}

/* Process identity and liveness from /proc (see proc.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/proc.h"

/* Fields 3 (state), 20 (threads, if `threads` is not NULL) and 22 (start
 * time) of /proc/PID/stat. */
static int stat_read(long pid, char *state, uint64_t *threads, uint64_t *start_time)
{
	char path[48], buf[1024];
	const char *p;
	ssize_t n;
	int fd, field;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	/* "PID (COMM) S ...": COMM may hold spaces and parentheses, so the
	 * fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	p += 2;
	*state = *p;
	/* p is at field 3; skip to field 22, reading 20 on the way. */
	for (field = 3; field < 22 && *p; p++) {
		if (*p != ' ')
			continue;
		field++;
		if (field == 20 && threads) {
			*threads = 0;
			for (const char *q = p + 1; *q >= '0' && *q <= '9'; q++)
				*threads = *threads * 10 + (uint64_t)(*q - '0');
		}
	}
	if (field != 22 || *p < '0' || *p > '9')
		return -EINVAL;
	*start_time = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		*start_time = *start_time * 10 + (uint64_t)(*p - '0');
	return 0;
}

int run_proc_stat_read(long pid, char *state, uint64_t *start_time)
{
	return stat_read(pid, state, NULL, start_time);
}

/* 0: process `pid` is gone (or a zombie); 1: it runs, started at *t; 2:
 * it runs as far as we know (its line unreadable: hidepid ...). */
static int alive_read(long pid, uint64_t *t)
{
	uint64_t threads = 0;
	char st;
	int err;

	if (pid <= 0)
		return 0;
	err = stat_read(pid, &st, &threads, t);
	if (err == -ENOENT || err == -ESRCH)
		return 0;
	if (err < 0)
		return 2;
	/* A main thread gone by pthread_exit() is a zombie while the other
	 * threads run (the count includes it). */
	if ((st == 'Z' || st == 'X' || st == 'x') && threads <= 1)
		return 0;
	return 1;
}

bool run_proc_alive(long pid, uint64_t start_time)
{
	uint64_t t = 0;
	int a = alive_read(pid, &t);

	return a == 2 || (a == 1 && (start_time == 0 || t == start_time));
}

bool run_proc_alive_since(long pid, uint64_t *start_time)
{
	uint64_t t = 0;
	int a = alive_read(pid, &t);

	*start_time = a == 1 ? t : 0;
	return a != 0;
}

unsigned run_proc_threads(long pid)
{
	uint64_t t, threads = 0;
	char st;

	if (pid <= 0 || stat_read(pid, &st, &threads, &t) != 0 || st == 'Z' || st == 'X' ||
	    st == 'x')
		return 0;
	return threads > 0xffff ? 0xffff : (unsigned)threads;
}

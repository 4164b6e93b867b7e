/* crash: dies without letting the agent flush, for the recovery tests.
 *
 *	crash exit|exit_group|kill|abort [N [M]]
 *
 * A second thread calls work() N times (default 1000) and ends; then main
 * calls work() M times (default 0), then outer() -> inner(), which dies in
 * the way asked: _exit(3), the exit_group system call with status 4 (as
 * Go's os.Exit does, no libc function on the way), raise(SIGKILL) or
 * abort().  outer and inner
 * stay open.  A large M kills a thread that has been writing for many
 * chunks (recycled in place, agent/spool.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "examples/example.h"

static volatile unsigned long sink;
static unsigned long calls = 1000;

EXAMPLE_NOINLINE static void work(unsigned long x)
{
	sink += x;
}

EXAMPLE_NOINLINE static void *worker(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < calls; i++)
		work(i);
	return NULL;
}

EXAMPLE_NOINLINE static void inner(const char *how)
{
	printf("crash: %s\n", how);
	fflush(stdout);
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	else if (strcmp(how, "abort") == 0)
		abort();
	else if (strcmp(how, "exit_group") == 0)
		syscall(SYS_exit_group, 4);
	_exit(3);
}

EXAMPLE_NOINLINE static void outer(const char *how)
{
	inner(how);
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2) {
		fprintf(stderr, "usage: crash exit|exit_group|kill|abort [N [M]]\n");
		return 2;
	}
	if (argc > 2)
		calls = strtoul(argv[2], NULL, 10);
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	for (unsigned long i = 0, m = argc > 3 ? strtoul(argv[3], NULL, 10) : 0; i < m; i++)
		work(i);
	outer(argv[1]);
	return 0;
}

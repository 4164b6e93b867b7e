/* busy_threads N FILE: N threads (N - 1 started, and main) calling leaf()
 * without a pause until FILE exists; prints "ready" once they all run.
 * A program with a thread for every core, for the tests of fxt-run's
 * early converter's priority (tests/e2e/launcher-early-priority.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "examples/example.h"

static volatile unsigned long sink;
static const char *stop_file;
static unsigned running;

EXAMPLE_NOINLINE static void leaf(unsigned long x)
{
	sink += x;
}

static void *spin(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&running, 1, __ATOMIC_RELAXED);
	for (unsigned long i = 0;; i++) {
		leaf(i);
		if ((i & 0xffff) == 0 && access(stop_file, F_OK) == 0)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[1], NULL, 10) : 0;
	pthread_t tids[64];

	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: busy_threads N(1-64) FILE\n");
		return 2;
	}
	stop_file = argv[2];
	for (unsigned long i = 1; i < n; i++)
		if (pthread_create(&tids[i], NULL, spin, NULL) != 0)
			return 1;
	while (__atomic_load_n(&running, __ATOMIC_RELAXED) < n - 1)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	spin(NULL);
	for (unsigned long i = 1; i < n; i++)
		pthread_join(tids[i], NULL);
	return 0;
}

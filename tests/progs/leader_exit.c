/* leader_exit: main starts a worker and leaves by pthread_exit(); the
 * worker calls leaf() every millisecond for the number of milliseconds
 * given (default 400), then the process exits 0 (the last thread's
 * return).  While the worker records, /proc/PID/stat says the process is a
 * zombie (its leader is): fxt-run must not take its spool's file for a
 * gone process's (launcher-spares.sh).  Prints "leader_exit: N calls".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "examples/example.h"

static volatile unsigned long sink;
static unsigned long ms = 400;

EXAMPLE_NOINLINE static void leaf(unsigned long x)
{
	sink += x;
}

static void *worker(void *arg)
{
	const struct timespec one = { 0, 1000 * 1000 };
	unsigned long i;

	(void)arg;
	for (i = 0; i < ms; i++) {
		leaf(i);
		nanosleep(&one, NULL);
	}
	printf("leader_exit: %lu calls\n", i);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1)
		ms = strtoul(argv[1], NULL, 10);
	if (pthread_create(&th, NULL, worker, NULL) != 0) {
		perror("leader_exit: pthread_create");
		return 1;
	}
	pthread_exit(NULL);
}

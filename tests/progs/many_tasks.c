/* many_tasks N: creates N threads one after the other, each ended and
 * joined before the next, for fxt-run --kernel's test of a run that
 * creates more tasks than perf's task buffer holds (some 8,000 a CPU;
 * tests/e2e/kernel-forks.sh).
 *
 * Prints "main TID" then "thread TID" for each thread; exits 0. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *run(void *arg)
{
	*(long *)arg = (long)syscall(SYS_gettid);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	long *tids = n > 0 ? calloc((size_t)n, sizeof(*tids)) : NULL;

	if (tids == NULL) {
		fprintf(stderr, "usage: many_tasks N (N > 0)\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, run, &tids[i]) != 0 || pthread_join(t, NULL) != 0) {
			perror("many_tasks: pthread_create");
			return 1;
		}
	}
	printf("main %ld\n", (long)syscall(SYS_gettid));
	for (long i = 0; i < n; i++)
		printf("thread %ld\n", tids[i]);
	free(tids);
	return 0;
}

/* threads: four named worker threads, each doing a known amount of work.
 *
 * Worker i (named "worker-i" with pthread_setname_np) calls step() exactly
 * (i + 1) * 100 times through one call of work(); the main thread is named
 * "threads-main" and calls only main.  The tests expect one thread track
 * per thread, each with its name and its own counts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "examples/example.h"

#define NWORKERS 4

static volatile unsigned long sink;

EXAMPLE_NOINLINE static void step(unsigned long x)
{
	__atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
}

EXAMPLE_NOINLINE static void work(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		step(i);
}

static void *worker(void *arg)
{
	unsigned long idx = (unsigned long)arg;
	char name[32]; /* the kernel keeps 15 bytes; ours are shorter */

	snprintf(name, sizeof(name), "worker-%lu", idx);
	pthread_setname_np(pthread_self(), name);
	work((idx + 1) * 100);
	return NULL;
}

int main(void)
{
	pthread_t tids[NWORKERS];

	pthread_setname_np(pthread_self(), "threads-main");
	for (unsigned long i = 0; i < NWORKERS; i++) {
		int err = pthread_create(&tids[i], NULL, worker, (void *)i);
		if (err != 0) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned long i = 0; i < NWORKERS; i++)
		pthread_join(tids[i], NULL);
	printf("threads: sink=%lu\n", sink);
	return 0;
}

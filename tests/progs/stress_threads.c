/* stress_threads: 4 rounds of 64 threads, created and joined, 256 in all
 * (more than the 255 an FXT thread table can index at once).
 *
 * Each thread calls worker → work → step ×10: worker 256, work 256,
 * step 2560, round 4, main 1.  Threads are named "r<round>-<i>".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "examples/example.h"

#define ROUNDS	 4
#define NTHREADS 64
#define STEPS	 10

static volatile unsigned long sink;

EXAMPLE_NOINLINE static void step(unsigned long x)
{
	__atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
}

EXAMPLE_NOINLINE static void work(void)
{
	for (unsigned long i = 0; i < STEPS; i++)
		step(i);
}

static void *worker(void *arg)
{
	char name[32]; /* the kernel keeps 15 bytes; ours are shorter */

	snprintf(name, sizeof(name), "r%lu-%lu", (unsigned long)arg / NTHREADS,
		 (unsigned long)arg % NTHREADS);
	pthread_setname_np(pthread_self(), name);
	work();
	return NULL;
}

EXAMPLE_NOINLINE static int round_of_threads(unsigned long r)
{
	pthread_t tids[NTHREADS];

	for (unsigned long i = 0; i < NTHREADS; i++) {
		int err = pthread_create(&tids[i], NULL, worker, (void *)(r * NTHREADS + i));
		if (err != 0) {
			fprintf(stderr, "stress_threads: pthread_create: %s\n", strerror(err));
			return -1;
		}
	}
	for (unsigned long i = 0; i < NTHREADS; i++)
		pthread_join(tids[i], NULL);
	return 0;
}

int main(void)
{
	for (unsigned long r = 0; r < ROUNDS; r++)
		if (round_of_threads(r) != 0)
			return 1;
	printf("stress_threads: %d threads, sink=%lu\n", ROUNDS * NTHREADS, sink);
	return 0;
}

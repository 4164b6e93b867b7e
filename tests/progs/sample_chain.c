/* sample_chain: a known call chain that burns CPU at a known depth, built
 * without -finstrument-functions (-O2) for stack sampling together with
 * run-time patching (tests/e2e/sample-patch.sh):
 *
 *     main -> outer -> middle -> leaf (spins)
 *
 *   sample_chain [MS [THREADS]]
 *   sample_chain -n CALLS
 *
 * leaf() spins for MS (default 300) ms of the thread's CPU time, in rounds
 * of about 1 ms, each round a call of the whole chain below main (so every
 * patched call enters and returns many times while the samples come), in
 * the main thread, or in each of THREADS threads (named "chain1" ...) at
 * once when THREADS > 0.  With -n, the chain is called CALLS times, leaf
 * spinning for a few dozen instructions only: patched calls' entries and
 * returns are much of the time, where samples land.  Each function does
 * work after its call, so no call is a tail call.  Prints "chain N" (N
 * the rounds or calls, the same in every run); exit status 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile uint64_t sink;

/* The thread's CPU time, in ns. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Global, so that every one is patched by name (and has a symbol). */
uint64_t leaf(uint64_t x, uint64_t until);
uint64_t middle(uint64_t x, uint64_t until);
uint64_t outer(uint64_t x, uint64_t until);

static unsigned spin = 20000;

/* Spins until the thread's CPU time reaches `until` (once when 0). */
NOINLINE uint64_t leaf(uint64_t x, uint64_t until)
{
	do {
		for (unsigned i = 0; i < spin; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			x ^= x >> 29;
		}
	} while (until && cpu_ns() < until);
	return x;
}

NOINLINE uint64_t middle(uint64_t x, uint64_t until)
{
	return leaf(x, until) ^ (sink += 1);
}

NOINLINE uint64_t outer(uint64_t x, uint64_t until)
{
	return middle(x, until) + (sink += 2);
}

static unsigned ms = 300;

static void *chain(void *arg)
{
	uint64_t x = (uintptr_t)arg, start = cpu_ns();

	for (unsigned r = 1; r <= ms; r++)
		x = outer(x, start + r * 1000000ull);
	sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	pthread_t tids[16];

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		unsigned calls = (unsigned)atoi(argv[2]);
		uint64_t x = 1;

		spin = 10;
		for (unsigned i = 0; i < calls; i++)
			x = outer(x, 0);
		sink = x;
		printf("chain %u\n", calls);
		return 0;
	}
	if (argc > 1)
		ms = (unsigned)atoi(argv[1]);
	if (threads > 16)
		threads = 16;
	if (!threads)
		chain((void *)1);
	for (unsigned i = 0; i < threads; i++) {
		char name[16];

		if (pthread_create(&tids[i], NULL, chain, (void *)(uintptr_t)(i + 1)) != 0)
			return 1;
		snprintf(name, sizeof(name), "chain%u", i + 1);
		pthread_setname_np(tids[i], name);
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	printf("chain %u\n", ms);
	return 0;
}

/* bench/libc_mem: what the mem and sync wrappers add per call, side by
 * side in one run.  Not a test.
 *
 *	bench/libc_mem AGENT_SO [ITERATIONS]
 *
 * Runs itself three times, each timing the same loops:
 *   plain      no agent
 *   off        the agent preloaded, FXT_LIBC=none (the wrappers' cost when
 *              their group is off: one load and a branch)
 *   recording  the agent preloaded, FXT_LIBC=mem,sync (archive under
 *              TMPDIR, removed)
 * Loops (ITERATIONS each, default 200000; best of 5 rounds, nanoseconds
 * per iteration from CLOCK_MONOTONIC):
 *   malloc+free   malloc(32) then free, one wrapped pair
 *   lock+unlock   uncontended pthread_mutex_lock then unlock
 *   4-timestamps  four reads of the agent's clock (rdtsc): what two
 *                 recorded calls spend on their enter and exit timestamps
 *                 alone, a floor for the "added" column (in a VM, rdtsc
 *                 may trap and cost far more than on bare metal)
 * and prints the time per iteration of each, with what the agent adds
 * over the plain run. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench/libc_side.h"
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum loop { LOOP_MALLOC, LOOP_MUTEX, LOOP_CLOCK, NLOOPS };
static const char *const loop_names[NLOOPS] = { "malloc+free", "lock+unlock", "4-timestamps" };

static void *volatile sink;
static volatile uint64_t stamps;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The agent's clock (agent/ticks.h): a recorded call reads it twice. */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec;
#endif
}

/* Best of LIBC_SIDE_ROUNDS, in ns per iteration. */
static double time_loop(enum loop which, long n)
{
	double best = 1e30;

	for (int r = 0; r < LIBC_SIDE_ROUNDS; r++) {
		uint64_t t0 = now_ns();

		if (which == LOOP_MALLOC) {
			for (long i = 0; i < n; i++) {
				sink = malloc(32);
				free(sink);
			}
		} else if (which == LOOP_MUTEX) {
			for (long i = 0; i < n; i++) {
				pthread_mutex_lock(&mutex);
				pthread_mutex_unlock(&mutex);
			}
		} else {
			for (long i = 0; i < n; i++)
				stamps += ticks() + ticks() + ticks() + ticks();
		}
		double ns = (double)(now_ns() - t0) / (double)n;
		if (ns < best)
			best = ns;
	}
	return best;
}

static int time_loops(long n, double *out)
{
	for (int l = 0; l < NLOOPS; l++)
		out[l] = time_loop((enum loop)l, n);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct libc_side bench = {
		.name = "libc_mem",
		.groups = "mem,sync",
		.iterations = 200000,
		.nloops = NLOOPS,
		.loop_names = loop_names,
		.time_loops = time_loops,
	};

	return libc_side_main(argc, argv, &bench);
}

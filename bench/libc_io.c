/* bench/libc_io: what the io wrappers add per call, side by side in one
 * run.  Not a test.
 *
 *	bench/libc_io AGENT_SO [ITERATIONS]
 *
 * Runs itself three times, each timing the same loops:
 *   plain      no agent
 *   off        the agent preloaded, FXT_LIBC=none (the wrappers' cost when
 *              their group is off)
 *   recording  the agent preloaded, FXT_LIBC=io (archive under TMPDIR,
 *              removed)
 * Loops (ITERATIONS each, default 100000; best of 5 rounds, nanoseconds
 * of the thread's CPU time per iteration, user and system: on a loaded
 * machine wall time mostly measures the other processes):
 *   read-1B       read(2) of 1 byte from /dev/zero
 *   write-1B      write(2) of 1 byte to /dev/null
 *   pipe-w+r      write 1 byte into a pipe, read it back (one thread): two
 *                 wrapped calls with the stream bookkeeping, a flow and its
 *                 session log entry
 * and prints the time per iteration of each, with what the agent adds over
 * the plain run; rows "NAME PLAIN OFF RECORDING ADDED_OFF ADDED_REC" as
 * bench/libc_mem's, for bench/libc-summary.sh. */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "bench/libc_side.h"

enum loop { LOOP_READ, LOOP_WRITE, LOOP_PIPE, NLOOPS };
static const char *const loop_names[NLOOPS] = { "read-1B", "write-1B", "pipe-w+r" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One round of `which`; false if a call failed. */
static bool round_of(enum loop which, long n, int zero, int null, const int p[2])
{
	char c = 'x';

	for (long i = 0; i < n; i++) {
		switch (which) {
		case LOOP_READ:
			if (read(zero, &c, 1) != 1)
				return false;
			break;
		case LOOP_WRITE:
			if (write(null, &c, 1) != 1)
				return false;
			break;
		default:
			if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1)
				return false;
			break;
		}
	}
	return true;
}

/* Every loop, best of LIBC_SIDE_ROUNDS, in ns of thread CPU time per
 * iteration. */
static int time_loops(long n, double *out)
{
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY), p[2];

	if (zero < 0 || null < 0 || pipe(p) != 0)
		return 1;
	for (int l = 0; l < NLOOPS; l++) {
		double best = 1e30;

		for (int r = 0; r < LIBC_SIDE_ROUNDS; r++) {
			uint64_t t0 = now_ns();
			double ns;

			if (!round_of((enum loop)l, n, zero, null, p))
				return 1;
			ns = (double)(now_ns() - t0) / (double)n;
			if (ns < best)
				best = ns;
		}
		out[l] = best;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct libc_side bench = {
		.name = "libc_io",
		.groups = "io",
		.iterations = 100000,
		.nloops = NLOOPS,
		.loop_names = loop_names,
		.time_loops = time_loops,
	};

	return libc_side_main(argc, argv, &bench);
}

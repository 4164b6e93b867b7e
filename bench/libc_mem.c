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

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define ROUNDS 5

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

/* The agent's clock (agent/clock.h): a recorded call reads it twice. */
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

/* Best of ROUNDS, in ns per iteration. */
static double time_loop(enum loop which, long n)
{
	double best = 1e30;

	for (int r = 0; r < ROUNDS; r++) {
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

static int child(long n)
{
	for (int l = 0; l < NLOOPS; l++)
		printf("%.2f\n", time_loop((enum loop)l, n));
	return 0;
}

/* Runs `self --child N` with the agent (or not) and FXT_LIBC=`groups`;
 * reads its results into out[]. */
static int run(const char *self, const char *agent, const char *groups, const char *archive, long n,
	       double out[NLOOPS])
{
	char count[32];
	int fds[2], status;
	FILE *f;
	pid_t pid;

	snprintf(count, sizeof(count), "%ld", n);
	if (pipe(fds) != 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (agent) {
			setenv("LD_PRELOAD", agent, 1);
			setenv("FXT_LIBC", groups, 1);
			setenv("FXT_OUTPUT", archive, 1);
		}
		execl(self, self, "--child", count, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	for (int l = 0; f && l < NLOOPS; l++)
		if (fscanf(f, "%lf", &out[l]) != 1)
			out[l] = -1;
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

int main(int argc, char **argv)
{
	double plain[NLOOPS], off[NLOOPS], rec[NLOOPS];
	char self[4096], archive[4096];
	const char *tmp = getenv("TMPDIR");
	long n = 200000;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(atol(argv[2]));
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: libc_mem AGENT_SO [ITERATIONS]\n");
		return 2;
	}
	if (argc == 3)
		n = atol(argv[2]);
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return 1;
	self[len] = '\0';
	snprintf(archive, sizeof(archive), "%s/fxt-bench-libc.%ld.fxt", tmp ? tmp : "/tmp",
		 (long)getpid());
	if (run(self, NULL, NULL, NULL, n, plain) < 0 ||
	    run(self, argv[1], "none", archive, n, off) < 0 ||
	    run(self, argv[1], "mem,sync", archive, n, rec) < 0) {
		fprintf(stderr, "libc_mem: a run failed\n");
		unlink(archive);
		return 1;
	}
	unlink(archive);
	printf("ns per iteration (best of %d rounds of %ld)\n", ROUNDS, n);
	printf("%-12s %8s %8s %10s %12s %14s\n", "loop", "plain", "off", "recording", "added (off)",
	       "added (rec.)");
	for (int l = 0; l < NLOOPS; l++)
		printf("%-12s %8.1f %8.1f %10.1f %12.1f %14.1f\n", loop_names[l], plain[l], off[l],
		       rec[l], off[l] - plain[l], rec[l] - plain[l]);
	return 0;
}

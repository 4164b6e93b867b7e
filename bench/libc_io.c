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

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5

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

static int child(long n)
{
	int zero = open("/dev/zero", O_RDONLY), null = open("/dev/null", O_WRONLY), p[2];

	if (zero < 0 || null < 0 || pipe(p) != 0)
		return 1;
	for (int l = 0; l < NLOOPS; l++) {
		double best = 1e30;

		for (int r = 0; r < ROUNDS; r++) {
			uint64_t t0 = now_ns();
			double ns;

			if (!round_of((enum loop)l, n, zero, null, p))
				return 1;
			ns = (double)(now_ns() - t0) / (double)n;
			if (ns < best)
				best = ns;
		}
		printf("%.2f\n", best);
	}
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
	long n = 100000;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(atol(argv[2]));
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: libc_io AGENT_SO [ITERATIONS]\n");
		return 2;
	}
	if (argc == 3)
		n = atol(argv[2]);
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return 1;
	self[len] = '\0';
	snprintf(archive, sizeof(archive), "%s/fxt-bench-libc-io.%ld.fxt", tmp ? tmp : "/tmp",
		 (long)getpid());
	if (run(self, NULL, NULL, NULL, n, plain) < 0 ||
	    run(self, argv[1], "none", archive, n, off) < 0 ||
	    run(self, argv[1], "io", archive, n, rec) < 0) {
		fprintf(stderr, "libc_io: a run failed\n");
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

/* The side-by-side harness of the libc wrapper benches (see libc_side.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/libc_side.h"

/* The child: the bench's loops, one line of ns per iteration each. */
static int child(const struct libc_side *b, long n)
{
	double out[LIBC_SIDE_MAX_LOOPS];

	if (b->time_loops(n, out) != 0)
		return 1;
	for (unsigned l = 0; l < b->nloops; l++)
		printf("%.2f\n", out[l]);
	return 0;
}

/* Runs `self --child N` with the agent (or not) and FXT_LIBC=`groups`;
 * reads its results into out[]. */
static int run(const struct libc_side *b, const char *self, const char *agent, const char *groups,
	       const char *archive, long n, double *out)
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
	for (unsigned l = 0; f && l < b->nloops; l++)
		if (fscanf(f, "%lf", &out[l]) != 1)
			out[l] = -1;
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

int libc_side_main(int argc, char **argv, const struct libc_side *b)
{
	double plain[LIBC_SIDE_MAX_LOOPS], off[LIBC_SIDE_MAX_LOOPS], rec[LIBC_SIDE_MAX_LOOPS];
	char self[4096], archive[4096];
	const char *tmp = getenv("TMPDIR");
	long n = b->iterations;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(b, atol(argv[2]));
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s AGENT_SO [ITERATIONS]\n", b->name);
		return 2;
	}
	if (argc == 3)
		n = atol(argv[2]);
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return 1;
	self[len] = '\0';
	snprintf(archive, sizeof(archive), "%s/fxt-bench-%s.%ld.fxt", tmp ? tmp : "/tmp", b->name,
		 (long)getpid());
	if (run(b, self, NULL, NULL, NULL, n, plain) < 0 ||
	    run(b, self, argv[1], "none", archive, n, off) < 0 ||
	    run(b, self, argv[1], b->groups, archive, n, rec) < 0) {
		fprintf(stderr, "%s: a run failed\n", b->name);
		unlink(archive);
		return 1;
	}
	unlink(archive);
	printf("ns per iteration (best of %d rounds of %ld)\n", LIBC_SIDE_ROUNDS, n);
	printf("%-12s %8s %8s %10s %12s %14s\n", "loop", "plain", "off", "recording", "added (off)",
	       "added (rec.)");
	for (unsigned l = 0; l < b->nloops; l++)
		printf("%-12s %8.1f %8.1f %10.1f %12.1f %14.1f\n", b->loop_names[l], plain[l],
		       off[l], rec[l], off[l] - plain[l], rec[l] - plain[l]);
	return 0;
}

/* fork_in_handler: children forked inside a signal handler, the way
 * PostgreSQL's postmaster (up to version 15) starts its workers.
 *
 * "fork_in_handler select FILE": a SIGALRM handler forks a child, armed
 * with ualarm(50000, 0), while the main thread blocks in select() for
 * 2 s.  The child, still inside the handler, opens and reads FILE, calls
 * child_work(), prints "child read N bytes" and exits through exit().  The
 * parent, woken by the signal, reaps it and prints "parent: child exit 0".
 *
 * "fork_in_handler hooks FILE N": a 1 ms interval timer interrupts a loop
 * of calls to the instrumented tick(), so that most signals land inside a
 * hook; each one forks a child (N in all).  The children return from the
 * handler into the interrupted code, then open and read FILE, call
 * child_work() and exit through exit() with status 0.  The parent reaps
 * them and prints "hooks: N children, N exited 0".  With a fourth
 * argument "exit", the children do their work and exit inside the
 * handler instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "examples/example.h"

#define MAX_KIDS 1000

static const char *file;
static volatile unsigned long sink;
static volatile sig_atomic_t in_child;
static pid_t kids[MAX_KIDS];
static volatile sig_atomic_t nkids;
static int want_kids;
static int exit_in_handler;

EXAMPLE_NOINLINE static void child_work(void)
{
	sink++;
}

EXAMPLE_NOINLINE static void tick(void)
{
	sink++;
}

/* The child's work: read the file, one instrumented call.  The byte
 * count, or -1. */
EXAMPLE_NOINLINE static long read_file(void)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	child_work();
	return total;
}

EXAMPLE_NOINLINE static void on_alarm_select(int sig)
{
	pid_t pid;

	(void)sig;
	pid = fork();
	if (pid == 0) {
		printf("child read %ld bytes\n", read_file());
		exit(0);
	}
	kids[0] = pid;
	nkids = 1;
}

EXAMPLE_NOINLINE static void on_alarm_hooks(int sig)
{
	pid_t pid;

	(void)sig;
	if (in_child || nkids >= want_kids)
		return;
	pid = fork();
	if (pid == 0 && exit_in_handler)
		exit(read_file() > 0 ? 0 : 3);
	if (pid == 0) {
		in_child = 1;
		return;
	}
	if (pid > 0)
		kids[nkids++] = pid;
}

static int reap(void)
{
	int zero = 0;

	for (int i = 0; i < nkids; i++) {
		int status;

		while (waitpid(kids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			zero++;
		else if (WIFSIGNALED(status))
			fprintf(stderr, "fork_in_handler: child %d killed by signal %d\n",
				(int)kids[i], WTERMSIG(status));
	}
	return zero;
}

static int run_select(void)
{
	struct sigaction sa;
	struct timeval tv = { 2, 0 };
	int zero;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm_select;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	fflush(stdout);
	ualarm(50000, 0);
	if (select(0, NULL, NULL, NULL, &tv) == 0 || !nkids) {
		fprintf(stderr, "fork_in_handler: select was not interrupted\n");
		return 1;
	}
	zero = reap();
	printf("parent: child exit %d\n", zero == 1 ? 0 : 1);
	return zero == 1 ? 0 : 1;
}

static int run_hooks(int n)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;
	int zero;

	want_kids = n < MAX_KIDS ? n : MAX_KIDS;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm_hooks;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	fflush(stdout);
	setitimer(ITIMER_REAL, &it, NULL);
	while (nkids < want_kids && !in_child)
		tick();
	if (in_child)
		exit(read_file() > 0 ? 0 : 3);
	setitimer(ITIMER_REAL, &off, NULL);
	zero = reap();
	printf("hooks: %d children, %d exited 0\n", (int)nkids, zero);
	return zero == nkids ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "select") == 0) {
		file = argv[2];
		return run_select();
	}
	if ((argc == 4 || (argc == 5 && strcmp(argv[4], "exit") == 0)) &&
	    strcmp(argv[1], "hooks") == 0) {
		file = argv[2];
		exit_in_handler = argc == 5;
		return run_hooks(atoi(argv[3]));
	}
	fprintf(stderr, "usage: fork_in_handler select FILE | hooks FILE N [exit]\n");
	return 2;
}

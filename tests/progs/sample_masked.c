/* Threads that block signals, and a thread that mostly waits, for the
 * sampling tests (tests/e2e/sample-masks.sh); built -O2 without hooks.
 *
 *   sample_masked MODE
 *
 * MODE:
 *   blocked  the main thread blocks every signal while it creates two
 *            workers (as liblzma does), which start with that mask, burn
 *            CPU in burn() and print whether their mask blocks SIGPROF;
 *   own      the same, after installing a SIGPROF handler of its own;
 *   pending  the same as blocked, but the main thread keeps every signal
 *            blocked and sends SIGPROF to the process while the workers
 *            run: nobody takes it (its default action would end the
 *            process), and it is still pending at the end;
 *   idle     the main thread alternates bursts of CPU (burst(), about
 *            20 ms each) with waits (300 ms in nanosleep), 5 times;
 *   spawn, system, exec
 *            with every signal blocked, runs itself as "show" (by
 *            posix_spawn, system or exec), which prints whether its mask
 *            blocks SIGPROF ("show: SIGPROF blocked").
 * Prints what it saw (the same with and without tracing), and to stderr
 * "cpu NS" (the process's CPU time) for idle; exit status 0. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile sig_atomic_t profs;

static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* About `ms` of CPU time. */
__attribute__((noinline)) static void burn(unsigned ms)
{
	uint64_t end = cpu_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000u, x = sink;

	while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) static void burst(void)
{
	burn(20);
}

static void *worker(void *arg)
{
	sigset_t cur;

	(void)arg;
	burn(300);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return (void *)(uintptr_t)(sigismember(&cur, SIGPROF) == 1);
}

static void on_prof(int sig)
{
	(void)sig;
	profs++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "blocked";
	sigset_t all, old, pend;
	pthread_t th[2];

	if (strcmp(mode, "show") == 0) {
		pthread_sigmask(SIG_BLOCK, NULL, &old);
		printf("show: SIGPROF %s\n",
		       sigismember(&old, SIGPROF) == 1 ? "blocked" : "not blocked");
		return 0;
	}
	if (strcmp(mode, "spawn") == 0 || strcmp(mode, "system") == 0 ||
	    strcmp(mode, "exec") == 0) {
		char *args[] = { argv[0], (char *)"show", NULL };
		char cmd[4096];
		pid_t pid;
		int status;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
		fflush(stdout);
		if (strcmp(mode, "exec") == 0) {
			execv(argv[0], args);
			return 1;
		}
		if (strcmp(mode, "system") == 0) {
			snprintf(cmd, sizeof(cmd), "'%s' show", argv[0]);
			return system(cmd) == 0 ? 0 : 1;
		}
		if (posix_spawn(&pid, argv[0], NULL, NULL, args, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid)
			return 1;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (strcmp(mode, "idle") == 0) {
		struct timespec wait = { 0, 300000000 };

		for (int i = 0; i < 5; i++) {
			burst();
			nanosleep(&wait, NULL);
		}
		printf("idle: 5 bursts\n");
		fprintf(stderr, "cpu %" PRIu64 "\n", cpu_ns(CLOCK_PROCESS_CPUTIME_ID));
		return 0;
	}
	if (strcmp(mode, "own") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_prof;
		sigaction(SIGPROF, &sa, NULL);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, NULL) != 0)
			return 1;
	if (strcmp(mode, "pending") == 0)
		kill(getpid(), SIGPROF);
	else
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 2; i++) {
		void *blocked;

		pthread_join(th[i], &blocked);
		printf("worker %d: SIGPROF %s\n", i + 1, blocked ? "blocked" : "not blocked");
	}
	sigpending(&pend);
	printf("SIGPROF %s, handled %d times\n",
	       sigismember(&pend, SIGPROF) == 1 ? "pending" : "not pending", (int)profs);
	return 0;
}

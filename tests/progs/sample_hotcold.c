/* A CPU-bound program for the sampling tests and bench, built -O2 (and,
 * as sample_hotcold_hooks, also with -finstrument-functions): hot() does
 * four times the work of cold(), so about 80% of the CPU time is in hot
 * and 20% in cold.
 *
 *   sample_hotcold [-t] [ROUNDS [THREADS [MODE]]]
 *
 * ROUNDS (default 20) rounds of hot then cold, in the main thread, or in
 * each of THREADS threads (named "worker1" ...) one after the other when
 * THREADS > 0.  MODE:
 *   fork    a child process does the rounds first (checksum line "child"),
 *           then the parent;
 *   block   SIGPROF is blocked in every thread of the program;
 *   own     the program installs a SIGPROF handler of its own first,
 *           raises SIGPROF once after the rounds, and prints how many
 *           SIGPROFs its handler saw ("own handler: 1");
 *   raise   after the rounds, raise(SIGPROF) with its default action: the
 *           process dies of it (and does not print "survived").
 * Prints one deterministic checksum line per worker; exit status 0.  -t
 * also prints "work CPU_NS WALL_NS" to stderr: the process's CPU time and
 * the wall time of the rounds alone (for bench/sample.sh). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STEPS 2500000u /* per unit of work: a few ms */

/* A chain of dependent multiplications: no vectorising, no shortcut. */
__attribute__((noinline)) uint64_t mix(uint64_t x, unsigned n);
__attribute__((noinline)) uint64_t mix(uint64_t x, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		x ^= x >> 29;
	}
	return x;
}

__attribute__((noinline)) uint64_t hot(uint64_t x);
__attribute__((noinline)) uint64_t hot(uint64_t x)
{
	return mix(x, 4 * STEPS) + 1;
}

__attribute__((noinline)) uint64_t cold(uint64_t x);
__attribute__((noinline)) uint64_t cold(uint64_t x)
{
	return mix(x, STEPS) + 2;
}

static unsigned rounds = 20;
static volatile sig_atomic_t profs;

static void on_prof(int sig)
{
	(void)sig;
	profs++;
}

__attribute__((noinline)) static uint64_t work(uint64_t seed)
{
	uint64_t x = seed;

	for (unsigned r = 0; r < rounds; r++)
		x = cold(hot(x));
	return x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker%u", id);
	pthread_setname_np(pthread_self(), name);
	printf("worker%u %016" PRIx64 "\n", id, work(id));
	return NULL;
}

static uint64_t ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned nthreads = 0;
	const char *mode = "";
	uint64_t cpu0, wall0;
	bool times = false;
	pthread_t th;

	if (argc > 1 && strcmp(argv[1], "-t") == 0) {
		times = true;
		argc--, argv++;
	}
	if (argc > 1)
		rounds = (unsigned)strtoul(argv[1], NULL, 10);
	if (argc > 2)
		nthreads = (unsigned)strtoul(argv[2], NULL, 10);
	if (argc > 3)
		mode = argv[3];
	if (strcmp(mode, "block") == 0) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGPROF);
		pthread_sigmask(SIG_BLOCK, &set, NULL); /* threads inherit it */
	}
	if (strcmp(mode, "own") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid;
		int status;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			printf("child %016" PRIx64 "\n", work(7));
			exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 1;
	}
	cpu0 = ns(CLOCK_PROCESS_CPUTIME_ID);
	wall0 = ns(CLOCK_MONOTONIC);
	if (!nthreads)
		printf("main %016" PRIx64 "\n", work(0));
	/* One at a time: the output order is fixed. */
	for (unsigned i = 0; i < nthreads; i++) {
		if (pthread_create(&th, NULL, worker, (void *)(uintptr_t)(i + 1)) != 0)
			return 1;
		pthread_join(th, NULL);
	}
	if (strcmp(mode, "own") == 0) {
		struct sigaction sa;

		raise(SIGPROF);
		sigaction(SIGPROF, NULL, &sa);
		printf("own handler: %d%s\n", (int)profs,
		       sa.sa_handler == on_prof ? "" : " (not installed?)");
	}
	if (strcmp(mode, "raise") == 0) {
		fflush(stdout);
		raise(SIGPROF);
		printf("survived\n");
	}
	if (times)
		fprintf(stderr, "work %" PRIu64 " %" PRIu64 "\n",
			ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0, ns(CLOCK_MONOTONIC) - wall0);
	return 0;
}

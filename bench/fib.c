/* fib: the benchmark workload.  fib(n) makes 2 * F(n + 1) - 1 calls, each
 * an enter/exit hook pair when built with -finstrument-functions
 * (fib(35): 29,860,703 pairs).
 *
 *	bench/fib[-plain] N [THREADS]
 *
 * THREADS threads (default 1) each compute fib(N).  It prints, on one
 * line, the calls made, the CLOCK_REALTIME nanoseconds at the end of the
 * work (so that the harness can time what happens after it: the agent's
 * flush), and the CPU nanoseconds of the work itself.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long fib(unsigned long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned long calls_of_fib(unsigned long n)
{
	unsigned long a = 0, b = 1; /* F(0), F(1) */
	for (unsigned long i = 0; i < n + 1; i++) {
		unsigned long t = a + b;
		a = b;
		b = t;
	}
	return 2 * a - 1; /* a = F(n + 1) */
}

static unsigned long n_arg;
static volatile unsigned long sink;

static void *run(void *arg)
{
	(void)arg;
	sink += fib(n_arg);
	return NULL;
}

static long long ns_of(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long nthreads = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	pthread_t tids[64];

	n_arg = argc > 1 ? strtoul(argv[1], NULL, 10) : 30;
	if (nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "fib: 1 to 64 threads\n");
		return 2;
	}
	long long cpu0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	if (nthreads == 1) {
		run(NULL);
	} else {
		for (unsigned long i = 0; i < nthreads; i++)
			if (pthread_create(&tids[i], NULL, run, NULL) != 0)
				return 1;
		for (unsigned long i = 0; i < nthreads; i++)
			pthread_join(tids[i], NULL);
	}
	long long cpu1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	printf("calls=%lu end_ns=%lld cpu_ns=%lld\n", calls_of_fib(n_arg) * nthreads,
	       ns_of(CLOCK_REALTIME), cpu1 - cpu0);
	return 0;
}

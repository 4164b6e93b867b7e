/* numbered: calls that say their own number, for the tests of the
 * recording modes (tests/e2e/modes.sh): the archive shows which calls were
 * kept, and tests/helpers/numbers reads the numbers back.
 *
 *	numbered N [THREADS [KILL]]
 *
 * Each of THREADS threads (default 1: main itself) calls count() once,
 * which makes N numbered calls, i = 0 .. N-1: a frame num() whose children
 * are one call per decimal digit of i, most significant first, d0() .. d9().
 * So a thread makes 1 + N + (the digits of 0 .. N-1) calls (main one more).
 * With KILL (any third argument), the process kills itself with SIGKILL
 * when the threads are done, before it can seal its spool.  With
 * NUMBERED_RSS set in its environment, it prints its peak RSS (VmHWM of
 * /proc/self/status) on standard error before it returns.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/example.h"

static volatile unsigned long sink;

#define DIGIT(n)                                \
	EXAMPLE_NOINLINE static void d##n(void) \
	{                                       \
		sink += n;                      \
	}
DIGIT(0)
DIGIT(1)
DIGIT(2)
DIGIT(3)
DIGIT(4)
DIGIT(5)
DIGIT(6)
DIGIT(7)
DIGIT(8)
DIGIT(9)

static void (*const digits[10])(void) = { d0, d1, d2, d3, d4, d5, d6, d7, d8, d9 };

EXAMPLE_NOINLINE static void num(unsigned long i)
{
	unsigned char d[24];
	int n = 0;

	do
		d[n++] = (unsigned char)(i % 10);
	while ((i /= 10) != 0);
	while (n-- > 0)
		digits[d[n]]();
}

static unsigned long calls = 100000;

EXAMPLE_NOINLINE static void *count(void *arg)
{
	for (unsigned long i = 0; i < calls; i++)
		num(i);
	return arg;
}

int main(int argc, char **argv)
{
	unsigned long nthreads = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	pthread_t th[64];

	if (argc > 1)
		calls = strtoul(argv[1], NULL, 10);
	if (nthreads <= 1) {
		count(NULL);
	} else {
		if (nthreads > 64)
			nthreads = 64;
		for (unsigned long t = 0; t < nthreads; t++)
			if (pthread_create(&th[t], NULL, count, NULL) != 0)
				return 1;
		for (unsigned long t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
	}
	if (argc > 3)
		kill(getpid(), SIGKILL);
	printf("numbered: %lu threads x %lu numbers\n", nthreads ? nthreads : 1, calls);
	if (getenv("NUMBERED_RSS")) {
		char line[256];
		FILE *f = fopen("/proc/self/status", "r");

		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "VmHWM:", 6) == 0)
				fputs(line, stderr);
		if (f)
			fclose(f);
	}
	return 0;
}

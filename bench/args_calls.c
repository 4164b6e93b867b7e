/* The calls bench/args.sh times under fxt-run --patch with and without
 * --args/--retval: `args_calls ints N` calls add2(i, i + 1) N times (two
 * integer arguments, an integer returned), `args_calls str N` calls
 * measure(s) N times with a 40-byte string.  Prints the result, and the
 * loop's time in ns ("loop_ns T"): the calls' own cost, without the
 * conversion fxt-run does after.  The thread's CPU time, not the wall
 * clock's: on a machine that runs other work too, it moves much less
 * (a call's page faults and the kernel's work for it are in it).  Built -O2 -g, without
 * -finstrument-functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP __attribute__((noinline, noipa))

long add2(long a, long b);
size_t measure(const char *s);

static volatile long sink;

KEEP long add2(long a, long b)
{
	sink += a;
	return a + b;
}

KEEP size_t measure(const char *s)
{
	sink += s[0];
	return 40;
}

int main(int argc, char **argv)
{
	static const char text[] = "GET /index.html HTTP/1.1 Host: example";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	long acc = 0;
	struct timespec t0, t1;

	if (argc < 2 || (strcmp(argv[1], "ints") != 0 && strcmp(argv[1], "str") != 0)) {
		fprintf(stderr, "usage: %s ints|str N\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	if (argv[1][0] == 'i')
		for (long i = 0; i < n; i++)
			acc += add2(i, i + 1);
	else
		for (long i = 0; i < n; i++)
			acc += (long)measure(text);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	printf("%ld\nloop_ns %lld\n", acc,
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}

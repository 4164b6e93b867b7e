/* srcline: functions whose source lines tests/e2e/srcline.sh checks (each
 * function's file:line in the archive against addr2line's), built with
 * -g -finstrument-functions:
 *
 *   main            1 call
 *   parse          10 calls
 *   checksum       10 calls (declared over two lines, GNU style)
 *   scaled         10 calls: inlined into parse (always_inline), which
 *                  makes the compiler keep an out-of-line copy for the
 *                  hooks to name: its location says " (inlined)"
 *   srcline_other   3 calls, in srcline_other.c
 *
 * It prints the sum they make, which depends on every call running.
 */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

long srcline_other(long x);

static inline __attribute__((always_inline)) long scaled(long x)
{
	return 3 * x;
}

/* GNU style, the name on a line of its own: */
/* clang-format off */
NOINLINE static long
checksum(long x)
{
	return x ^ 0x5a;
}
/* clang-format on */

NOINLINE static long parse(long x)
{
	return checksum(scaled(x)) + 1;
}

int main(void)
{
	long sum = 0;

	for (long i = 0; i < 10; i++)
		sum += parse(i);
	for (long i = 0; i < 3; i++)
		sum += srcline_other(i);
	printf("%ld\n", sum);
	return 0;
}

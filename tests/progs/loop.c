/* loop: leaf() called N times from main (default 100000, or the first
 * argument): a known number of events, for the --max-size drop tests and
 * the overhead measurements.
 */
#include <stdio.h>
#include <stdlib.h>

#include "examples/example.h"

static volatile unsigned long sink;

EXAMPLE_NOINLINE static void leaf(unsigned long x)
{
	sink += x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;

	for (unsigned long i = 0; i < n; i++)
		leaf(i);
	printf("loop: %lu calls\n", n);
	return 0;
}

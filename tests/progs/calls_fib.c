/* calls_fib: the call views' traced program (tests/e2e/calls-tree.sh):
 * main -> run -> fib(N) by plain recursion (fib calls itself twice: 177
 * calls for N = 10, the default, or the first argument), then the result
 * written with write(2), a libc call with arguments and a result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "examples/example.h"

EXAMPLE_NOINLINE static unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

EXAMPLE_NOINLINE static unsigned long run(unsigned n)
{
	return fib(n);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 10;
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%lu\n", run(n));

	return write(1, buf, (size_t)len) == len ? 0 : 1;
}

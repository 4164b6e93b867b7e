/* calltree: a program whose call tree and call counts are known exactly.
 *
 *	main
 *	├── a            ×3
 *	│   └── b        ×2 per a  (6)
 *	│       ├── c    ×2 per b  (12)
 *	│       └── d    ×1 per b  (6)
 *	│           └── c ×1 per d (6)
 *	└── rec(4)       recursion: rec ×5 in one chain
 *
 * The end-to-end tests compare the traced tree with this picture, so every
 * function is kept out of line and out of interprocedural cloning: under any
 * optimisation level each call here is a real call that runs the hooks.
 * It writes a line to stdout and one to stderr, which the tests compare
 * with an untraced run byte for byte.
 */
#include <stdio.h>

#include "examples/example.h"

static volatile unsigned long sink;

EXAMPLE_NOINLINE static void c(unsigned long x)
{
	sink += x;
}

EXAMPLE_NOINLINE static void d(unsigned long x)
{
	c(x * 3);
}

EXAMPLE_NOINLINE static void b(unsigned long x)
{
	c(x);
	c(x + 1);
	d(x);
}

EXAMPLE_NOINLINE static void a(unsigned long x)
{
	for (unsigned long i = 0; i < 2; i++)
		b(x * 10 + i);
}

EXAMPLE_NOINLINE static unsigned long rec(unsigned long n)
{
	if (n == 0)
		return 1;
	return n * rec(n - 1);
}

int main(void)
{
	for (unsigned long i = 0; i < 3; i++)
		a(i);
	unsigned long f = rec(4);
	printf("calltree: sink=%lu rec(4)=%lu\n", sink, f);
	fprintf(stderr, "calltree: done\n");
	return 0;
}

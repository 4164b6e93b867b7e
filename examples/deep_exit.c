/* deep_exit: calls exit(N) from the bottom of a recursion, with every
 * frame still open.  N (default 42) is the first argument; fxt-run must
 * hand it back as its own exit status, and the archive must still close
 * or mark the 51 open frames (descend ×50 plus main) so that a viewer
 * nests them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "examples/example.h"

#define DEPTH 50

EXAMPLE_NOINLINE static void bottom(int status)
{
	printf("deep_exit: exit(%d) at depth %d\n", status, DEPTH);
	fflush(stdout);
	exit(status);
}

EXAMPLE_NOINLINE static void descend(int depth, int status)
{
	if (depth == DEPTH)
		bottom(status);
	else
		descend(depth + 1, status);
}

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 42;
	descend(1, status);
	return 0; /* not reached */
}

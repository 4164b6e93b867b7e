/* Functions whose line-table rows tests/unit/test_linetab.c compares with
 * libdw's (symbolizer/linetab.c decodes them itself), built with DWARF 4
 * and DWARF 5 (tests/progs.mk).  Some come from a header in the folder
 * (another file and directory entry); a cold one goes to .text.unlikely
 * and main, at -O2, to .text.startup: sequences of their own that lie
 * below .text's in memory but follow it in the table, so that the rows
 * must be sorted. */
#include <stdio.h>
#include <stdlib.h>

#include "linetab.h"

__attribute__((cold, noinline)) static int rare(int x)
{
	fprintf(stderr, "rare %d\n", x);
	return -x;
}

__attribute__((noinline)) static int step(int x)
{
	if (x > 1000)
		return rare(x);
	return x + 2;
}

__attribute__((noinline)) static int linetab_sum(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += step(i) + from_header(i);
	return s;
}

int main(int argc, char **argv)
{
	printf("%d\n", linetab_sum(argc > 1 ? atoi(argv[1]) : 10));
	return 0;
}

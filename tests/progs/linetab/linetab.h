/* A function defined in a header of a folder of its own, for
 * tests/progs/linetab/linetab.c: its line-table rows name another file,
 * through another directory entry. */
#ifndef FXT_TESTS_LINETAB_H
#define FXT_TESTS_LINETAB_H

__attribute__((noinline)) static int from_header(int x)
{
	return x * 3 + 1;
}

#endif

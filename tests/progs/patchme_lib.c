/* patchme_lib: a program (-O2, no hooks) and its shared library
 * libpatchlib (tests/progs/patchlib.c), for fxt-run --patch-module
 * (tests/e2e/patch.sh): lib_work(15) 10 times, lib_each(100, back) 3
 * times, back() calling into the program's own function. */
#include <stdio.h>

#include "tests/progs/patchlib.h"

static volatile long sink;

__attribute__((noinline, noclone)) static void back(int i)
{
	sink += i;
}

int main(void)
{
	long sum = 0;
	for (int i = 0; i < 10; i++)
		sum += lib_work(15);
	for (int i = 0; i < 3; i++)
		lib_each(100, back);
	printf("sum %ld, sink %ld\n", sum, (long)sink);
	return 0;
}

/* libpatchlib: a shared library built without -finstrument-functions
 * (-O2), loaded with tests/progs/patchme_lib, for fxt-run --patch-module
 * (tests/e2e/patch.sh). */
#include "tests/progs/patchlib.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile long lib_sink;

NOINLINE static int lib_fib(int n)
{
	return n < 2 ? n : lib_fib(n - 1) + lib_fib(n - 2);
}

int lib_work(int n)
{
	return lib_fib(n);
}

void lib_each(int n, void (*fn)(int))
{
	for (int i = 0; i < n; i++)
		fn(i);
	lib_sink += n;
}
